/**
 * One member of a Conclave consistent core as a running process: the write-ahead log in its
 * data directory, Raft over TCP to its peers, and the HTTP client API. `startServer` returns once
 * both listeners are up; `stop` closes them and stops Raft (transferring leadership first when
 * the Raft core supports it, so a planned restart costs no election timeout).
 */
import {
  createServer, type IncomingMessage, type Server, type ServerResponse,
} from 'node:http';
import type { Duplex } from 'node:stream';
import { createServer as createHttpsServer } from 'node:https';
import { join } from 'node:path';
import { FileStorage } from '../adapters/file-storage.js';
import { RAFT_MESSAGE_VALIDATOR } from '../adapters/message-validators.js';
import { formatPeerAddress, type PeerAddress } from '../adapters/peer-address.js';
import { SystemClock } from '../adapters/system-clock.js';
import { SystemRandom } from '../adapters/system-random.js';
import { TcpTransport } from '../adapters/tcp-transport.js';
import { formatConfigProblems } from '../core/config.js';
import type { NodeId } from '../core/ids.js';
import { KV_STORE_DEFAULTS } from '../core/kv/index.js';
import { RAFT_DEFAULTS_LAN, type RaftMessage, type RaftTuning } from '../core/raft/index.js';
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
import { createHttpApi } from './http-api.js';
import { LeaseStreamHub } from './lease-stream.js';
import { ServerMetrics } from './metrics.js';
import { clientTlsOptionsOf, peerAuthenticationOf } from './peer-credentials.js';
import { measurePeerRoundTrips } from './peer-rtt.js';
import { validateServerConfig, type ServerConfig } from './server-config.js';
import { WatchHub } from './watch-hub.js';

/** Largest client request body. Unit: bytes. 1.5 MiB like etcd's --max-request-bytes. */
const CLIENT_BODY_BYTES_MAX = 1.5 * 1024 * 1024;
/**
 * Peer frames must hold the largest append: bytesPerMessageMax of entries (1 MiB) plus one
 * oversized entry and framing. Unit: bytes.
 */
const PEER_FRAME_BYTES_MAX = 4 * 1024 * 1024;

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
  stop(): Promise<void>;
}

export async function startServer(config: ServerConfig, logger: Logger,
  addOn?: (context: ServerAddOnContext) => ServerAddOn): Promise<RunningServer> {
  const problems = validateServerConfig(config);
  if (problems.length > 0) throw new ConfigInvalidError(formatConfigProblems(problems));
  const clock = new SystemClock();
  const random = new SystemRandom();
  const metrics = new ServerMetrics();
  // Every credential is read before anything listens: a bad file stops the start, clearly.
  const authentication = peerAuthenticationOf(config);
  const clientTls = clientTlsOptionsOf(config);
  if (authentication.kind === 'none' && config.cluster.size > 1) {
    logger.warn({}, 'peer authentication is off (--insecure): anyone who can reach the peer ' +
      'port can join this cluster and forge messages (docs/security.md)');
  }
  const transport = await TcpTransport.listen<RaftMessage>({
    localId: config.name,
    listen: { host: config.peerAddress.host, port: config.peerAddress.port },
    peers: new Map([...config.cluster].filter(([id]) => id !== config.name)),
    validate: RAFT_MESSAGE_VALIDATOR,
    random,
    config: { clusterName: config.clusterName, frameBytesMax: PEER_FRAME_BYTES_MAX },
    logger: logger.child({ component: 'peer-transport' }),
    authentication,
  });
  let watches: WatchHub | undefined;
  let feed: EventFeed | undefined;
  let leaseStreams: LeaseStreamHub | undefined;
  // Rejected peer messages: counted in /metrics, logged at most a few lines a second.
  const rejections = new RejectionLog({ clock, timer: clock,
    logger: logger.child({ component: 'raft' }) });
  const core = ConsistentCore.open({
    id: config.name,
    voters: [...config.cluster.keys()],
    raft: raftTuning(config),
    kv: KV_STORE_DEFAULTS,
    // A checkpoint takes a commit round: never more often than heartbeats.
    // Keep-alives arriving a few at a time share one heartbeat round (docs/leases.md, rule 1).
    lease: { ...LEASE_DEFAULTS, checkpointIntervalMs: Math.max(LEASE_DEFAULTS.checkpointIntervalMs,
      config.heartbeatMs), keepAliveLingerMs: config.heartbeatMs },
    raftRuntime: { ...RAFT_RUNTIME_DEFAULTS, snapshotEntries: config.snapshotCount,
      snapshotCatchUpEntries: config.snapshotCatchUpEntries },
    autoCompaction: config.autoCompaction,
  }, {
    clock, timer: clock, random, logger: logger.child({ component: 'raft' }),
    transport: measurePeerRoundTrips(transport, clock, (peer, ms) => {
      metrics.peerRoundTrip.observe(ms / 1000);
      feed?.onPeerRoundTrip(peer, ms);
    }),
    storage: new FileStorage(join(config.dataDir, 'wal')),
    snapshotStorage: new FileStorage(join(config.dataDir, 'snap')),
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
    onFatal: () => process.exitCode = 1,
  });
  watches = new WatchHub(core);
  // Quiet watch streams get a progress line every 10 s, so clients can tell silence from a dead link.
  const progressTimer = setInterval(() => watches?.progressAll(), WATCH_PROGRESS_INTERVAL_MS);
  progressTimer.unref();
  // Every member serves clients the same way: TLS on one means TLS on all.
  const scheme = clientTls === undefined ? 'http' : 'https';
  const clientUrlOf = (id: NodeId): string | undefined => {
    const address = config.clientAddresses.get(id);
    return address === undefined ? undefined : `${scheme}://${formatPeerAddress(address)}`;
  };
  feed = eventFeedOf(core, clock, random, config.heartbeatMs);
  const feedTimers = startEventFeedTimers(feed);
  leaseStreams = new LeaseStreamHub({ core: servedKeepAlives(core, feed, clock), clientUrlOf,
    logger: logger.child({ component: 'lease-stream' }) });
  const api = createHttpApi({
    core, watches, clientUrlOf, logger, bodyBytesMax: CLIENT_BODY_BYTES_MAX,
    requestTimeoutMs: 4 * config.electionTimeoutMs,
    metrics: () => metrics.render(core.status(),
      { revision: core.store.revision, watchers: watches?.size ?? 0 },
      [{ name: 'conclave_peer_handshakes_refused_total', label: 'reason',
        help: 'Peer connections refused before they became links, by reason (docs/security.md).',
        values: transport.metrics().handshakesRefusedByReason }],
      transport.metrics().invalidMessages),
    status: () => statusOf(core, config, clientUrlOf),
  });
  const extra = addOn?.({ core, feed, config, logger, clientUrls: clientUrlsOf(config, clientUrlOf),
    peerClientTls: authentication.kind !== 'tls' ? undefined
      : { ca: authentication.ca, cert: authentication.cert, key: authentication.key } });
  const handler = timedRequests(feed, clock, (req, res) => {
    if (extra?.handleRequest(req, res) !== true) api(req, res);
  });
  // The lease keep-alive WebSocket upgrades on either server the same way.
  const http = clientTls === undefined ? createServer(handler)
    : createHttpsServer(clientTls, handler);
  http.on('upgrade', (req, socket, head) => {
    if (extra?.handleUpgrade(req, socket, head) === true) return;
    if (leaseStreams?.handleUpgrade(req, socket, head) !== true) socket.destroy();
  });
  await listen(http, config.clientAddress);
  const clientUrl = `${scheme}://${formatPeerAddress(config.clientAddress)}`;
  logger.info({ clientUrl, peer: formatPeerAddress(config.peerAddress),
    peerAuthentication: authentication.kind }, 'conclave server started');
  return {
    id: config.name, clientUrl, peerAddress: config.peerAddress, core,
    stop: async () => {
      clearInterval(progressTimer);
      feedTimers.stop();
      extra?.close();
      watches?.closeAll();
      leaseStreams?.closeAll('server stopping');
      const successor = await core.shutdown();
      rejections.stop();
      if (successor !== undefined) logger.info({ successor }, 'leadership handed over before stopping');
      transport.close();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeAllConnections();
    },
  };
}

function raftTuning(config: ServerConfig): RaftTuning {
  return {
    ...RAFT_DEFAULTS_LAN,
    heartbeatIntervalMs: config.heartbeatMs,
    electionTimeoutMsMin: config.electionTimeoutMs,
    electionTimeoutMsMax: 2 * config.electionTimeoutMs,
  };
}

function statusOf(core: ConsistentCore, config: ServerConfig, clientUrlOf: (id: NodeId) => string | undefined): unknown {
  const status = core.status();
  const progress = new Map(status.progress.map((p) => [p.id, p]));
  return {
    id: status.id, role: status.role, term: status.term, leaderId: status.leaderId ?? null,
    commitIndex: status.commitIndex, appliedIndex: status.appliedIndex, lastIndex: status.lastIndex,
    snapshotIndex: status.snapshotIndex,
    revision: core.store.revision, leases: core.store.leaseCount,
    members: [...config.cluster].map(([id, peer]) => ({
      id, peerUrl: `${peerScheme(config)}://${formatPeerAddress(peer)}`, clientUrl: clientUrlOf(id) ?? null,
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
