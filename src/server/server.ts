/**
 * One member of a Conclave consistent core as a running process: the write-ahead log in its
 * data directory, Raft over TCP to its peers, and the HTTP client API. `startServer` opens the
 * data dir and the log first (a refusal comes before any listener), then listens for peers and
 * clients, and returns once both listeners are up; when it throws, nothing is left open. `stop`
 * closes them and stops Raft (transferring leadership first when the Raft core supports it, so
 * a planned restart costs no election timeout). A fatal error while running (the disk failed:
 * ENOSPC, EIO) closes the listeners at once, then calls `hooks.onFatal`.
 */
import {
  createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse,
} from 'node:http';
import type { Duplex } from 'node:stream';
import { createServer as createHttpsServer } from 'node:https';
import { formatPeerAddress, type PeerAddress } from '../adapters/peer-address.js';
import { SystemClock } from '../adapters/system-clock.js';
import { SystemRandom } from '../adapters/system-random.js';
import { TcpTransport } from '../adapters/tcp-transport.js';
import { formatConfigProblems } from '../core/config.js';
import type { NodeId } from '../core/ids.js';
import { KV_STORE_DEFAULTS, type KvStoreConfig } from '../core/kv/index.js';
import {
  clientUrlOfMember, ENTRY_OVERHEAD_BYTES, RAFT_DEFAULTS_LAN, type Membership, type RaftTuning,
} from '../core/raft/index.js';
import { ConfigInvalidError, CoordError } from '../errors.js';
import type { Logger } from '../ports/logger.js';
import { LEASE_DEFAULTS } from '../runtime/lease/index.js';
import { ConsistentCore } from '../runtime/core/consistent-core.js';
import { RejectionLog } from '../runtime/raft/rejection-log.js';
import { RAFT_RUNTIME_DEFAULTS } from '../runtime/raft/index.js';
import {
  clientUrlsOf, eventFeedOf, servedKeepAlives, startEventFeedTimers, timedRequests,
} from './event-feed-wiring.js';
import type { EventFeed } from './event-feed.js';
import { ClientGuard } from './client-guard.js';
import { leaderlessAnswer } from './request-verdicts.js';
import { learningPeerAddresses, LoggedPeerAddresses } from './logged-peer-addresses.js';
import {
  ClientUrlPublisher, PEER_MESSAGE_VALIDATOR, publishableClientUrl, raftPeerTransport,
  type PeerMessage,
} from './client-url-publisher.js';
import {
  COMMAND_ENCODING_SLACK_BYTES, REQUEST_BYTES_CEILING, type ClientLimits,
} from './client-limits.js';
import { createHttpApi, GET_PATHS, POST_PATHS } from './http-api.js';
import { ClientStreamHub } from './client-stream.js';
import { LeaseStreamHub } from './lease-stream.js';
import { AUTH_TOKEN_TTL_MS_DEFAULT, AuthGate, rootRefusal } from './auth-gate.js';
import { openMemberData } from './member-data.js';
import { createOpsRoutes } from './ops-api.js';
import { ServerMetrics } from './metrics.js';
import { directorySizeBytes } from './data-size.js';
import { CONCLAVE_VERSION } from '../core/version.js';
import { clientTlsOptionsOf, peerAuthenticationOf } from './peer-credentials.js';
import { measurePeerRoundTrips } from './peer-rtt.js';
import { limitsOf, validateServerConfig, type ServerConfig } from './server-config.js';
import { SpaceQuota } from './space-quota.js';
import { WatchHub } from './watch-hub.js';

/**
 * Peer frames must hold the largest append: bytesPerMessageMax of entries (one entry of the
 * largest request, at least) plus framing. Unit: bytes. At least 4 MiB.
 */
function peerFrameBytesMax(limits: ClientLimits): number {
  return Math.max(4 * 1024 * 1024, raftEntryBytesMax(limits) + 1024 * 1024);
}

/**
 * The largest Raft entry: a command encoded from a request at `--max-request-bytes` (issue
 * #14: a 1 MiB value was refused as "entry too large" while docs promised 1.5 MiB). Unit: bytes.
 */
function raftEntryBytesMax(limits: ClientLimits): number {
  return limits.requestBytesMax + COMMAND_ENCODING_SLACK_BYTES + ENTRY_OVERHEAD_BYTES;
}

/**
 * The store's config on every server: its apply-time size limits at the ceiling of
 * `--max-request-bytes`, the same on every member whatever its flags, so that members with
 * different flags never disagree on what an entry does. Each member enforces its own
 * `--max-request-bytes` where requests come in.
 */
export const SERVER_KV_CONFIG: KvStoreConfig = Object.freeze({
  ...KV_STORE_DEFAULTS,
  valueBytesMax: REQUEST_BYTES_CEILING,
  commandBytesMax: REQUEST_BYTES_CEILING + COMMAND_ENCODING_SLACK_BYTES,
});

/** How often quiet watch streams hear the current revision. Unit: ms. */
const WATCH_PROGRESS_INTERVAL_MS = 10_000;

/**
 * Something served beside the client API on the same port (the dashboard, src/dashboard): it
 * gets this member's event feed and store, and the first look at each request and upgrade.
 */
export interface ServerAddOnContext {
  readonly core: ConsistentCore;
  readonly feed: EventFeed;
  readonly config: ServerConfig;
  /** Every member's client URL (this one's included). */
  readonly clientUrls: ReadonlyMap<string, string>;
  /** TLS material to reach the other members' client ports (their CA, this member's cert). */
  readonly peerClientTls: { ca?: string | Buffer; cert?: string | Buffer; key?: string | Buffer }
    | undefined;
  readonly logger: Logger;
}

export interface ServerAddOn {
  /** True when it answered the request (the API does not see it). */
  handleRequest(req: IncomingMessage, res: ServerResponse): boolean;
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  close(): void;
}

export interface RunningServer {
  readonly id: NodeId;
  readonly clientUrl: string;
  readonly peerAddress: PeerAddress;
  readonly core: ConsistentCore;
  /**
   * Stops the member. `handOver` (default true): a leader first hands its leadership to a
   * caught-up follower, so clients see no election timeout; false when the whole cluster is
   * stopping (`conclave dev`), where a hand-over to members that are stopping too only waits.
   */
  stop(options?: { readonly handOver?: boolean }): Promise<void>;
}

export interface ServerHooks {
  /**
   * Something served beside the client API on the same port (`conclave server` gives it the
   * dashboard, `dashboardAddOn`). Default: none.
   */
  readonly addOn?: (context: ServerAddOnContext) => ServerAddOn;
  /**
   * Called once when the member stops on a fatal error while running (a storage failure such
   * as ENOSPC or EIO: it cannot know what reached the disk), after its listeners are closed.
   * `conclave server` exits non-zero, so a supervisor restarts it or alerts.
   */
  readonly onFatal?: (error: Error) => void;
}

export async function startServer(config: ServerConfig, logger: Logger,
  hooks: ServerHooks = {}): Promise<RunningServer> {
  const problems = validateServerConfig(config);
  if (problems.length > 0) throw new ConfigInvalidError(formatConfigProblems(problems));
  const limits = limitsOf(config);
  const clock = new SystemClock();
  const random = new SystemRandom();
  const metrics = new ServerMetrics();
  const startedAtMs = performance.now();
  // The data dir and the log first: a refused one (foreign, damaged, lost records, out of
  // reach) costs no listener, and its reason comes before that of the secret it may hold.
  const data = await openMemberData({
    dataDir: config.dataDir, name: config.name, clusterName: config.clusterName,
    initialClusterToken: config.initialClusterToken, members: [...config.cluster.keys()],
    insecure: config.insecure,
    clusterId: config.initialClusterState === 'existing' ? config.clusterId : undefined,
  });
  // Then every credential, before anything listens: a bad file stops the start, clearly.
  const { authentication, clientTls } = closingOnThrow(() => ({
    authentication: peerAuthenticationOf(config), clientTls: clientTlsOptionsOf(config),
  }), () => void data.close());
  if (authentication.kind === 'none' && config.cluster.size > 1) {
    logger.warn({}, 'peer authentication is off (--insecure): anyone who can reach the peer ' +
      'port can join this cluster and forge messages (docs/security.md)');
  }
  for (const repair of data.repairs) {
    logger.warn({ file: repair.file, offsetBytes: repair.offsetBytes, reason: repair.reason },
      `wal repaired: ${repair.action}`);
  }
  const { clusterId } = data.identity;
  // The start's first milestone (startup-timeline.ts has the others): until startServer ran,
  // Node's start and module loading; then the data dir (identity, WAL and snapshot file read).
  const walOpenedAtMs = performance.now();
  logger.info({ atMs: Math.round(walOpenedAtMs), moduleLoadMs: Math.round(startedAtMs),
    ms: Math.round(walOpenedAtMs - startedAtMs), entries: data.wal.recovered.entries.length,
    snapshotIndex: data.wal.recovered.snapshot?.meta.index ?? 0 }, 'wal opened');
  if (data.bootstrapped) logger.info({ clusterId, dataDir: data.directory }, 'new member');
  const transport = await TcpTransport.listen<PeerMessage>({
    localId: config.name,
    listen: { host: config.peerAddress.host, port: config.peerAddress.port },
    peers: new Map([...config.cluster].filter(([id]) => id !== config.name)),
    // Raft's messages, and the client URLs members send their leader (client-url-publisher.ts).
    validate: PEER_MESSAGE_VALIDATOR,
    random,
    // Peers of another cluster (another id) are refused in the handshake.
    config: { clusterName: `${config.clusterName}/${clusterId}`,
      frameBytesMax: peerFrameBytesMax(limits) },
    logger: logger.child({ component: 'peer-transport' }),
    authentication,
  }).catch(async (error: unknown) => {
    await data.close();
    throw error;
  });
  let watches: WatchHub | undefined;
  let feed: EventFeed | undefined;
  let leaseStreams: LeaseStreamHub | undefined;
  // Rejected peer messages: counted in /metrics, logged at most a few lines a second.
  const rejections = new RejectionLog({ clock, timer: clock,
    logger: logger.child({ component: 'raft' }) });
  const joining = config.initialClusterState === 'existing';
  // Added members' addresses come from the log and snapshots (logged-peer-addresses.ts).
  const addresses = new LoggedPeerAddresses(config.name, transport,
    logger.child({ component: 'peer-transport' }));
  let membershipOf = (): Membership | undefined => undefined;
  let publisher: ClientUrlPublisher | undefined;
  const raftTransport = raftPeerTransport(transport,
    (from, url) => publisher?.onClientUrl(from, url));
  const core = closingOnThrow(() => ConsistentCore.open({
    id: config.name,
    // Joining a running cluster: a learner until promoted (the log's config entries rule).
    voters: joining ? [...config.cluster.keys()].filter((id) => id !== config.name)
      : [...config.cluster.keys()],
    raft: { ...raftTuning(config), ...(joining ? { learners: [config.name] } : {}) },
    kv: SERVER_KV_CONFIG,
    // A checkpoint takes a commit round: never more often than heartbeats.
    // Keep-alives arriving a few at a time share one heartbeat round (docs/leases.md, rule 1).
    lease: { ...LEASE_DEFAULTS, checkpointIntervalMs: Math.max(LEASE_DEFAULTS.checkpointIntervalMs,
      config.heartbeatMs), keepAliveLingerMs: config.heartbeatMs },
    raftRuntime: { ...RAFT_RUNTIME_DEFAULTS, snapshotEntries: config.snapshotCount,
      snapshotCatchUpEntries: config.snapshotCatchUpEntries },
    autoCompaction: config.autoCompaction,
  }, {
    clock, timer: clock, random, logger: logger.child({ component: 'raft' }),
    transport: measurePeerRoundTrips(learningPeerAddresses(raftTransport, addresses,
      () => membershipOf()), clock, (peer, ms) => {
      metrics.peerRoundTrip.observe(ms / 1000);
      feed?.onPeerRoundTrip(peer, ms);
    }),
    // Opened before any listener (member-data.ts), with its snapshots in <data-dir>/snap.
    storage: data.walStorage, wal: data.wal,
    onSnapshot: (event) => metrics.countSnapshot(event.kind, event.sizeBytes),
    onApplied: () => watches?.notify(),
    onRaftEvent: (event) => {
      if (event.kind === 'message-rejected') {
        metrics.countRejected(event.reason, event.count);
        rejections.note(event);
        return;
      }
      // Rejected peer messages stay out of the dashboard's event ring (a hostile peer could
      // flood it); they are counted in /metrics and logged rate-limited.
      feed?.onRaftEvent(event);
      // Keep-alive streams live on the leader: a deposed one sends its clients on.
      if (event.kind === 'role-changed') metrics.countRoleChange(event.to);
      if (event.kind === 'role-changed' && event.from === 'leader') {
        leaseStreams?.closeAll('not the leader any more');
      }
      // An election starts at the pre-vote (or at the vote when pre-vote is off), once.
      if (event.kind === 'role-changed' && (event.to === 'pre-candidate' ||
        (event.to === 'candidate' && event.from !== 'pre-candidate'))) {
        metrics.countElection(event.reason);
      }
    },
    onWalSync: (ms) => {
      metrics.walSync.observe(ms / 1000);
      feed?.onWalSync(ms);
    },
    onProposal: (outcome) => metrics.countProposal(outcome),
    // Fires from a storage callback, so after everything below up to `listen` is set up.
    onFatal: (error) => void closeListeners().finally(() => {
      hooks.onFatal?.(error);
      void data.close();
    }),
  }), () => {
    transport.close();
    void data.close();
  });
  membershipOf = () => core.runtime.node.membership();
  addresses.sync(core.runtime.node.membership());
  watches = new WatchHub(core.store, limits);
  const guard = new ClientGuard(limits);
  const quota = new SpaceQuota(core.store, limits.quotaBytes, limits.requestBytesMax);
  // Quiet watch streams get a progress line every 10 s, so clients can tell silence from a dead link.
  const progressTimer = setInterval(() => watches?.progressAll(), WATCH_PROGRESS_INTERVAL_MS);
  progressTimer.unref();
  // Every member serves clients the same way: TLS on one means TLS on all.
  const scheme = clientTls === undefined ? 'http' : 'https';
  const selfClientUrl = `${scheme}://${formatPeerAddress(config.clientAddress)}`;
  // A member's own URL as it published it (the log's) wins over the flag, which may predate it.
  const clientUrlOf = (id: NodeId): string | undefined => {
    if (id === config.name) return selfClientUrl;
    const published = clientUrlOfMember(core.runtime.node.membership(), id);
    if (published !== undefined) return published;
    const address = config.clientAddresses.get(id);
    return address === undefined ? undefined : `${scheme}://${formatPeerAddress(address)}`;
  };
  publisher = new ClientUrlPublisher({ selfId: config.name, core: {
    status: () => core.status(),
    changeMembership: (change, done) => core.runtime.changeMembership(change, done),
  }, clientUrl: publishableClientUrl(scheme, config.clientAddress.host,
    formatPeerAddress(config.clientAddress)), send: (to, message) => transport.send(to, message),
  clock, intervalMs: Math.max(200, 4 * config.heartbeatMs),
  logger: logger.child({ component: 'membership' }) });
  // Started once clients can be served at the URL (below).
  let publishTimer: ReturnType<typeof setInterval> | undefined;
  feed = eventFeedOf(core, clock, random, config.heartbeatMs);
  const feedTimers = startEventFeedTimers(feed);
  const keepAlives = timedKeepAlives(servedKeepAlives(core, feed, clock), clock, metrics);
  // One judge of "no leader" for every path (request-verdicts.ts).
  const leaderless = leaderlessAnswer(core, 2 * config.electionTimeoutMs);
  const auth = new AuthGate(() => core.store.auth, () => clock.wallMs(),
    config.authTokenTtlMs ?? AUTH_TOKEN_TTL_MS_DEFAULT);
  leaseStreams = new LeaseStreamHub({ core: keepAlives, clientUrlOf, leaderless,
    logger: logger.child({ component: 'lease-stream' }), auth: { gate: auth, store: core.store } });
  const hub = watches;
  const requestTimeoutMs = 4 * config.electionTimeoutMs;
  const peerUrlOf = (id: NodeId): string | undefined => {
    const address = id === config.name ? config.peerAddress : transport.peerAddress(id);
    return address === undefined ? undefined : `${peerScheme(config)}://${formatPeerAddress(address)}`;
  };
  const status = (): unknown => ({ ...statusOf(core, peerUrlOf, clientUrlOf), alarms: quota.alarms,
    version: CONCLAVE_VERSION, uptimeMs: Math.round(performance.now() - startedAtMs),
    dataSizeBytes: directorySizeBytes(data.directory) });
  const clientStreams = new ClientStreamHub({ watches: hub, guard, limits,
    logger: logger.child({ component: 'client-stream' }),
    calls: { core, quota, clientUrlOf, status, requestTimeoutMs, leaderless, auth,
      keepAlive: (leaseId, done) => keepAlives.keepAlive(leaseId, done) } });
  const api = createHttpApi({
    core, watches: hub, guard, quota, limits, clientUrlOf, logger, requestTimeoutMs, leaderless,
    auth,
    metrics: () => metrics.render(core.status(), {
      ...gaugesOf(core, hub, guard, quota, limits), leases: core.store.leaseCount,
      lease_streams: leaseStreams?.size ?? 0 },
      [{ name: 'conclave_peer_handshakes_refused_total', label: 'reason',
        help: 'Peer connections refused before they became links, by reason (docs/security.md).',
        values: transport.metrics().handshakesRefusedByReason }],
      transport.metrics().invalidMessages),
    status,
    opsRoutes: createOpsRoutes({ core, alarms: () => quota.alarms, clusterId, clientUrlOf,
      peerAddressOf: (id) => {
        addresses.sync(core.runtime.node.membership());
        return transport.peerAddress(id);
      },
      setPeerAddress: (id, address) => transport.setPeerAddress(id, address),
      selfPeerAddress: config.peerAddress,
      rootRefusal: (req) => rootRefusal(auth, core.store.auth, req.headers.authorization) }),
  });
  const extra = hooks.addOn?.({ core, feed, config, logger,
    clientUrls: clientUrlsOf(config, clientUrlOf),
    peerClientTls: authentication.kind !== 'tls' ? undefined
      : { ca: authentication.ca, cert: authentication.cert, key: authentication.key } });
  const handler = measuredRequests(metrics, clock, timedRequests(feed, clock, (req, res) => {
    // A connection refused at the connection limit is served nothing, the dashboard included.
    if (guard.state(req.socket) === undefined) return void res.destroy();
    if (extra?.handleRequest(req, res) !== true) api(req, res);
  }));
  // Node checks header and request timeouts this often (its default: 30 s).
  const timing = { connectionsCheckingInterval: Math.min(1000, limits.headerTimeoutMs) };
  // The lease keep-alive WebSocket upgrades on either server the same way.
  const http = clientTls === undefined ? createServer(timing, handler)
    : createHttpsServer({ ...clientTls, ...timing }, handler);
  guard.install(http, clientTls !== undefined);
  http.on('upgrade', (req, socket, head) => {
    // A connection refused at the connection limit gets no stream either (lease or dashboard).
    if (guard.state(req.socket) === undefined) return void socket.destroy();
    if (extra?.handleUpgrade(req, socket, head) === true) return;
    if (clientStreams.handleUpgrade(req, socket, head)) return;
    if (leaseStreams?.handleUpgrade(req, socket, head) !== true) socket.destroy();
  });
  let closing: Promise<void> | undefined;
  // Idempotent, and quick (no leadership transfer, no wait on the disk): for a member that
  // cannot go on, or could not start. The data dir is closed after it.
  function closeListeners(): Promise<void> {
    closing ??= (async () => {
      clearInterval(progressTimer);
      clearInterval(publishTimer);
      feedTimers.stop();
      extra?.close();
      watches?.closeAll();
      leaseStreams?.closeAll('server stopping');
      clientStreams.closeAll('server stopping');
      core.stop();
      rejections.stop();
      transport.close();
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeAllConnections();
      await closed;
    })();
    return closing;
  }
  await listen(http, config.clientAddress).catch(async (error: unknown) => {
    await closeListeners();
    await data.close();
    throw error;
  });
  const clientUrl = selfClientUrl;
  publishTimer = setInterval(() => publisher?.tick(), Math.max(200, 4 * config.heartbeatMs));
  publishTimer.unref();
  logger.info({ clientUrl, peer: formatPeerAddress(config.peerAddress),
    peerAuthentication: authentication.kind }, 'conclave server started');
  return {
    id: config.name, clientUrl, peerAddress: config.peerAddress, core,
    stop: async (options = {}) => {
      clearInterval(progressTimer);
      clearInterval(publishTimer);
      feedTimers.stop();
      extra?.close();
      watches?.closeAll();
      leaseStreams?.closeAll('server stopping');
      const successor = options.handOver === false ? undefined : await core.shutdown();
      rejections.stop();
      if (successor !== undefined) logger.info({ successor }, 'leadership handed over before stopping');
      await closeListeners();
      await data.close();
    },
  };
}

function closingOnThrow<T>(make: () => T, close: () => void): T {
  try {
    return make();
  } catch (error) {
    close();
    throw error;
  }
}

/**
 * Times each client request into conclave_client_request_duration_seconds, labelled by its
 * path when it is one of the API's (else "other": the label set stays bounded whatever
 * arrives) and its status code. Watch streams last as long as the watcher: not timed.
 */
function measuredRequests(metrics: ServerMetrics, clock: SystemClock,
  handler: RequestListener): RequestListener {
  return (req, res) => {
    const target = (req.url ?? '').split('?')[0] ?? '';
    if (target !== '/v1/watch') {
      const known = POST_PATHS.has(target) || GET_PATHS.has(target);
      const path = known ? target : target.startsWith('/ui') ? '/ui' : 'other';
      const startMs = clock.monotonicMs();
      res.once('finish', () => metrics.clientRequest.observe({ path,
        code: String(res.statusCode) }, (clock.monotonicMs() - startMs) / 1000));
    }
    handler(req, res);
  };
}

/** The keep-alives the lease stream serves, timed into conclave_lease_keepalive_seconds. */
function timedKeepAlives<T extends Pick<ConsistentCore, 'keepAlive'>>(served: T,
  clock: SystemClock, metrics: ServerMetrics): T {
  return {
    ...served,
    keepAlive: (leaseId, done) => {
      const startMs = clock.monotonicMs();
      served.keepAlive(leaseId, (outcome) => {
        metrics.leaseKeepAlive.observe((clock.monotonicMs() - startMs) / 1000);
        done(outcome);
      });
    },
  };
}

/** The gauges of /metrics beside Raft's: the store, watchers and the client door's limits. */
function gaugesOf(core: ConsistentCore, hub: WatchHub, guard: ClientGuard, quota: SpaceQuota,
  limits: ClientLimits): Record<string, number> {
  return {
    revision: core.store.revision, watchers: hub.size,
    client_connections: guard.connections,
    request_body_bytes_inflight: guard.bodyBytesInflight,
    client_requests_refused_at_limits: guard.refused,
    watch_queued_bytes: hub.queuedBytes, watchers_canceled_slow: hub.canceledSlow,
    keyspace_bytes: core.store.keyspaceBytes, quota_bytes: limits.quotaBytes,
    alarm_nospace: quota.alarms.includes('NOSPACE') ? 1 : 0,
    idempotency_records: core.store.clientCount,
    idempotency_records_bytes: core.store.clientsSizeBytes,
  };
}

function raftTuning(config: ServerConfig): RaftTuning {
  return {
    ...RAFT_DEFAULTS_LAN,
    bytesPerMessageMax: Math.max(RAFT_DEFAULTS_LAN.bytesPerMessageMax,
      raftEntryBytesMax(limitsOf(config))),
    heartbeatIntervalMs: config.heartbeatMs,
    electionTimeoutMsMin: config.electionTimeoutMs,
    electionTimeoutMsMax: 2 * config.electionTimeoutMs,
  };
}

/** This member's status; `members`: the membership in force (an added member included). */
function statusOf(core: ConsistentCore, peerUrlOf: (id: NodeId) => string | undefined,
  clientUrlOf: (id: NodeId) => string | undefined): Record<string, unknown> {
  // A stopped member has no role: saying "leader" after a fatal error would be a lie (503).
  if (core.runtime.isStopped) {
    throw new CoordError('CONCLAVE_UNAVAILABLE', `member ${core.id} is stopped`);
  }
  const status = core.status();
  const progress = new Map(status.progress.map((p) => [p.id, p]));
  return {
    id: status.id, role: status.role, term: status.term, leaderId: status.leaderId ?? null,
    commitIndex: status.commitIndex, appliedIndex: status.appliedIndex, lastIndex: status.lastIndex,
    snapshotIndex: status.snapshotIndex,
    revision: core.store.revision, leases: core.store.leaseCount,
    dbSizeBytes: core.store.keyspaceBytes,
    members: [...status.membership.voters, ...status.membership.learners].map((id) => ({
      id, peerUrl: peerUrlOf(id) ?? null, clientUrl: clientUrlOf(id) ?? null,
      ...(status.membership.learners.includes(id) ? { learner: true } : {}),
      ...(progress.has(id) ? { matchIndex: progress.get(id)!.matchIndex, replication: progress.get(id)!.state,
        lastContactMsAgo: Math.max(0, Math.round(performance.now() - progress.get(id)!.lastContactMs)) } : {}),
    })),
  };
}

function peerScheme(config: ServerConfig): 'tcp' | 'tls' {
  return config.peerTls === undefined ? 'tcp' : 'tls';
}

function listen(server: Server, address: PeerAddress): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(new CoordError('CONCLAVE_UNAVAILABLE',
      `cannot listen for clients on ${formatPeerAddress(address)}: ${error.code ?? error.message}`, { cause: error })));
    server.listen(address.port, address.host, () => resolve());
  });
}
