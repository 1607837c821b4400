/**
 * What `conclave server` needs to run one member, checked all at once: every broken rule is
 * listed in one CONCLAVE_CONFIG_INVALID error.
 */
import type { ConfigProblem } from '../core/config.js';
import {
  AUTO_COMPACTION_OFF, validateAutoCompactionConfig, type AutoCompactionConfig,
} from '../runtime/core/auto-compaction.js';
import { nodeId, type NodeId } from '../core/ids.js';
import { parsePeerAddress, type PeerAddress } from '../adapters/peer-address.js';
import {
  CLIENT_LIMITS_DEFAULTS, validateClientLimits, type ClientLimits,
} from './client-limits.js';

export interface ServerConfig {
  /** This member's name, one of the cluster's. */
  readonly name: NodeId;
  /** Where the write-ahead log lives (created if missing). */
  readonly dataDir: string;
  /** Where peers reach this member. Default host: loopback. */
  readonly peerAddress: PeerAddress;
  /** Where clients reach this member (HTTP). Default host: loopback. */
  readonly clientAddress: PeerAddress;
  /** Every member's peer address, this one included. */
  readonly cluster: ReadonlyMap<NodeId, PeerAddress>;
  /** Every member's client address, when known (lets followers redirect to the leader). */
  readonly clientAddresses: ReadonlyMap<NodeId, PeerAddress>;
  /**
   * Leader heartbeat interval. Unit: ms. Default: 100 (etcd's; about the round trip between
   * members, and well under the election timeout).
   */
  readonly heartbeatMs: number;
  /**
   * Election timeout; each member draws its timeout in [this, 2 × this) as etcd does.
   * Unit: ms. Default: 1000 (etcd's: about 10 × the heartbeat).
   */
  readonly electionTimeoutMs: number;
  /**
   * Allow what is unsafe beyond one machine: a non-loopback peer address without peer TLS, a
   * non-loopback client address without HTTPS, and peers without any authentication (no
   * certificates and no cluster secret). Default: false (docs/security.md).
   */
  readonly insecure: boolean;
  /**
   * Mutual TLS on the peer port (`--peer-cert`, `--peer-key`, `--peer-ca`; etcd's
   * --peer-cert-file, --peer-key-file, --peer-trusted-ca-file): PEM files of this member's
   * certificate (naming it: `conclave certs member NAME`), its key, and the cluster CA. Every
   * member must use TLS when one does. Default: none.
   */
  readonly peerTls?: TlsFiles | undefined;
  /**
   * Without peer TLS: the cluster secret, the same file for every member (`--peer-secret-file`),
   * created with a random secret (mode 0600) when missing. Peers prove they hold it with a
   * mutual HMAC challenge. Default: `DATA_DIR/peer-secret` for a one-member cluster; a cluster of
   * several members must name one (or use TLS, or --insecure).
   */
  readonly peerSecretFile?: string | undefined;
  /**
   * HTTPS on the client port (`--client-cert`, `--client-key`; with `--client-ca`, clients must
   * present a certificate that CA signed). Default: none (plain HTTP, loopback only).
   */
  readonly clientTls?: ClientTlsFiles | undefined;
  /**
   * Cluster name; with the cluster id it is checked in every peer handshake. Default:
   * 'conclave'. Up to 200 characters.
   */
  readonly clusterName: string;
  /**
   * Take a snapshot of the store once this many entries were applied since the last one; the
   * log before it is then dropped, in memory and on disk (`--snapshot-count`, etcd's flag).
   * Unit: entries. Default: 10 000, etcd 3.5's (3.2 to 3.4 used 100 000).
   * Why: a restart replays at most this many entries after the newest snapshot, and a member
   * holds at most this many (plus `snapshotCatchUpEntries`) in memory. Each snapshot encodes
   * the whole store (in steps, off the request path): at etcd's benchmark shape (100 000 keys
   * of 256 bytes) about 30 MB per 10 000 puts of about 4 MB of log. Lower: less memory and
   * faster restarts, more snapshot work; 0 turns snapshots off (the log grows forever).
   */
  readonly snapshotCount: number;
  /**
   * Entries kept in memory below a new snapshot, so a follower only that far behind catches up
   * with appends instead of the whole snapshot (etcd's snapshot catch-up entries).
   * Unit: entries. Default: 1 000. Trade-off: memory against InstallSnapshots after short outages.
   */
  readonly snapshotCatchUpEntries: number;
  /** Automatic history compaction (`--auto-compaction-mode`, `--auto-compaction-retention`). */
  readonly autoCompaction: AutoCompactionConfig;
  /**
   * Makes this cluster's id unique: the id is derived from the cluster name, this token and the
   * member names (src/server/member-identity.ts), written into each member's data dir at its
   * first start and checked at every start and in every peer handshake. Give each cluster its
   * own (`conclave dev` draws a random one), the same on every member and every restart.
   * Default: '' (then two clusters with the same name and member names share an id, and a data
   * dir copied between them is not caught). Up to 255 characters.
   */
  readonly initialClusterToken: string;
  /**
   * `--initial-cluster-state` (etcd's): `new` bootstraps a cluster of `cluster`'s members;
   * `existing` joins a running cluster after `conclave member add` (this member starts as a
   * learner, the others as its voters), with `clusterId` the running cluster's id (from
   * `conclave member add` or `member list`). Default: `new`.
   */
  readonly initialClusterState?: 'new' | 'existing';
  /** `--cluster-id`: the running cluster's id, 16 hex digits; required with `existing`. */
  readonly clusterId?: string | undefined;
  /** What clients may use of this member (client-limits.ts). Default: CLIENT_LIMITS_DEFAULTS. */
  readonly limits?: ClientLimits;
  /**
   * How long a token from `auth-authenticate` is good for (`--auth-token-ttl`, etcd's, in
   * seconds). Unit: ms. Default: 300 000 (5 minutes, etcd's). Why: a token cannot be revoked
   * before it expires except by a password change (auth-gate.ts); clients renew it by logging
   * in again, one scrypt per client per TTL.
   */
  readonly authTokenTtlMs?: number;
}

/** PEM files: a certificate, its private key, and the CA that verifies the other side. */
export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
  readonly caFile: string;
}

export interface ClientTlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
  /** When set, clients must present a certificate signed by this CA. */
  readonly caFile?: string | undefined;
}

/** The file name of the cluster secret in a data dir (one-member clusters' default). */
export const PEER_SECRET_FILE_NAME = 'peer-secret';

export const SERVER_DEFAULTS = Object.freeze({
  heartbeatMs: 100, electionTimeoutMs: 1000, insecure: false, clusterName: 'conclave',
  snapshotCount: 10_000, snapshotCatchUpEntries: 1_000, autoCompaction: AUTO_COMPACTION_OFF,
  initialClusterToken: '',
});

const DURATION_UNITS_MS: Readonly<Record<string, number>> = {
  ms: 1, s: 1000, m: 60_000, h: 3_600_000,
};

/**
 * `--auto-compaction-retention` as etcd reads it: in `revision` mode a count of revisions; in
 * `periodic` mode a duration (`30m`, `1h30m`, `10s`, `500ms`) or a bare number of hours (`1`,
 * `0.5`). `0` is off. Problems go to `problems`.
 */
export function parseRetention(mode: string, text: string, problems: ConfigProblem[]): number {
  const field = '--auto-compaction-retention';
  const trimmed = text.trim();
  if (mode === 'revision') {
    if (/^\d+$/.test(trimmed) && Number.isSafeInteger(Number(trimmed))) return Number(trimmed);
    problems.push({ field, value: text, rule: 'in revision mode, a whole number of revisions' });
    return 0;
  }
  const hourMs = DURATION_UNITS_MS['h'] as number;
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * hourMs);
  const parts = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/.test(trimmed)
    ? [...trimmed.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)] : [];
  if (parts.length === 0) {
    problems.push({ field, value: text,
      rule: 'in periodic mode, a duration (30m, 1h30m, 10s) or a number of hours' });
    return 0;
  }
  const unitMs = (unit: string | undefined): number => DURATION_UNITS_MS[unit ?? ''] ?? 0;
  return Math.round(parts.reduce((sum, [, n, unit]) => sum + Number(n) * unitMs(unit), 0));
}

/** Parses `n1=127.0.0.1:2380,n2=...` into a map; problems go to `problems`. */
export function parseMemberList(text: string, field: string, problems: ConfigProblem[]): Map<NodeId, PeerAddress> {
  const members = new Map<NodeId, PeerAddress>();
  for (const item of text.split(',').map((s) => s.trim()).filter((s) => s.length > 0)) {
    const at = item.indexOf('=');
    if (at <= 0) {
      problems.push({ field, value: item, rule: 'each member is NAME=HOST:PORT' });
      continue;
    }
    const name = item.slice(0, at);
    const address = parsePeerAddress(item.slice(at + 1));
    if ('error' in address) {
      problems.push({ field, value: item, rule: `bad address: ${address.error}` });
      continue;
    }
    if (members.has(nodeId(name))) problems.push({ field, value: name, rule: 'a member is listed twice' });
    members.set(nodeId(name), address);
  }
  if (members.size === 0 && text.trim() !== '') problems.push({ field, value: text, rule: 'no member given' });
  return members;
}

export function validateServerConfig(config: ServerConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [...validateAutoCompactionConfig(config.autoCompaction)];
  if (!config.cluster.has(config.name)) {
    problems.push({ field: 'name,cluster', value: config.name, rule: `--name must be one of the --cluster members (${[...config.cluster.keys()].join(', ')})` });
  }
  if (config.dataDir.trim() === '') problems.push({ field: 'dataDir', value: config.dataDir, rule: 'must be a directory path' });
  if (!(config.heartbeatMs >= 1)) problems.push({ field: 'heartbeatMs', value: config.heartbeatMs, rule: 'must be at least 1 ms' });
  if (!(config.electionTimeoutMs >= 2 * config.heartbeatMs)) {
    problems.push({ field: 'electionTimeoutMs', value: config.electionTimeoutMs, rule: `must be at least 2 × heartbeatMs (${2 * config.heartbeatMs}); about 10 × is usual` });
  }
  if (config.clusterName.length === 0 || config.clusterName.length > 200) {
    problems.push({ field: 'clusterName', value: config.clusterName,
      rule: 'must be 1 to 200 characters' });
  }
  if (config.initialClusterState === 'existing' && !/^[0-9a-f]{16}$/.test(config.clusterId ?? '')) {
    problems.push({ field: 'clusterId', value: config.clusterId, rule: '--initial-cluster-state '
      + 'existing needs --cluster-id: the running cluster\'s id, 16 hex digits (conclave member '
      + 'list prints it)' });
  }
  if (config.initialClusterToken.length > 255) {
    problems.push({ field: 'initialClusterToken', value: config.initialClusterToken,
      rule: 'must be at most 255 characters' });
  }
  problems.push(...securityProblems(config));
  return problems;
}

/** The rules of docs/security.md: who may listen where with which authentication. */
function securityProblems(config: ServerConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (!config.insecure && config.peerTls === undefined && !isLoopback(config.peerAddress.host)) {
    problems.push({ field: 'peerAddress', value: config.peerAddress.host, rule: 'listening for ' +
      'peers beyond loopback needs --peer-cert, --peer-key and --peer-ca (mutual TLS; see ' +
      'docs/security.md), or --insecure' });
  }
  const clientBeyondLoopback = !isLoopback(config.clientAddress.host);
  if (!config.insecure && config.clientTls === undefined && clientBeyondLoopback) {
    problems.push({ field: 'clientAddress', value: config.clientAddress.host, rule: 'listening ' +
      'for clients beyond loopback needs --client-cert and --client-key (HTTPS), or --insecure' });
  }
  const unauthenticated = config.peerTls === undefined && config.peerSecretFile === undefined;
  if (!config.insecure && unauthenticated && config.cluster.size > 1) {
    problems.push({ field: 'peerSecretFile', value: undefined, rule: `a cluster of ${
      config.cluster.size} members without peer certificates needs --peer-secret-file FILE, the ` +
      'same file for every member (created with a random secret when missing), so that peers ' +
      'prove they belong; or --peer-cert/--peer-key/--peer-ca; or --insecure (no peer ' +
      'authentication)' });
  }
  if (config.peerTls !== undefined && config.peerSecretFile !== undefined) {
    problems.push({ field: 'peerSecretFile', value: config.peerSecretFile,
      rule: 'give either peer TLS files or --peer-secret-file, not both' });
  }
  problems.push(...validateClientLimits(limitsOf(config)));
  return problems;
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

/** The member's client limits: its own, or the defaults. */
export function limitsOf(config: ServerConfig): ClientLimits {
  return config.limits ?? CLIENT_LIMITS_DEFAULTS;
}
