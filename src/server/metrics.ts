/**
 * The server's Prometheus metrics, rendered as text at /metrics. Counters and gauges are plain
 * fields updated by the server; latency goes into fixed buckets (a cumulative histogram).
 */
import { REJECTION_REASONS, type RaftStatus } from '../core/raft/index.js';

/**
 * The reason the peer transport gives for frames its validator refused (it closes the
 * connection); the others are the Raft core's `RejectionReason`s.
 */
export const MALFORMED_REASON = 'malformed';

/** WAL sync latency buckets. Unit: seconds (Prometheus convention). */
const SYNC_BUCKETS_S = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

export class Histogram {
  private readonly counts = new Array<number>(SYNC_BUCKETS_S.length).fill(0);
  private sum = 0;
  private count = 0;

  observe(seconds: number): void {
    this.sum += seconds;
    this.count++;
    for (let i = 0; i < SYNC_BUCKETS_S.length; i++) if (seconds <= SYNC_BUCKETS_S[i]!) this.counts[i]!++;
  }

  render(name: string, help: string): string[] {
    const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} histogram`];
    SYNC_BUCKETS_S.forEach((le, i) => lines.push(`${name}_bucket{le="${le}"} ${this.counts[i]!}`));
    lines.push(`${name}_bucket{le="+Inf"} ${this.count}`, `${name}_sum ${this.sum}`, `${name}_count ${this.count}`);
    return lines;
  }
}

/** A counter family with one label, rendered as `name{label="key"} value` per key. */
export interface LabelledCounter {
  readonly name: string;
  readonly help: string;
  readonly label: string;
  readonly values: Readonly<Record<string, number>>;
}

export class ServerMetrics {
  readonly electionsByReason = new Map<string, number>();
  readonly proposalsByOutcome = new Map<string, number>();
  readonly walSync = new Histogram();
  readonly peerRoundTrip = new Histogram();
  /** Peer messages the Raft core rejected, by reason; every reason listed from the start. */
  readonly peerMessagesRejected = new Map<string, number>(REJECTION_REASONS.map((r) => [r, 0]));
  /** Snapshots taken, saved (durable) and installed from the leader. */
  readonly snapshotsByKind = new Map<string, number>();
  /** Size of the latest snapshot taken or installed. Unit: bytes. */
  snapshotBytes = 0;

  countSnapshot(kind: string, sizeBytes: number): void {
    this.snapshotsByKind.set(kind, (this.snapshotsByKind.get(kind) ?? 0) + 1);
    this.snapshotBytes = sizeBytes;
  }

  countElection(reason: string): void {
    this.electionsByReason.set(reason, (this.electionsByReason.get(reason) ?? 0) + 1);
  }

  countProposal(outcome: string): void {
    this.proposalsByOutcome.set(outcome, (this.proposalsByOutcome.get(outcome) ?? 0) + 1);
  }

  countRejected(reason: string, count: number): void {
    this.peerMessagesRejected.set(reason, (this.peerMessagesRejected.get(reason) ?? 0) + count);
  }

  /** `malformedPeerMessages`: frames the peer transport's validator refused, so far. */
  render(status: RaftStatus, extra: Readonly<Record<string, number>>,
    counters: readonly LabelledCounter[] = [], malformedPeerMessages = 0): string {
    const lines: string[] = [];
    const gauge = (name: string, help: string, value: number): void => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, `${name} ${value}`);
    };
    gauge('conclave_is_leader', '1 when this member is the Raft leader.', status.role === 'leader' ? 1 : 0);
    gauge('conclave_term', 'The current Raft term (the generation clock).', status.term);
    gauge('conclave_commit_index', 'Highest log index known committed.', status.commitIndex);
    gauge('conclave_applied_index', 'Highest log index applied to the store.', status.appliedIndex);
    gauge('conclave_last_index', 'Last index in the local log.', status.lastIndex);
    for (const [name, value] of Object.entries(extra)) gauge(`conclave_${name}`, name.replace(/_/g, ' ') + '.', value);
    lines.push('# HELP conclave_elections_total Elections this member started, by reason.',
      '# TYPE conclave_elections_total counter');
    for (const [reason, n] of this.electionsByReason) lines.push(`conclave_elections_total{reason="${reason}"} ${n}`);
    lines.push('# HELP conclave_proposals_total Proposals handled, by outcome.', '# TYPE conclave_proposals_total counter');
    for (const [outcome, n] of this.proposalsByOutcome) lines.push(`conclave_proposals_total{outcome="${outcome}"} ${n}`);
    for (const counter of counters) {
      lines.push(`# HELP ${counter.name} ${counter.help}`, `# TYPE ${counter.name} counter`);
      for (const [key, n] of Object.entries(counter.values)) {
        lines.push(`${counter.name}{${counter.label}="${key}"} ${n}`);
      }
    }
    lines.push('# HELP conclave_peer_messages_rejected_total Peer messages dropped as malformed ' +
      'or contradicting what this member knows, by reason (docs/raft.md).',
    '# TYPE conclave_peer_messages_rejected_total counter');
    for (const [reason, n] of this.peerMessagesRejected) {
      lines.push(`conclave_peer_messages_rejected_total{reason="${reason}"} ${n}`);
    }
    lines.push(`conclave_peer_messages_rejected_total{reason="${MALFORMED_REASON}"} ` +
      `${malformedPeerMessages}`);
    lines.push('# HELP conclave_snapshots_total Snapshots taken, saved and installed, by kind.',
      '# TYPE conclave_snapshots_total counter');
    for (const [kind, n] of this.snapshotsByKind) {
      lines.push(`conclave_snapshots_total{kind="${kind}"} ${n}`);
    }
    gauge('conclave_snapshot_bytes', 'Size of the latest snapshot taken or installed.',
      this.snapshotBytes);
    gauge('conclave_snapshot_index', 'Log index of the newest snapshot.', status.snapshotIndex);
    lines.push(...this.walSync.render('conclave_wal_sync_seconds', 'Write-ahead log sync (fdatasync) latency.'));
    lines.push(...this.peerRoundTrip.render('conclave_peer_round_trip_seconds', 'Heartbeat round trip to peers.'));
    return `${lines.join('\n')}\n`;
  }
}
