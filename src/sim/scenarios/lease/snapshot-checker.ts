/**
 * Snapshots agree: every snapshot a member takes or installs at log index i holds the same
 * bytes as every other one at i, whoever took it and however that member got there (applying
 * every entry, restoring an earlier snapshot and applying the rest, recovering from its disk).
 * The key-value store is deterministic and its snapshot canonical, so any difference is a bug:
 * a copy-on-write capture that let a later apply through, a restore that lost or reordered part
 * of the state (leases, client records, history), or replicas that diverged.
 */
import { crc32c } from '../../../core/checksum.js';
import type { NodeId } from '../../../core/ids.js';
import type { SnapshotEvent } from '../../../runtime/raft/index.js';
import type { Violation } from '../../scenario.js';

export interface SnapshotCounts {
  /** Snapshots members took of their own state. */
  taken: number;
  /** Snapshots members installed from a leader. */
  installed: number;
  /** Snapshots compared with an earlier one at the same index. */
  compared: number;
}

export class SnapshotChecker {
  readonly counts: SnapshotCounts = { taken: 0, installed: 0, compared: 0 };
  /** The first snapshot seen at each index: who, how, and its length and CRC. */
  private readonly byIndex = new Map<number, { member: NodeId; kind: string; digest: string }>();

  constructor(private readonly nowMs: () => number,
    private readonly violations: Violation[]) {}

  observe(member: NodeId, event: SnapshotEvent): void {
    if (event.kind === 'saved') return;
    this.counts[event.kind]++;
    const digest = `${event.data.length}/${crc32c(event.data).toString(16)}`;
    const first = this.byIndex.get(event.index);
    if (first === undefined) {
      this.byIndex.set(event.index, { member, kind: event.kind, digest });
      return;
    }
    this.counts.compared++;
    if (first.digest === digest) return;
    this.violations.push({ checker: 'snapshots-agree', atMs: this.nowMs(),
      message: `${member}'s snapshot at index ${event.index} (${event.kind}, ${digest}) differs `
        + `from ${first.member}'s (${first.kind}, ${first.digest})` });
  }
}
