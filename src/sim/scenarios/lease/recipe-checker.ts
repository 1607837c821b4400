/**
 * The election and lock checkers, against the simulator's real (virtual) time. A leadership (or
 * lock holding) lasts, in real time, from the instant its holder's campaign resolved to the
 * instant its holding ended on the holder's process (its leadership's or lock's `signal`
 * aborted: the first of its local deadline, a stall verdict, the lease found ended, its key
 * deleted, a release). Per election or lock:
 *
 * - no-overlap: no two holders believe they hold it at the same real instant. Checked when a
 *   holding begins (an overlap always includes some holding's beginning). Under
 *   `--timing-violated` (holders frozen longer than their TTL) overlaps must happen: they are
 *   counted, not failures.
 * - fencing-token: each leadership's token is larger than every earlier one's.
 * - term: each leadership's term is at least 1 more than every earlier one's.
 * - fence: the resource (FenceState) never accepts a token lower than one it accepted before,
 *   counted here on the checker's own record of accepted tokens (stale writes accepted: must be
 *   0 in every mode), and it refuses only such tokens.
 *
 * Also counted, not checked: writes accepted from a holder that a newer leadership had already
 * replaced. Fencing cannot refuse those while the newer holder has not written yet; they are
 * why a resource must check the token on every write, not only the first.
 */
import type { NodeId } from '../../../core/ids.js';
import type { FenceDecision } from '../../../core/election/index.js';
import type { Violation } from '../../scenario.js';

/** One holding of an election or lock, as the checker saw it. */
export interface Leadership {
  /** `election/<name>` or `lock/<name>`. */
  readonly recipe: string;
  readonly client: NodeId;
  readonly fencingToken: number;
  readonly term: number;
  readonly beganAtMs: number;
  endedAtMs: number | undefined;
}

export interface RecipeCounts {
  leaderships: number;
  /** Leaderships that followed an earlier one of the same recipe: each checked against it. */
  handovers: number;
  /** Pairs of holdings that overlapped in real time. */
  overlaps: number;
  /** The longest overlap seen. Unit: ms (real). */
  overlapMsMax: number;
  writesAccepted: number;
  staleRefused: number;
  staleAccepted: number;
  /** Accepted from a holder already replaced by a newer leadership (no newer write yet). */
  supersededAccepted: number;
}

interface RecipeState {
  readonly open: Set<Leadership>;
  newest: Leadership | undefined;
  tokenMax: number;
  termMax: number;
  /** The highest token the resource accepted, on the checker's own record. */
  acceptedMax: number;
}

interface OpenOverlap {
  readonly a: Leadership;
  readonly b: Leadership;
  readonly sinceMs: number;
}

export class RecipeChecker {
  readonly violations: Violation[] = [];
  readonly counts: RecipeCounts = {
    leaderships: 0, handovers: 0, overlaps: 0, overlapMsMax: 0, writesAccepted: 0,
    staleRefused: 0, staleAccepted: 0, supersededAccepted: 0,
  };
  private readonly recipes = new Map<string, RecipeState>();
  private readonly overlapsOpen = new Set<OpenOverlap>();

  constructor(
    private readonly nowMs: () => number,
    /** `--timing-violated`: overlaps are the expected outcome, counted and not failures. */
    private readonly overlapsExpected: boolean,
  ) {}

  /** A holder's campaign said `elected`: it believes it holds `recipe` from now on. */
  began(recipe: string, client: NodeId, fencingToken: number, term: number): Leadership {
    const nowMs = this.nowMs();
    const state = this.state(recipe);
    const leadership: Leadership = { recipe, client, fencingToken, term, beganAtMs: nowMs,
      endedAtMs: undefined };
    this.counts.leaderships++;
    for (const other of state.open) this.overlap(other, leadership);
    const before = state.newest;
    if (before !== undefined) {
      this.counts.handovers++;
      if (fencingToken <= state.tokenMax) {
        this.violate('fencing-token', `${recipe}: ${client} leads with token ${fencingToken}, `
          + `not above ${state.tokenMax} of an earlier leadership (last: ${describe(before)})`);
      }
      if (term < state.termMax + 1) {
        this.violate('term', `${recipe}: ${client} leads in term ${term}; an earlier leadership `
          + `had term ${state.termMax} (last: ${describe(before)})`);
      }
    }
    state.open.add(leadership);
    state.newest = leadership;
    state.tokenMax = Math.max(state.tokenMax, fencingToken);
    state.termMax = Math.max(state.termMax, term);
    return leadership;
  }

  /** The holding ended on the holder's process: it no longer believes. */
  ended(leadership: Leadership): void {
    if (leadership.endedAtMs !== undefined) return;
    const nowMs = this.nowMs();
    leadership.endedAtMs = nowMs;
    this.state(leadership.recipe).open.delete(leadership);
    for (const overlap of [...this.overlapsOpen]) {
      if (overlap.a !== leadership && overlap.b !== leadership) continue;
      this.overlapsOpen.delete(overlap);
      this.counts.overlapMsMax = Math.max(this.counts.overlapMsMax, nowMs - overlap.sinceMs);
    }
  }

  /** The resource's fence decided on a write of `leadership`'s holder, with `token`. */
  written(leadership: Leadership, token: number, decision: FenceDecision): void {
    const state = this.state(leadership.recipe);
    const where = `${leadership.recipe}: write of ${leadership.client} with token ${token}`;
    if (decision.kind === 'stale') {
      this.counts.staleRefused++;
      if (token >= state.acceptedMax) {
        this.violate('fence', `${where} refused, though the highest accepted is `
          + `${state.acceptedMax}`);
      }
      return;
    }
    if (token < state.acceptedMax) {
      this.counts.staleAccepted++;
      this.violate('fence', `${where} accepted after token ${state.acceptedMax} was accepted`);
      return;
    }
    state.acceptedMax = token;
    this.counts.writesAccepted++;
    if (state.newest !== leadership) this.counts.supersededAccepted++;
  }

  /** The resource's fence decided on the announce of `leadership`'s holder, with `token`. */
  announced(leadership: Leadership, token: number, decision: FenceDecision): void {
    const state = this.state(leadership.recipe);
    if (decision.kind === 'stale') {
      if (token >= state.acceptedMax) {
        this.violate('fence', `${leadership.recipe}: announce of ${leadership.client} with token `
          + `${token} refused, though the highest accepted is ${state.acceptedMax}`);
      }
      return;
    }
    if (token < state.acceptedMax) {
      this.violate('fence', `${leadership.recipe}: announce of ${leadership.client} with token `
        + `${token} accepted after token ${state.acceptedMax} was accepted`);
      return;
    }
    state.acceptedMax = token;
  }

  private overlap(earlier: Leadership, later: Leadership): void {
    this.counts.overlaps++;
    this.overlapsOpen.add({ a: earlier, b: later, sinceMs: later.beganAtMs });
    if (this.overlapsExpected) return;
    this.violate('no-overlap', `${later.recipe}: ${describe(later)} elected while `
      + `${describe(earlier)} still believes it holds it`);
  }

  private state(recipe: string): RecipeState {
    let state = this.recipes.get(recipe);
    if (state === undefined) {
      state = { open: new Set(), newest: undefined, tokenMax: 0, termMax: 0, acceptedMax: 0 };
      this.recipes.set(recipe, state);
    }
    return state;
  }

  private violate(checker: string, message: string): void {
    this.violations.push({ checker, atMs: this.nowMs(), message });
  }
}

function describe(l: Leadership): string {
  return `${l.client} (token ${l.fencingToken}, term ${l.term}, since `
    + `${l.beganAtMs.toFixed(1)} ms)`;
}
