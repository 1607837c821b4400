/**
 * The membership checker of the raft scenario: configuration changes never produce two disjoint
 * majorities. At every moment, the configurations that could still be in force at some future
 * leader ("alive") must pairwise have overlapping majorities; Raft's single-server changes
 * guarantee it only with the rule that a leader first commits an entry of its own term (thesis
 * §4.1, corrected), and one change at a time.
 *
 * A configuration (a `config` entry, identified by index and term, or the bootstrap one) stops
 * being alive when: a node commits a different entry at its index; a node commits an entry of a
 * higher term before its index (no future leader's log can then hold it, Raft §5.4); or a later
 * configuration is committed (every future leader's log holds that one). What is committed is
 * learned from the hard states nodes store. A new configuration is checked against every alive
 * one once the step that wrote it is over (so commits stored in the same step count).
 */
import type { LogIndex, NodeId } from '../../../core/ids.js';
import { decodeMembership } from '../../../core/raft/index.js';
import type { Entry } from '../../../core/raft/types.js';

interface ConfigRecord {
  readonly index: number;
  readonly term: number;
  readonly voters: readonly NodeId[];
  committed: boolean;
  dead: boolean;
}

/** Two majorities, one of each voter set, that share no member; undefined when impossible. */
export function disjointMajorities(a: readonly NodeId[],
  b: readonly NodeId[]): [NodeId[], NodeId[]] | undefined {
  const quorumA = Math.floor(a.length / 2) + 1;
  const quorumB = Math.floor(b.length / 2) + 1;
  const onlyA = a.filter((x) => !b.includes(x));
  const onlyB = b.filter((x) => !a.includes(x));
  const both = a.filter((x) => b.includes(x));
  const needA = Math.max(0, quorumA - onlyA.length);
  const needB = Math.max(0, quorumB - onlyB.length);
  if (needA + needB > both.length) return undefined;
  return [
    [...onlyA.slice(0, quorumA), ...both.slice(0, needA)],
    [...onlyB.slice(0, quorumB), ...both.slice(needA, needA + needB)],
  ];
}

export class ConfigChecker {
  private readonly records = new Map<string, ConfigRecord>();
  private fresh: ConfigRecord[] = [];

  constructor(bootstrapVoters: readonly NodeId[], private readonly fail: (message: string) => void) {
    this.records.set('0/0', { index: 0, term: 0, voters: bootstrapVoters, committed: true,
      dead: false });
  }

  /** A node stores `entry`; the first sighting of a config entry is its leader's append. */
  onAppend(entry: Entry): void {
    if (entry.kind !== 'config') return;
    const key = `${entry.index}/${entry.term}`;
    if (this.records.has(key)) return;
    const membership = decodeMembership(entry.data);
    if (typeof membership === 'string') {
      this.fail(`config entry ${key} does not decode: ${membership}`);
      return;
    }
    const record: ConfigRecord = { index: entry.index, term: entry.term,
      voters: membership.voters, committed: false, dead: false };
    this.records.set(key, record);
    this.fresh.push(record);
  }

  /** A node stores commit index `commitIndex`; `termAt` reads its log (undefined: unknown). */
  onCommit(commitIndex: number, termAt: (index: LogIndex) => number | undefined): void {
    const committedTerm = termAt(commitIndex as LogIndex);
    let newestCommitted = -1;
    for (const record of this.records.values()) {
      if (record.dead || record.index === 0) continue;
      if (record.index <= commitIndex) {
        const term = termAt(record.index as LogIndex);
        if (term === undefined) continue;
        if (term === record.term) {
          record.committed = true;
          newestCommitted = Math.max(newestCommitted, record.index);
        } else {
          record.dead = true;
        }
      } else if (!record.committed && committedTerm !== undefined && record.term < committedTerm) {
        record.dead = true;
      }
    }
    if (newestCommitted < 0) return;
    for (const record of this.records.values()) {
      if (record.index < newestCommitted) record.dead = true;
    }
  }

  /** Checks the configurations written in the step that just ended. */
  afterStep(): void {
    if (this.fresh.length === 0) return;
    const fresh = this.fresh;
    this.fresh = [];
    for (const record of fresh) {
      if (record.dead) continue;
      for (const other of this.records.values()) {
        if (other === record || other.dead) continue;
        const disjoint = disjointMajorities(record.voters, other.voters);
        if (disjoint === undefined) continue;
        this.fail(`configuration ${describe(record)} and ${describe(other)}, both alive, can ` +
          `form disjoint majorities {${disjoint[0].join(',')}} and {${disjoint[1].join(',')}}`);
        return;
      }
    }
  }
}

function describe(record: ConfigRecord): string {
  const where = record.index === 0 ? 'bootstrap' : `at ${record.index}/${record.term}`;
  return `${where} (voters ${record.voters.join(',')}${record.committed ? ', committed' : ''})`;
}
