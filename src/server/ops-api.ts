/**
 * The operator's routes on the client port, beside the client API (http-api.ts hands them
 * each request first): `GET /health` (health.ts) and `GET /v1/snapshot`, a backup streamed
 * from the leader (backup-stream.ts). Each answers JSON errors in the client API's shape.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NodeId } from '../core/ids.js';
import type { CoordError } from '../errors.js';
import type { ConsistentCore } from '../runtime/core/consistent-core.js';
import { BackupStreams } from './backup-stream.js';
import { healthOf } from './health.js';
import {
  MEMBERSHIP_PATHS, MembershipApi, type MembershipApiOptions,
} from './membership-api.js';

export interface OpsApiOptions extends MembershipApiOptions {
  readonly core: ConsistentCore;
  /** The alarms raised now (the space quota's NOSPACE). */
  readonly alarms: () => readonly string[];
  /** This member's cluster id (from its data dir), written into backups. */
  readonly clusterId: string;
  readonly clientUrlOf: (id: NodeId) => string | undefined;
  /**
   * While auth is on, why this request may not use the operator's routes (they need the role
   * root: a backup holds every password hash); undefined when it may. `/health` is open.
   */
  readonly rootRefusal?: (req: IncomingMessage) => CoordError | undefined;
}

/** A route table: true when the request was one of these routes (and is answered). */
export type OpsRoutes = (req: IncomingMessage, res: ServerResponse) => boolean;

const OPS_PATHS: ReadonlySet<string> = new Set(['/health', '/v1/snapshot']);

export function createOpsRoutes(options: OpsApiOptions): OpsRoutes {
  const backups = new BackupStreams(options, sendJson);
  const membership = new MembershipApi(options, sendJson);
  return (req, res) => {
    const ours = req.url !== undefined && (MEMBERSHIP_PATHS.has(req.url)
      || req.url === '/v1/snapshot');
    const refusal = ours ? options.rootRefusal?.(req) : undefined;
    if (refusal !== undefined) {
      sendJson(res, refusal.code === 'CONCLAVE_PERMISSION_DENIED' ? 403 : 401,
        { error: { code: refusal.code, message: refusal.message, outcome: 'failed' } });
      return true;
    }
    if (req.url !== undefined && MEMBERSHIP_PATHS.has(req.url)) {
      membership.serve(req, res, req.url);
      return true;
    }
    if (req.url === undefined || !OPS_PATHS.has(req.url)) return false;
    if (req.method !== 'GET') {
      res.setHeader('allow', 'GET');
      sendJson(res, 405, { error: { code: 'CONCLAVE_USAGE', outcome: 'failed',
        message: `${req.url} takes GET, not ${req.method ?? '?'}` } });
      return true;
    }
    if (req.url === '/v1/snapshot') {
      backups.serve(req, res);
      return true;
    }
    const health = healthOf({ stopped: options.core.runtime.isStopped,
      status: options.core.status(), alarms: options.alarms() });
    sendJson(res, health.health === 'true' ? 200 : 503, health);
    return true;
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent || res.writableEnded) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store',
    'content-length': Buffer.byteLength(text) });
  res.end(text);
}
