/**
 * The raft scenario's safety checkers, fed by hooks on every node's events, storage and state
 * machine, so each check runs at the step where its property could first break (Raft Figure 3):
 *
 * - election safety: at most one leader per term, ever;
 * - log matching: two entries with the same index and term carry the same command and follow the
 *   same previous term (which, inductively, makes the whole prefixes equal);
 * - leader completeness: a new leader's log holds every entry any node has applied;
 * - state machine safety: no two nodes apply different entries at one index;
 * - generation clock on disk: a restarted node's recovered term and vote never regress below
 *   what a completed sync made durable.
 */
import type { LogIndex, NodeId, Term } from '../../../core/ids.js';
import type { Entry, HardState } from '../../../core/raft/types.js';
import type { RaftStorage, RecoveredRaftState } from '../../../runtime/raft-storage.js';
import type { Violation } from '../../scenario.js';

interface EntryIdentity {
  readonly dataKey: string;
  readonly kind: string;
  readonly previousTerm: number;
}

export class RaftChecker {
  readonly violations: Violation[] = [];
  private readonly leaderOfTerm = new Map<number, NodeId>();
  private readonly entryAt = new Map<string, EntryIdentity>();
  /** index → term and command of the entry applied there (by any node). */
  private readonly applied = new Map<number, { term: number; dataKey: string }>();
  private readonly durableHardState = new Map<NodeId, HardState>();
  elections = 0;

  constructor(private readonly nowMs: () => number) {}

  private fail(checker: string, message: string): void {
    if (this.violations.length < 50) this.violations.push({ checker, atMs: this.nowMs(), message });
  }

  /** A node became leader of `term`; `entryAt` reads its log. */
  onLeader(node: NodeId, term: Term, entryAt: (index: LogIndex) => Entry | undefined): void {
    this.elections++;
    const existing = this.leaderOfTerm.get(term);
    if (existing !== undefined && existing !== node) {
      this.fail('election-safety', `two leaders in term ${term}: ${existing} and ${node}`);
    }
    this.leaderOfTerm.set(term, node);
    for (const [index, committed] of this.applied) {
      const entry = entryAt(index as LogIndex);
      if (entry === undefined || entry.term !== committed.term || dataKey(entry.data) !== committed.dataKey) {
        this.fail('leader-completeness', `new leader ${node} (term ${term}) lacks committed entry ` +
          `${index} (term ${committed.term}); it has ${entry === undefined ? 'nothing' : `term ${entry.term}`}`);
        return;
      }
    }
  }

  /** Entries a node is about to store (log matching is checked on every write). */
  onAppend(node: NodeId, entries: readonly Entry[], termBefore: (index: LogIndex) => number): void {
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      const previousTerm = i > 0 ? entries[i - 1]!.term : termBefore(entry.index);
      const identity: EntryIdentity = { dataKey: dataKey(entry.data), kind: entry.kind, previousTerm };
      const key = `${entry.index}/${entry.term}`;
      const known = this.entryAt.get(key);
      if (known === undefined) {
        this.entryAt.set(key, identity);
      } else if (known.dataKey !== identity.dataKey || known.kind !== identity.kind ||
        known.previousTerm !== identity.previousTerm) {
        this.fail('log-matching', `${node} stores a different entry at index ${entry.index} term ` +
          `${entry.term} (previous term ${previousTerm} vs ${known.previousTerm})`);
      }
    }
  }

  onApply(node: NodeId, entry: Entry): void {
    const known = this.applied.get(entry.index);
    const key = dataKey(entry.data);
    if (known === undefined) {
      this.applied.set(entry.index, { term: entry.term, dataKey: key });
    } else if (known.term !== entry.term || known.dataKey !== key) {
      this.fail('state-machine-safety', `${node} applies term ${entry.term} at index ` +
        `${entry.index}, where term ${known.term} was applied before`);
    }
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
 * Wraps a node's RaftStorage to tell the checker what is written and what became durable.
 */
export class CheckedRaftStorage implements RaftStorage {
  private staged: HardState | undefined;

  constructor(
    private readonly inner: RaftStorage,
    private readonly node: NodeId,
    private readonly checker: RaftChecker,
    private readonly termAt: (index: LogIndex) => number,
  ) {
    checker.onRecovered(node, inner.recovered);
  }

  get recovered(): RecoveredRaftState {
    return this.inner.recovered;
  }

  append(entries: readonly Entry[]): void {
    this.checker.onAppend(this.node, entries, (index) => this.termAt((index - 1) as LogIndex));
    this.inner.append(entries);
  }

  saveHardState(hardState: HardState): void {
    this.staged = hardState;
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

function dataKey(data: Uint8Array): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < data.length; i++) hash = Math.imul(hash ^ data[i]!, 0x01000193);
  return `${data.length}:${(hash >>> 0).toString(16)}`;
}
