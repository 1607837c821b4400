/**
 * One candidate's campaign for an election or a lock, as a pure state machine: the driver (the
 * client over HTTP, or a simulated client) performs each action against the store and reports
 * the answer; the machine decides. One protocol, two drivers, so the lease simulation checks
 * the decisions that ship.
 *
 * The recipe (ZooKeeper's and etcd's, with the checks that keep it safe under pauses):
 * 1. create: put the candidate key, attached to the candidate's lease, unless it exists
 *    (a retry); its create revision is the candidate's place in line and its fencing token.
 * 2. scan: read every candidate key; the one with the highest create revision below ours is
 *    our predecessor. None: go to 4. Our own key missing: our lease ended, we lost.
 * 3. wait: watch only the predecessor's key until it is deleted (no herd: each waiter watches
 *    one key), then scan again (an earlier candidate may still be there; our key may be gone).
 * 4. claim: a transaction that holds only while our key still has our create revision, and
 *    bumps the generation key (the leadership's term). Refused: our key is gone, we lost.
 * 5. elected, provided our lease's local deadline has not passed: we hold until that deadline
 *    (which the driver moves on with each acknowledged keep-alive).
 * Every step checks the lease first: a campaign never waits on, or reports success after, a
 * lease that may have ended.
 */
import { assert } from '../assert.js';
import { leaseHolderDeadlineMs } from '../kv/lease-timing.js';
import { candidateKey, type RecipeKeys } from './keys.js';

/** Test-only defects that the lease simulation must catch. Never set outside tests. */
export type CampaignMutant =
  /**
   * When the predecessor's key goes, take leadership at once: no scan, no claim, no look at
   * the lease, and hold for a fresh TTL from now, as if the lease had just been renewed.
   * Lease ends reported while waiting are ignored.
   */
  | 'claimWithoutLeaseRecheck'
  /**
   * The driver's `held()` answers from the signal alone: no look at the clock, no stall
   * check, so a holder whose own timer runs first after a pause believes it still holds.
   * (The Campaign itself ignores it; src/client/recipe-driver.ts plants it.)
   */
  | 'heldWithoutClockCheck';

export interface CampaignConfig {
  readonly keys: RecipeKeys;
  readonly leaseId: number;
  /** The value stored under the candidate key (the candidate's id, or proclaimed value). */
  readonly value: string;
  /** The lease's TTL. Unit: ms. Only the mutant uses it. */
  readonly leaseTtlMs: number;
  /** ρ, as the lease deadline uses it. Only the mutant uses it. */
  readonly clockRateErrorMax: number;
  /** The holder's safety margin, as the lease deadline uses it. Unit: ms. */
  readonly leaseMarginMs: number;
  readonly mutants?: readonly CampaignMutant[];
}

/** The candidate's lease as the driver sees it at the moment of an event. */
export interface HolderView {
  /** Now on the holder's monotonic clock. Unit: ms. */
  readonly nowMs: number;
  /** The lease's local deadline on the same clock (leaseHolderDeadlineMs). Unit: ms. */
  readonly leaseDeadlineMs: number;
}

export interface CandidateEntry {
  readonly key: string;
  readonly createRevision: number;
}

export type CampaignLossReason = 'lease-ended' | 'key-deleted' | 'stalled';

export type CampaignAction =
  | { readonly kind: 'create'; readonly key: string; readonly value: string;
    readonly leaseId: number }
  | { readonly kind: 'scan'; readonly prefix: string }
  | { readonly kind: 'wait-deleted'; readonly key: string; readonly afterRevision: number }
  /**
   * A transaction: if `key`'s create revision is still `createRevision`, put `value` under
   * `generationKey` and read it back; its version is the term. Else: refused.
   */
  | { readonly kind: 'claim'; readonly key: string; readonly createRevision: number;
    readonly generationKey: string; readonly value: string }
  | { readonly kind: 'elected'; readonly key: string; readonly fencingToken: number;
    readonly term: number; readonly holdUntilMs: number }
  | { readonly kind: 'lost'; readonly reason: CampaignLossReason; readonly detail: string };

export type CampaignPhase =
  'idle' | 'creating' | 'scanning' | 'waiting' | 'claiming' | 'elected' | 'lost';

export class Campaign {
  private phaseValue: CampaignPhase = 'idle';
  private createRevision = 0;
  private termValue = 0;
  readonly key: string;

  constructor(private readonly config: CampaignConfig) {
    assert(Number.isSafeInteger(config.leaseId) && config.leaseId > 0,
      () => `a campaign needs a lease id, got ${config.leaseId}`);
    this.key = candidateKey(config.keys, config.leaseId);
  }

  get phase(): CampaignPhase {
    return this.phaseValue;
  }

  /** The candidate key's create revision (0 until created): the fencing token once elected. */
  get fencingToken(): number {
    return this.createRevision;
  }

  /** The generation key's version when this campaign claimed leadership (0 before). */
  get term(): number {
    return this.termValue;
  }

  start(): CampaignAction {
    this.expect('idle', 'start');
    this.phaseValue = 'creating';
    return { kind: 'create', key: this.key, value: this.config.value,
      leaseId: this.config.leaseId };
  }

  /** The create step answered: the candidate key's create revision (new or existing). */
  onCreated(createRevision: number, view: HolderView): CampaignAction {
    this.expect('creating', 'onCreated');
    assert(Number.isSafeInteger(createRevision) && createRevision > 0,
      () => `a created key has a positive create revision, got ${createRevision}`);
    this.createRevision = createRevision;
    return this.leaseEnded(view) ?? this.scan();
  }

  /** The scan answered: every key under the candidate prefix, read at store `revision`. */
  onScanned(candidates: readonly CandidateEntry[], revision: number,
    view: HolderView): CampaignAction {
    this.expect('scanning', 'onScanned');
    const ended = this.leaseEnded(view);
    if (ended !== undefined) return ended;
    const own = candidates.find((c) => c.key === this.key);
    if (own === undefined || own.createRevision !== this.createRevision) {
      return this.lose('key-deleted', `candidate key ${this.key} is gone: its lease ended`);
    }
    let predecessor: CandidateEntry | undefined;
    for (const c of candidates) {
      if (c.createRevision < this.createRevision
        && (predecessor === undefined || c.createRevision > predecessor.createRevision)) {
        predecessor = c;
      }
    }
    if (predecessor !== undefined) {
      this.phaseValue = 'waiting';
      return { kind: 'wait-deleted', key: predecessor.key, afterRevision: revision };
    }
    this.phaseValue = 'claiming';
    return { kind: 'claim', key: this.key, createRevision: this.createRevision,
      generationKey: this.config.keys.generationKey, value: this.config.value };
  }

  /** The predecessor's key was deleted (resigned, unlocked, or its lease ended). */
  onPredecessorDeleted(view: HolderView): CampaignAction {
    this.expect('waiting', 'onPredecessorDeleted');
    if (this.mutant('claimWithoutLeaseRecheck')) {
      this.termValue += 1;
      return this.elect(leaseHolderDeadlineMs(view.nowMs, this.config.leaseTtlMs,
        this.config.clockRateErrorMax, this.config.leaseMarginMs));
    }
    return this.leaseEnded(view) ?? this.scan();
  }

  /**
   * The claim answered. `term`: the generation key's version after the claim; undefined when
   * the claim was refused (our key no longer has our create revision).
   */
  onClaimed(term: number | undefined, view: HolderView): CampaignAction {
    this.expect('claiming', 'onClaimed');
    if (term === undefined) {
      return this.lose('key-deleted', `candidate key ${this.key} is gone: its lease ended`);
    }
    assert(Number.isSafeInteger(term) && term > 0, () => `a term is positive, got ${term}`);
    this.termValue = term;
    return this.leaseEnded(view) ?? this.elect(view.leaseDeadlineMs);
  }

  /**
   * The lease ended (its local deadline passed, the server said it expired, or it was revoked),
   * the candidate key was deleted, or the process stalled. Ends the campaign or the
   * leadership; undefined when there is nothing to end (already lost, or the mutant ignores it).
   */
  onLost(reason: CampaignLossReason, detail: string): CampaignAction | undefined {
    if (this.phaseValue === 'lost') return undefined;
    if (this.phaseValue === 'waiting' && this.mutant('claimWithoutLeaseRecheck')) return undefined;
    return this.lose(reason, detail);
  }

  /** Resigned or unlocked by its holder: the campaign is over. */
  end(): void {
    this.phaseValue = 'lost';
  }

  private scan(): CampaignAction {
    this.phaseValue = 'scanning';
    return { kind: 'scan', prefix: this.config.keys.candidatePrefix };
  }

  private elect(holdUntilMs: number): CampaignAction {
    this.phaseValue = 'elected';
    return { kind: 'elected', key: this.key, fencingToken: this.createRevision,
      term: this.termValue, holdUntilMs };
  }

  private leaseEnded(view: HolderView): CampaignAction | undefined {
    if (view.nowMs < view.leaseDeadlineMs) return undefined;
    return this.lose('lease-ended', `lease ${this.config.leaseId}: its local deadline passed `
      + `${view.nowMs - view.leaseDeadlineMs} ms ago`);
  }

  private lose(reason: CampaignLossReason, detail: string): CampaignAction {
    this.phaseValue = 'lost';
    return { kind: 'lost', reason, detail };
  }

  private mutant(name: CampaignMutant): boolean {
    return this.config.mutants?.includes(name) === true;
  }

  private expect(phase: CampaignPhase, call: string): void {
    assert(this.phaseValue === phase,
      () => `campaign ${this.key}: ${call} in phase ${this.phaseValue}, expected ${phase}`);
  }
}

/** The leader of an election: the candidate with the lowest create revision, if any. */
export function electionLeader<T extends CandidateEntry>(candidates: readonly T[]): T | undefined {
  let leader: T | undefined;
  for (const c of candidates) {
    if (leader === undefined || c.createRevision < leader.createRevision) leader = c;
  }
  return leader;
}
