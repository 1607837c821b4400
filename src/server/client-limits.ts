/**
 * What one member grants its clients: every allowance a client connection, request, watcher or
 * write can use, each with a bound (DESIGN.md: "a slow or hostile client is cut off, with a
 * documented error, before a member runs short of memory or stalls its event loop"). Each is a
 * `conclave server` flag; docs/api.md ("Limits") lists them with what a client sees at each.
 *
 * These are a member's own policy, applied where requests come in: members with different
 * values never disagree on what the log means (the store's apply-time limits are fixed; see
 * `serverKvConfig`). Give every member the same values all the same, or clients see different
 * limits on different members.
 */
import type { ConfigProblem } from '../core/config.js';

const KIB = 1024;
const MIB = 1024 * KIB;

export interface ClientLimits {
  /**
   * Largest request body (`--max-request-bytes`). A put's key and value, a transaction's ops:
   * all must fit in it, so the largest value is this minus the rest of the body. The Raft
   * entry limit and the peer frame limit are derived from it, so a request at the limit is
   * accepted end to end. Unit: bytes. Default: 1.5 MiB (etcd's default).
   * At the limit: 413 CONCLAVE_REQUEST_INVALID, before the body is read (Content-Length) or
   * as soon as it grows past it (chunked); the connection is closed.
   */
  readonly requestBytesMax: number;
  /**
   * Space quota of the live keys (`--quota-backend-bytes`), counted as
   * `KvStore.keyspaceBytes` (one byte per character of each key and value plus 64 per key; the
   * same on every member at the same applied index). A write that would take the store past
   * it, or any write that adds data while the NOSPACE alarm is on (the store has no room left
   * for one more request of the largest size: keyspace + requestBytesMax > quota), is refused
   * with 507 CONCLAVE_QUOTA_EXCEEDED, outcome failed. Deletes, revokes and compactions are
   * always accepted; the alarm clears as soon as deletes make room. Unit: bytes.
   * Default: 256 MiB. Why: the store lives in memory and its snapshot is one JSON text (V8
   * caps a string near 512 MiB); 256 MiB of data with its history and snapshot fits a 1 GiB
   * machine. etcd's 2 GiB default is for a disk-backed store.
   */
  readonly quotaBytes: number;
  /**
   * Client connections open at once, watch streams and keep-alive streams included
   * (`--max-connections`). Past it a new connection is answered 503 CONCLAVE_LIMIT_EXCEEDED
   * and closed. Unit: connections. Default: 10 000. Why: measured, an idle connection costs
   * about 8 KiB of the member's memory and one with a watch stream about 13 KiB, so 10 000
   * take about 130 MiB; a consistent core serves a few hundred clients with a handful of
   * connections each. (The kernel's socket buffers come on top: net.ipv4.tcp_mem bounds them.)
   */
  readonly connectionsMax: number;
  /**
   * Request body bytes held by this member at once, over all connections
   * (`--max-inflight-body-bytes`): counted from the first byte read until the request is
   * answered. Past it the request is answered 503 CONCLAVE_LIMIT_EXCEEDED and its connection
   * closed. Unit: bytes. Default: 64 MiB. Why: room for 42 requests of the largest size at
   * once; 300 slow senders of 1.4 MB each held 500 MB before this bound (issue #14).
   */
  readonly inflightBodyBytesMax: number;
  /**
   * Request body bytes one connection may hold at once, pipelined requests included
   * (`--max-connection-body-bytes`). Past it: 429 CONCLAVE_LIMIT_EXCEEDED, connection closed.
   * Unit: bytes. Default: 2 × requestBytesMax. Must be at least requestBytesMax.
   */
  readonly connectionBodyBytesMax: number;
  /**
   * A request body must arrive whole within this time after its headers
   * (`--body-timeout-ms`). Past it: 408 CONCLAVE_TIMEOUT (outcome failed: nothing was
   * proposed), connection closed. Unit: ms. Default: 30 000. Why: a largest body at 1 Mbit/s
   * takes 13 s; a sender slower than that is holding memory, not sending.
   */
  readonly bodyTimeoutMs: number;
  /**
   * A request's headers must arrive whole within this time after the connection opened or the
   * previous request ended (`--header-timeout-ms`). Past it the connection gets 408
   * CONCLAVE_TIMEOUT and is closed. Unit: ms. Default: 10 000 (Node checks every second).
   */
  readonly headerTimeoutMs: number;
  /**
   * An idle keep-alive connection (no request under way) is closed after this
   * (`--idle-timeout-ms`). Watch streams are not idle. Unit: ms. Default: 5000 (Node's; the
   * client library's connection pool keeps connections for 4 s, so it closes them first).
   */
  readonly idleTimeoutMs: number;
  /**
   * Watch streams open at once on this member (`--max-watchers`). Past it: 503
   * CONCLAVE_LIMIT_EXCEEDED. Unit: watchers. Default: 10 000 (the connection limit: each HTTP
   * watch is one connection).
   */
  readonly watchersMax: number;
  /**
   * Watch streams one connection may open (`--max-connection-watchers`): HTTP/1.1 serves one
   * at a time, but pipelined watch requests each make one, queued behind the first. Past it:
   * 429 CONCLAVE_LIMIT_EXCEEDED. Unit: watchers. Default: 100 (the minimum of concurrent
   * streams HTTP/2 recommends, RFC 9113 §6.5.2, for when watches share a connection).
   */
  readonly connectionWatchersMax: number;
  /**
   * Bytes queued for one watcher and not yet taken by its connection (`--max-watcher-buffer-
   * bytes`). A watcher that is live (caught up) and passes it is canceled: its stream ends with
   * `{"kind":"canceled","reason":"slow","nextRevision":R}` after the events already queued, and
   * the client resumes from R (the client library does). A watcher catching up from the history
   * never passes it: it takes the next events only when it has read half of it. Unit: bytes.
   * Default: 4 MiB. Why: at least one event of the largest size (a value and its prevKv) always
   * goes out; a reader that falls this far behind, past the kernel's socket buffers, is not
   * reading. Event bytes are shared by every watcher they go to (encoded once), so this bounds
   * each watcher's share, and `watchBufferBytesMax` the memory of all.
   */
  readonly watcherBufferBytesMax: number;
  /**
   * Bytes queued for all watchers together, each event's encoding counted once however many
   * watchers it is queued for (`--max-watch-buffer-bytes`). Past it the watchers with the most
   * queued are canceled `slow` until the total is back under it. Unit: bytes. Default: 64 MiB.
   */
  readonly watchBufferBytesMax: number;
}

export const CLIENT_LIMITS_DEFAULTS: ClientLimits = Object.freeze({
  requestBytesMax: 1.5 * MIB,
  quotaBytes: 256 * MIB,
  connectionsMax: 10_000,
  inflightBodyBytesMax: 64 * MIB,
  connectionBodyBytesMax: 3 * MIB,
  bodyTimeoutMs: 30_000,
  headerTimeoutMs: 10_000,
  idleTimeoutMs: 5000,
  watchersMax: 10_000,
  connectionWatchersMax: 100,
  watcherBufferBytesMax: 4 * MIB,
  watchBufferBytesMax: 64 * MIB,
});

/**
 * The largest `requestBytesMax` accepted (32 MiB): the peer frame limit, derived from it,
 * must stay under the transport's 64 MiB ceiling, and the store's apply-time limits are set
 * to it on every member (`serverKvConfig`).
 */
export const REQUEST_BYTES_CEILING = 32 * MIB;

/**
 * How much a command's encoding may exceed the request body it came from: the kind and the
 * leader's time stamped in, numbers written out longer than sent (`1e15`). Unit: bytes.
 */
export const COMMAND_ENCODING_SLACK_BYTES = 8 * KIB;

const SMALLEST_REQUEST_BYTES = 4 * KIB;

/** Every rule `limits` breaks, all at once. */
export function validateClientLimits(limits: ClientLimits): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const [field, value] of Object.entries(limits)) {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
      problems.push({ field, value, rule: 'must be an integer >= 1' });
    }
  }
  if (problems.length > 0) return problems;
  const { requestBytesMax, quotaBytes, connectionBodyBytesMax, inflightBodyBytesMax } = limits;
  if (requestBytesMax < SMALLEST_REQUEST_BYTES || requestBytesMax > REQUEST_BYTES_CEILING) {
    problems.push({ field: 'requestBytesMax', value: requestBytesMax,
      rule: `must be from ${SMALLEST_REQUEST_BYTES} to ${REQUEST_BYTES_CEILING} bytes` });
  }
  if (quotaBytes <= requestBytesMax) {
    problems.push({ field: 'quotaBytes', value: quotaBytes, rule: `must exceed requestBytesMax `
      + `(${requestBytesMax}): the NOSPACE alarm is on while the quota has no room for one `
      + 'request of the largest size' });
  }
  if (connectionBodyBytesMax < requestBytesMax) {
    problems.push({ field: 'connectionBodyBytesMax', value: connectionBodyBytesMax,
      rule: `must be at least requestBytesMax (${requestBytesMax})` });
  }
  if (inflightBodyBytesMax < requestBytesMax) {
    problems.push({ field: 'inflightBodyBytesMax', value: inflightBodyBytesMax,
      rule: `must be at least requestBytesMax (${requestBytesMax})` });
  }
  return problems;
}
