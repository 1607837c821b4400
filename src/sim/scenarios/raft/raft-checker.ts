/**
 * The raft scenario's safety checkers, fed by hooks on every node's events, storage and state
 * machine, so each check runs at the step where its property could first break (Raft Figure 3):
 *
 * - election safety: at most one leader per term, ever;
 * - log matching: two entries with the same index and term carry the same command and follow the
 *   same previous term (which, inductively, makes the whole prefixes equal);
 * - leader completeness: a new leader's log holds every entry committed in an earlier term
 *   (Raft §5.4; a leader of a stale term, elected late because its votes were delayed, need
 *   not hold entries committed in later terms);
 * - state machine safety: no two nodes apply different entries at one index;
 * - generation clock on disk: a restarted node's recovered term and vote never regress below
 *   what a completed sync made durable;
 * - membership: configuration changes never produce two disjoint majorities (config-checker.ts);
 * - term provenance: every term a node adopts from a message is one some member campaigned for
 *   (a forged term, from a hostile sender, is never taken);
 * - nothing forged kept: no node stores an entry or a snapshot, and no state machine applies
 *   one, that a hostile actor made (their bytes carry the marker `forged/`).
 */
import type { LogIndex, NodeId, Term } from '../../../core/ids.js';
import type { RaftEvent } from '../../../core/raft/index.js';
import type { Entry, HardState, Snapshot } from '../../../core/raft/types.js';
import type { RecoveredRaftState } from '../../../runtime/raft-storage.js';
import type { SnapshotRaftStorage } from '../../../runtime/snapshot/snapshot-raft-storage.js';
import type { Violation } from '../../scenario.js';
import { ConfigChecker } from './config-checker.js';

/** What an entry is, compared by bytes (a hash could collide and hide a divergence). */
interface EntryIdentity {
  readonly data: Uint8Array;
  readonly kind: string;
  readonly previousTerm: number;
}

export class RaftChecker {
  readonly violations: Violation[] = [];
  private readonly leaderOfTerm = new Map<number, NodeId>();
  private readonly entryAt = new Map<string, EntryIdentity>();
  /** index → term and command bytes of the entry applied there (by any node). */
  private readonly applied = new Map<number, { term: number; data: Uint8Array }>();
  /**
   * index → a term no earlier than the one in which it was committed: the term of the first
   * node that stored a commit index covering it.
   */
  private readonly committedByTerm = new Map<number, number>();
  private commitReportedIndex = 0;
  private readonly durableHardState = new Map<NodeId, HardState>();
  elections = 0;
  /** Terms some member started by campaigning (term-changed, election-started). */
  private readonly campaignTerms = new Set<number>();
  /** Messages the cores rejected, by reason (hostile runs report them). */
  readonly rejectedByReason = new Map<string, number>();
  /** Snapshots taken by state machines, and snapshots installed from a leader. */
  snapshotsSaved = 0;
  snapshotsInstalled = 0;

  readonly configs: ConfigChecker;

  constructor(private readonly nowMs: () => number, bootstrapVoters: readonly NodeId[] = []) {
    this.configs = new ConfigChecker(bootstrapVoters, (message) => this.fail('membership', message));
  }

  private fail(checker: string, message: string): void {
    if (this.violations.length < 50) this.violations.push({ checker, atMs: this.nowMs(), message });
  }

  /**
   * A node became leader of `term`; `entryAt` reads its log, which holds nothing up to
   * `compactedIndex` (a snapshot stands for that prefix).
   */
  onLeader(node: NodeId, term: Term, entryAt: (index: LogIndex) => Entry | undefined,
    compactedIndex = 0): void {
    this.elections++;
    const existing = this.leaderOfTerm.get(term);
    if (existing !== undefined && existing !== node) {
      this.fail('election-safety', `two leaders in term ${term}: ${existing} and ${node}`);
    }
    this.leaderOfTerm.set(term, node);
    for (const [index, committed] of this.applied) {
      if (index <= compactedIndex) continue;
      // Raft §5.4.3 is about entries committed in earlier terms only.
      if ((this.committedByTerm.get(index) ?? term) >= term) continue;
      const entry = entryAt(index as LogIndex);
      if (entry === undefined || entry.term !== committed.term
        || !equalBytes(entry.data, committed.data)) {
        this.fail('leader-completeness', `new leader ${node} (term ${term}) lacks committed entry ` +
          `${index} (term ${committed.term}); it has ${entry === undefined ? 'nothing' : `term ${entry.term}`}`);
        return;
      }
    }
  }

  /** Every Raft event of every node: term provenance, and rejection counts. */
  onRaftEvent(node: NodeId, event: RaftEvent): void {
    if (event.kind === 'message-rejected') {
      this.rejectedByReason.set(event.reason,
        (this.rejectedByReason.get(event.reason) ?? 0) + event.count);
    } else if (event.kind === 'term-changed' && event.reason === 'election-started') {
      this.campaignTerms.add(event.to);
    } else if (event.kind === 'term-changed' && !this.campaignTerms.has(event.to)) {
      this.fail('term-provenance', `${node} moved from term ${event.from} to ${event.to}, ` +
        'a term no member campaigned for (a forged term was adopted)');
    }
  }

  /** A state machine applies `data` (an entry, or a snapshot it restores). */
  onStateMachineInput(node: NodeId, what: string, data: Uint8Array): void {
    if (containsForgedMarker(data)) {
      this.fail('forged-entry-applied', `${node} applies a forged ${what}`);
    }
  }

  onSnapshotInstalled(node: NodeId, snapshot: Snapshot): void {
    this.checkStored(node, `snapshot at ${snapshot.meta.index}`, snapshot.data);
    const members = [...snapshot.meta.membership.voters, ...snapshot.meta.membership.learners];
    if (members.some((id) => id.includes(FORGED_MARKER))) {
      this.fail('forged-entry-stored', `${node} installs a snapshot with a forged membership`);
    }
  }

  /** A node stores `data` (an entry, or an installed snapshot). */
  private checkStored(node: NodeId, what: string, data: Uint8Array): void {
    if (containsForgedMarker(data)) {
      this.fail('forged-entry-stored', `${node} stores a forged ${what}`);
    }
  }

  /** Entries a node is about to store (log matching is checked on every write). */
  onAppend(node: NodeId, entries: readonly Entry[], termBefore: (index: LogIndex) => number): void {
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      this.checkStored(node, `entry ${entry.index} (${entry.kind})`, entry.data);
      this.configs.onAppend(entry);
      const previousTerm = i > 0 ? entries[i - 1]!.term : termBefore(entry.index);
      const key = `${entry.index}/${entry.term}`;
      const known = this.entryAt.get(key);
      if (known === undefined) {
        // A copy: the checker must not see a buffer the node reuses later.
        this.entryAt.set(key, { data: entry.data.slice(), kind: entry.kind, previousTerm });
      } else if (!equalBytes(known.data, entry.data) || known.kind !== entry.kind ||
        known.previousTerm !== previousTerm) {
        this.fail('log-matching', `${node} stores a different entry at index ${entry.index} term ` +
          `${entry.term} (previous term ${previousTerm} vs ${known.previousTerm}, kind ` +
          `${entry.kind} vs ${known.kind}, ${describeDifference(known.data, entry.data)})`);
      }
    }
  }

  onApply(node: NodeId, entry: Entry): void {
    const known = this.applied.get(entry.index);
    if (known === undefined) {
      this.applied.set(entry.index, { term: entry.term, data: entry.data.slice() });
    } else if (known.term !== entry.term || !equalBytes(known.data, entry.data)) {
      this.fail('state-machine-safety', `${node} applies term ${entry.term} at index ` +
        `${entry.index}, where term ${known.term} was applied before ` +
        `(${describeDifference(known.data, entry.data)})`);
    }
  }

  /** A node stores `hardState`: its commit index was learned in its term or earlier. */
  onCommitStored(hardState: HardState): void {
    for (let i = this.commitReportedIndex + 1; i <= hardState.commitIndex; i++) {
      this.committedByTerm.set(i, hardState.term);
    }
    this.commitReportedIndex = Math.max(this.commitReportedIndex, hardState.commitIndex);
  }

  onDurable(node: NodeId, hardState: HardState): void {
    this.durableHardState.set(node, hardState);
  }

  onRecovered(node: NodeId, recovered: RecoveredRaftState): void {
    const durable = this.durableHardState.get(node);
    if (durable === undefined) return;
    const found = recovered.hardState;
    if (found.term < durable.term) {
      this.fail('term-on-disk', `${node} recovered term ${found.term} < durable term ${durable.term}`);
    } else if (found.term === durable.term && durable.vote !== undefined && found.vote !== durable.vote) {
      this.fail('vote-on-disk', `${node} recovered vote ${String(found.vote)} in term ${found.term}, ` +
        `but had durably voted for ${durable.vote}`);
    }
  }

  /** Entries committed cluster-wide so far (the highest index any node applied). */
  get appliedIndexMax(): number {
    let max = 0;
    for (const index of this.applied.keys()) max = Math.max(max, index);
    return max;
  }
}

/**
 * Wraps a node's storage to tell the checker what is written and what became durable.
 */
export class CheckedRaftStorage implements SnapshotRaftStorage {
  private staged: HardState | undefined;

  constructor(
    private readonly inner: SnapshotRaftStorage,
    private readonly node: NodeId,
    private readonly checker: RaftChecker,
    private readonly termAt: (index: LogIndex) => number,
  ) {
    checker.onRecovered(node, inner.recovered);
  }

  get recovered(): RecoveredRaftState & { readonly snapshot?: Snapshot } {
    return this.inner.recovered;
  }

  installSnapshot(snapshot: Snapshot, done: (error?: Error) => void): void {
    this.checker.snapshotsInstalled++;
    this.checker.onSnapshotInstalled(this.node, snapshot);
    this.inner.installSnapshot(snapshot, done);
  }

  saveSnapshot(snapshot: Snapshot, done: (error?: Error) => void): void {
    this.checker.snapshotsSaved++;
    this.inner.saveSnapshot(snapshot, done);
  }

  append(entries: readonly Entry[]): void {
    this.checker.onAppend(this.node, entries, (index) => this.termAt((index - 1) as LogIndex));
    this.inner.append(entries);
  }

  saveHardState(hardState: HardState): void {
    this.staged = hardState;
    this.checker.onCommitStored(hardState);
    this.checker.configs.onCommit(hardState.commitIndex,
      (index) => (index === 0 ? 0 : this.termAt(index) || undefined));
    this.inner.saveHardState(hardState);
  }

  sync(done: (error?: Error) => void): void {
    const staged = this.staged;
    this.inner.sync((error) => {
      if (error === undefined && staged !== undefined) this.checker.onDurable(this.node, staged);
      done(error);
    });
  }

  lastIndex(): LogIndex {
    return this.inner.lastIndex();
  }
}

/** Bytes a hostile actor puts in every entry and snapshot it forges. */
export const FORGED_MARKER = 'forged/';
const FORGED_BYTES = new TextEncoder().encode(FORGED_MARKER);

function containsForgedMarker(data: Uint8Array): boolean {
  const first = FORGED_BYTES[0]!;
  outer: for (let i = 0; i + FORGED_BYTES.length <= data.length; i++) {
    if (data[i] !== first) continue;
    for (let j = 1; j < FORGED_BYTES.length; j++) {
      if (data[i + j] !== FORGED_BYTES[j]) continue outer;
    }
    return true;
  }
  return false;
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** `same command bytes`, or where two commands first differ. */
function describeDifference(before: Uint8Array, now: Uint8Array): string {
  if (equalBytes(before, now)) return 'same command bytes';
  let at = 0;
  while (at < before.length && at < now.length && before[at] === now[at]) at++;
  return `command bytes differ from byte ${at} (${before.length} vs ${now.length} bytes)`;
}
