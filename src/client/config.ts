/**
 * The client's configuration: where the cluster answers, how long one attempt may take, how
 * long a call keeps retrying, and how many writes it keeps in flight.
 */
import type { ConfigProblem } from '../core/config.js';
import { parseEndpoint } from './endpoints.js';

/**
 * TLS towards the members (HTTPS for requests and watches, wss for the keep-alive stream).
 * PEM text or bytes, as node:tls takes them; the CLI reads them from `--cacert`, `--cert`,
 * `--key`. With `tls` set, an endpoint without a scheme is `https://`.
 */
export interface ClientTlsOptions {
  /**
   * The certificate authorities the members' certificates must chain to. Default: Node's
   * bundled public CAs (so a self-signed cluster needs its CA here).
   */
  readonly ca?: string | Uint8Array | readonly (string | Uint8Array)[];
  /** This client's certificate, for members that require one (mutual TLS). With `key`. */
  readonly cert?: string | Uint8Array;
  /** The private key of `cert`. */
  readonly key?: string | Uint8Array;
  /**
   * The name the members' certificates must carry, when it is not the endpoint's host (an
   * endpoint given by IP address, say). Default: the endpoint's host.
   */
  readonly servername?: string;
}

export interface ClientConfig {
  /**
   * Where members answer clients: `host:port`, `http://host:port` or `https://host:port`, at
   * least one. List every member: the client finds the leader itself (following redirects)
   * and moves to another endpoint when one fails, so a list of all members survives any
   * minority being down. (A client built on another transport, as in the simulator, takes
   * that transport's endpoints: member ids there.)
   */
  readonly endpoints: readonly string[];
  /** HTTPS and wss towards the members. Default: none (plain HTTP unless an https:// URL). */
  readonly tls?: ClientTlsOptions;
  /**
   * Longest wait for one HTTP attempt (connect, send, answer). Unit: ms. Default: 5000.
   * Why: far above a commit on a healthy cluster (a round trip plus an fsync: milliseconds)
   * yet short enough to move on from a member that hangs. An attempt that times out after
   * sending has an unknown outcome; a write is then retried with the same idempotency key.
   */
  readonly requestTimeoutMs: number;
  /**
   * How long one call keeps retrying (on another endpoint, after a back-off) before it rejects:
   * no attempt starts after it, so a call settles within retryDeadlineMs + requestTimeoutMs.
   * Unit: ms. Default: 15 000. Why: covers a leader failover (an election timeout of about a
   * second plus a few rounds of pre-vote and vote) several times over. Must stay far below the
   * server's `clientIdleMsMax` (1 hour), or a late retry could find its record forgotten.
   */
  readonly retryDeadlineMs: number;
  /**
   * Back-off before the first retry round; it doubles each round through the endpoints up to
   * `backoffMsMax`, and each pause is drawn uniformly below it ("full jitter", so clients that
   * failed together do not retry together). Unit: ms. Default: 25.
   */
  readonly backoffMsMin: number;
  /**
   * Longest back-off between two attempts. Unit: ms. Default: 1000. Why: about an election
   * timeout: waiting longer only delays noticing the new leader.
   */
  readonly backoffMsMax: number;
  /**
   * Writes (and linearizable reads, which pass a barrier through the log) in flight at once.
   * Each uses its own sub-client id `${clientId}.${lane}` because the server's idempotent
   * receiver allows one request in flight per client id; more wait in a queue. Unit: requests.
   * Default: 16. Trade-off: every lane the client uses costs one record on the server (kept
   * for an hour, at most `clientsMax` = 10 000 records in all).
   */
  readonly writesInflightMax: number;
  /**
   * Redirects followed within one attempt (a follower answers 307 to the leader). Unit: hops.
   * Default: 3. Why: one hop finds the leader; more mean members disagree during an election,
   * better handled by a pause and a retry.
   */
  readonly redirectsMax: number;
  /**
   * A watch stream silent for this long is presumed dead (a network partition leaves no FIN)
   * and is reopened, resuming where it stopped. Unit: ms. Default: 60 000. 0 turns it off.
   * Trade-off: shorter finds a silent partition sooner, but costs a reconnection per quiet
   * period unless the server sends progress messages more often than this.
   */
  readonly watchIdleMsMax: number;
  /**
   * ρ: the largest rate error of this machine's monotonic clock and of the servers' (as the
   * servers' Raft `clockRateErrorMax`). A lease's local deadline is TTL × (1 − ρ)/(1 + ρ)
   * after the acknowledged keep-alive was sent, so that it passes before any server could end
   * the lease. Unit: ratio, in [0, 0.2]. Default: 0.01 (1%: far above quartz drift, to cover
   * VM scheduling and NTP slewing; the servers' default too).
   */
  readonly clockRateErrorMax: number;
  /**
   * Taken off every lease's local deadline: the lease's `signal` aborts this much earlier.
   * Covers the time between the abort and your code noticing it (a busy event loop fires
   * timers late, never early). Elections and locks also use it as their stall threshold: an
   * event-loop stall longer than this ends the leadership. Unit: ms. Default: 500. Why: Node
   * event loops on loaded machines run timers a few hundred ms late (GC, CPU contention: 340 ms
   * was seen on our 2-core CI under load), and a smaller margin turns those into lost
   * leaderships; 500 ms costs 5% of the default 10 s TTL. Trade-off: larger leaves less of the
   * TTL to use; raise it for processes with long GC pauses.
   */
  readonly leaseMarginMs: number;
  /**
   * This client's session id (sub-client ids are derived from it). Default: `c-` and a random
   * UUID. Set it only to make logs readable: two live clients must never share one.
   * 1 to 100 printable ASCII characters (the server allows 128 bytes; lanes add a suffix).
   */
  readonly clientId?: string;
}

/** Everything but the endpoints has a default. */
export type ConnectOptions = Pick<ClientConfig, 'endpoints'> &
  Partial<Omit<ClientConfig, 'endpoints'>>;

/** Says what is wrong with one endpoint's text, or undefined when it is fine. */
export type EndpointCheck = (text: string) => string | undefined;

export const CLIENT_DEFAULTS = Object.freeze({
  requestTimeoutMs: 5000,
  retryDeadlineMs: 15_000,
  backoffMsMin: 25,
  backoffMsMax: 1000,
  writesInflightMax: 16,
  redirectsMax: 3,
  watchIdleMsMax: 60_000,
  clockRateErrorMax: 0.01,
  leaseMarginMs: 500,
}) satisfies Omit<ClientConfig, 'endpoints' | 'clientId'>;

/** Longest `clientId`: the server's 128-byte limit minus room for the lane suffix. */
export const CLIENT_ID_LENGTH_MAX = 100;

/**
 * Every rule `config` breaks; empty when it is valid. Endpoints are checked as HTTP endpoints
 * (what `connect()` needs) unless `checkEndpoint` says otherwise.
 */
export function validateClientConfig(config: ClientConfig,
  checkEndpoint: EndpointCheck = httpEndpointCheck(config)): readonly ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (!Array.isArray(config.endpoints) || config.endpoints.length === 0) {
    problems.push({ field: 'endpoints', value: config.endpoints,
      rule: 'must list at least one endpoint (host:port or http://host:port)' });
  } else {
    for (const [i, text] of config.endpoints.entries()) {
      const problem = checkEndpoint(text);
      if (problem === undefined) continue;
      problems.push({ field: `endpoints[${i}]`, value: text, rule: problem });
    }
  }
  problems.push(...tlsProblems(config.tls));
  const positive: readonly (keyof typeof CLIENT_DEFAULTS)[] = [
    'requestTimeoutMs', 'retryDeadlineMs', 'backoffMsMin', 'backoffMsMax', 'writesInflightMax',
  ];
  for (const field of positive) {
    const value = config[field];
    if (!Number.isSafeInteger(value) || value < 1) {
      problems.push({ field, value, rule: 'must be an integer >= 1' });
    }
  }
  const rho = config.clockRateErrorMax;
  if (typeof rho !== 'number' || !(rho >= 0 && rho <= 0.2)) {
    problems.push({ field: 'clockRateErrorMax', value: rho, rule: 'must be a ratio in [0, 0.2]' });
  }
  for (const field of ['redirectsMax', 'watchIdleMsMax', 'leaseMarginMs'] as const) {
    const value = config[field];
    if (!Number.isSafeInteger(value) || value < 0) {
      problems.push({ field, value, rule: 'must be an integer >= 0' });
    }
  }
  if (config.backoffMsMax < config.backoffMsMin) {
    problems.push({ field: 'backoffMsMin,backoffMsMax',
      value: { backoffMsMin: config.backoffMsMin, backoffMsMax: config.backoffMsMax },
      rule: 'backoffMsMax must be at least backoffMsMin' });
  }
  const id = config.clientId;
  if (id !== undefined && (typeof id !== 'string' || !/^[\x21-\x7e]+$/.test(id)
    || id.length > CLIENT_ID_LENGTH_MAX)) {
    problems.push({ field: 'clientId', value: id,
      rule: `must be 1 to ${CLIENT_ID_LENGTH_MAX} printable ASCII characters, no spaces` });
  }
  return problems;
}

/** The HTTP endpoint rules (parseEndpoint), with `https://` implied when `tls` is set. */
export function httpEndpointCheck(config: Pick<ClientConfig, 'tls'>): EndpointCheck {
  const tls = config.tls !== undefined;
  return (text) => {
    const parsed = parseEndpoint(text, { tls });
    return 'problem' in parsed ? parsed.problem : undefined;
  };
}

function tlsProblems(tls: ClientTlsOptions | undefined): ConfigProblem[] {
  if (tls === undefined) return [];
  if (typeof tls !== 'object' || tls === null) {
    return [{ field: 'tls', value: tls,
      rule: 'must be an object { ca?, cert?, key?, servername? }' }];
  }
  const problems: ConfigProblem[] = [];
  const problem = (field: string, value: unknown, rule: string): void => {
    problems.push({ field, value, rule });
  };
  const pem = (v: unknown): boolean => typeof v === 'string' || v instanceof Uint8Array;
  const { ca, cert, key, servername } = tls;
  if (ca !== undefined && !pem(ca) && !(Array.isArray(ca) && ca.length > 0 && ca.every(pem))) {
    problem('tls.ca', typeof ca, 'must be PEM text or bytes, or a list of them');
  }
  for (const [field, value] of [['tls.cert', cert], ['tls.key', key]] as const) {
    if (value === undefined || pem(value)) continue;
    problem(field, typeof value, 'must be PEM text or bytes');
  }
  if ((cert === undefined) !== (key === undefined)) {
    problem('tls.cert,tls.key', { cert: cert !== undefined, key: key !== undefined },
      'a client certificate needs its key, and a key its certificate: give both or neither');
  }
  if (servername !== undefined && (typeof servername !== 'string' || servername === '')) {
    problem('tls.servername', servername, 'must be a non-empty host name');
  }
  return problems;
}
