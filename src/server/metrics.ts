/**
 * The server's Prometheus metrics at /metrics, kept in one prom-client Registry per server (no
 * global registry: several servers share a test process). Besides Conclave's own metrics it
 * carries prom-client's default process and Node.js metrics (CPU, memory, file descriptors,
 * `nodejs_eventloop_lag_*`, `nodejs_gc_duration_seconds`): event-loop lag and GC pauses
 * matter for lease safety, since a holder that stalls past its lease margin loses its lease.
 * Every metric is listed with its meaning in docs/metrics.md.
 *
 * Histograms have buckets chosen per quantity (seconds, the Prometheus unit): a WAL fsync, a
 * peer round trip and a client request live on different scales.
 */
import {
  collectDefaultMetrics, Counter, Gauge, Histogram, Registry,
} from 'prom-client';
import { REJECTION_REASONS, type RaftStatus } from '../core/raft/index.js';

/**
 * The reason the peer transport gives for frames its validator refused (it closes the
 * connection); the others are the Raft core's `RejectionReason`s.
 */
export const MALFORMED_REASON = 'malformed';

/**
 * WAL sync (fdatasync) latency buckets. Unit: s. From 100 µs (an NVMe drive's cache flush) to
 * 1 s (a saturated disk): past 1 s the heartbeats are already late.
 */
export const WAL_SYNC_BUCKETS_S =
  [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
/**
 * Peer round-trip buckets (a heartbeat and its answer). Unit: s. From 50 µs (loopback) through
 * a LAN (0.2–1 ms) to a WAN between regions (50–300 ms), up to 2 s, beyond any sane election
 * timeout.
 */
export const PEER_RTT_BUCKETS_S =
  [0.00005, 0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2];
/**
 * Client request buckets: from arrival to the last byte of the answer. Unit: s. A serializable
 * read answers in well under 1 ms, a write waits for a commit round (a WAL sync and a peer
 * round trip: 1–10 ms on a LAN); the server's own request timeout is 4 election timeouts (4 s
 * on the LAN defaults), so the top bucket is 10 s.
 */
export const CLIENT_REQUEST_BUCKETS_S =
  [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/**
 * Lease keep-alive buckets, from arrival on the stream to its answer (it waits for the lease
 * checkpoint round, at most one heartbeat). Unit: s.
 */
export const LEASE_KEEPALIVE_BUCKETS_S =
  [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** A counter family with one label, rendered as `name{label="key"} value` per key. */
export interface LabelledCounter {
  readonly name: string;
  readonly help: string;
  readonly label: string;
  readonly values: Readonly<Record<string, number>>;
}

/**
 * The help text of each gauge in `render`'s `extra` (server.ts' gaugesOf), by its name
 * without the `conclave_` prefix. A gauge missing here is a programmer error (render throws).
 */
export const EXTRA_GAUGE_HELP: Readonly<Record<string, string>> = {
  revision: 'The key-value store\'s revision: it grows by one with each applied write.',
  watchers: 'Watch streams open on this member.',
  client_connections: 'Client connections open on this member (HTTP keep-alive included).',
  request_body_bytes_inflight: 'Bytes of client request bodies being read now (bounded by '
    + '--connection-body-bytes-max per connection).',
  client_requests_refused_at_limits: 'Client requests refused since start because a limit '
    + '(connections, body bytes, requests in flight) was reached. A counter, exposed as a gauge '
    + 'under its historical name.',
  watch_queued_bytes: 'Bytes of watch events queued for slow watchers, all watchers together.',
  watchers_canceled_slow: 'Watchers canceled since start because they fell too far behind. A '
    + 'counter, exposed as a gauge under its historical name.',
  keyspace_bytes: 'Size of the live keys and values, as the space quota counts it.',
  quota_bytes: 'The space quota: writes are refused (NOSPACE alarm) above it.',
  alarm_nospace: '1 while the NOSPACE alarm is raised (the keyspace reached the quota).',
  idempotency_records: 'Idempotency records kept (one per client id), for at-most-once retries.',
  idempotency_records_bytes: 'Bytes the idempotency records take in memory (the store bounds '
    + 'them and drops the oldest client ids first).',
  leases: 'Leases alive in the store.',
  lease_streams: 'Keep-alive streams (WebSockets) open on this member (only the leader '
    + 'serves them).',
};

export class ServerMetrics {
  readonly registry = new Registry();
  readonly walSync: Histogram;
  readonly peerRoundTrip: Histogram;
  readonly clientRequest: Histogram<'path' | 'code'>;
  readonly leaseKeepAlive: Histogram;
  private readonly elections: Counter<'reason'>;
  private readonly proposals: Counter<'outcome'>;
  private readonly rejected: Counter<'reason'>;
  private readonly snapshots: Counter<'kind'>;
  private readonly roleChanges: Counter<'role'>;
  private readonly gauges = new Map<string, Gauge>();
  private readonly labelled = new Map<string, Counter<string>>();
  /** What setCounter last set, by counter name and label value (bounded: fixed label sets). */
  private readonly totalsSet = new Map<string, number>();
  /** Size of the latest snapshot taken or installed. Unit: bytes. */
  snapshotBytes = 0;

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    const registers = [this.registry];
    this.walSync = new Histogram({ name: 'conclave_wal_sync_seconds', registers,
      help: 'Write-ahead log sync (fdatasync) latency: every acknowledged write waits for one.',
      buckets: WAL_SYNC_BUCKETS_S });
    this.peerRoundTrip = new Histogram({ name: 'conclave_peer_round_trip_seconds', registers,
      help: 'Round trip of a heartbeat to a peer and its answer, as the leader measures it.',
      buckets: PEER_RTT_BUCKETS_S });
    this.clientRequest = new Histogram({ name: 'conclave_client_request_duration_seconds',
      help: 'Client API requests this member answered, from arrival to the last byte of the '
        + 'answer, by path and status code (watch streams are not requests: see '
        + 'conclave_watchers).', labelNames: ['path', 'code'], registers,
      buckets: CLIENT_REQUEST_BUCKETS_S });
    this.leaseKeepAlive = new Histogram({ name: 'conclave_lease_keepalive_seconds', registers,
      help: 'Lease keep-alives answered on the keep-alive stream, from arrival to the answer.',
      buckets: LEASE_KEEPALIVE_BUCKETS_S });
    this.elections = new Counter({ name: 'conclave_elections_total', labelNames: ['reason'],
      help: 'Elections this member started (at its pre-vote), by what started them.', registers });
    this.proposals = new Counter({ name: 'conclave_proposals_total', labelNames: ['outcome'],
      help: 'Client proposals this member handled as leader, by outcome.', registers });
    this.rejected = new Counter({ name: 'conclave_peer_messages_rejected_total',
      help: 'Peer messages dropped as malformed or contradicting what this member knows, by '
        + 'reason (docs/raft.md).', labelNames: ['reason'], registers });
    for (const reason of [...REJECTION_REASONS, MALFORMED_REASON]) this.rejected.inc({ reason }, 0);
    this.snapshots = new Counter({ name: 'conclave_snapshots_total', labelNames: ['kind'],
      help: 'Snapshots taken, saved (durable) and installed from the leader, by kind.',
      registers });
    this.roleChanges = new Counter({ name: 'conclave_role_changes_total', labelNames: ['role'],
      help: 'Raft role changes of this member, by the role it took (many to leader or '
        + 'candidate in a short time: an unstable cluster).', registers });
    this.raftGauges();
  }

  private raftGauges(): void {
    const gauge = (name: string, help: string): void => {
      this.gauges.set(name, new Gauge({ name, help, registers: [this.registry] }));
    };
    gauge('conclave_is_leader', '1 when this member is the Raft leader, else 0.');
    gauge('conclave_term', 'The current Raft term (the generation clock): it grows with each '
      + 'election.');
    gauge('conclave_commit_index', 'Highest log index this member knows committed.');
    gauge('conclave_applied_index', 'Highest log index applied to the store.');
    gauge('conclave_last_index', 'Last index in the local log (above commit: not yet '
      + 'committed).');
    gauge('conclave_snapshot_bytes', 'Size of the latest snapshot taken or installed.');
    gauge('conclave_snapshot_index', 'Log index of the newest snapshot (the log before it is '
      + 'dropped).');
  }

  countSnapshot(kind: string, sizeBytes: number): void {
    this.snapshots.inc({ kind });
    this.snapshotBytes = sizeBytes;
  }

  countElection(reason: string): void {
    this.elections.inc({ reason });
  }

  countProposal(outcome: string): void {
    this.proposals.inc({ outcome });
  }

  countRejected(reason: string, count: number): void {
    this.rejected.inc({ reason }, count);
  }

  countRoleChange(role: string): void {
    this.roleChanges.inc({ role });
  }

  /**
   * The text of /metrics. `extra`: gauges by name (EXTRA_GAUGE_HELP has their help);
   * `counters`: counter families whose totals are kept elsewhere (the peer transport);
   * `malformedPeerMessages`: frames the peer transport's validator refused, so far.
   */
  async render(status: RaftStatus, extra: Readonly<Record<string, number>>,
    counters: readonly LabelledCounter[] = [], malformedPeerMessages = 0): Promise<string> {
    const set = (name: string, value: number): void => this.gauges.get(name)?.set(value);
    set('conclave_is_leader', status.role === 'leader' ? 1 : 0);
    set('conclave_term', status.term);
    set('conclave_commit_index', status.commitIndex);
    set('conclave_applied_index', status.appliedIndex);
    set('conclave_last_index', status.lastIndex);
    set('conclave_snapshot_bytes', this.snapshotBytes);
    set('conclave_snapshot_index', status.snapshotIndex);
    for (const [name, value] of Object.entries(extra)) this.extraGauge(name).set(value);
    for (const counter of counters) this.setCounter(counter);
    this.setCounter({ name: 'conclave_peer_messages_rejected_total', label: 'reason', help: '',
      values: { [MALFORMED_REASON]: malformedPeerMessages } }, this.rejected);
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private extraGauge(name: string): Gauge {
    const full = `conclave_${name}`;
    let gauge = this.gauges.get(full);
    if (gauge === undefined) {
      const help = EXTRA_GAUGE_HELP[name];
      if (help === undefined) throw new Error(`metrics: no help text for gauge ${full}`);
      gauge = new Gauge({ name: full, help, registers: [this.registry] });
      this.gauges.set(full, gauge);
    }
    return gauge;
  }

  /** Sets a counter to totals counted elsewhere (they only grow, so it stays a counter). */
  private setCounter(counter: LabelledCounter, existing?: Counter<string>): void {
    let family = existing ?? this.labelled.get(counter.name);
    if (family === undefined) {
      family = new Counter({ name: counter.name, help: counter.help, labelNames: [counter.label],
        registers: [this.registry] });
      this.labelled.set(counter.name, family);
    }
    for (const [key, total] of Object.entries(counter.values)) {
      const seen = `${counter.name}\u0000${key}`;
      const now = this.totalsSet.get(seen) ?? 0;
      if (total > now) family.inc({ [counter.label]: key }, total - now);
      this.totalsSet.set(seen, Math.max(now, total));
    }
  }
}
