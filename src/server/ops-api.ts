/**
 * The operator's routes on the client port, beside the client API (http-api.ts hands them
 * each request first): `GET /health` (health.ts) and `GET /v1/snapshot`, a backup streamed
 * from the leader (backup-stream.ts). Each answers JSON errors in the client API's shape.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ConsistentCore } from '../runtime/core/consistent-core.js';
import { healthOf } from './health.js';

export interface OpsApiOptions {
  readonly core: ConsistentCore;
  /** The alarms raised now (the space quota's NOSPACE). */
  readonly alarms: () => readonly string[];
}

/** A route table: true when the request was one of these routes (and is answered). */
export type OpsRoutes = (req: IncomingMessage, res: ServerResponse) => boolean;

export function createOpsRoutes(options: OpsApiOptions): OpsRoutes {
  return (req, res) => {
    if (req.url !== '/health') return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      sendJson(res, 405, { error: { code: 'CONCLAVE_USAGE', outcome: 'failed',
        message: `/health takes GET, not ${req.method ?? '?'}` } });
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
