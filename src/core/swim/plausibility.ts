/**
 * How far one gossip message may move what a member knows (docs/gossip.md, "Bounds on what a
 * message may say"). A correct member raises a number by small steps: its incarnation by one
 * per refutation, ages by one per admission, the coordinator generation by one per claim. A
 * message that jumps far past what the receiver knows is one no correct member could have sent
 * (or news from so far away that dropping it costs only time: the sender's next push-pull, or
 * the record's expiry, brings it back within the bounds). Without these bounds one forged
 * datagram with incarnation 2^53 − 1 left a member unable ever to refute again (the next
 * incarnation is not a safe integer), and a generation of 2^53 − 1 left a cluster leaderless.
 *
 * The bounds, and why they are far above anything honest:
 * - every incarnation, age and generation ≤ `SWIM_VALUE_MAX` (2^40): a member refuting a
 *   thousand times a second would need 35 years to reach it; with every step below, the
 *   arithmetic never leaves the safe integers (2^40 + 2^16 < 2^53);
 * - incarnation ≤ known + `SWIM_INCARNATION_STEP_MAX` (2^16) for an `alive` about a member in
 *   the table: 65,536 refutations this member did not hear of, 18 hours of one refutation a
 *   second behind a partition;
 * - incarnation ≤ known + `SWIM_ACCUSATION_STEP_MAX` (2^15, half the above) for news about this
 *   member itself and for an accusation (`suspect`, `dead`, `left`) about another. Why half: a
 *   member refutes one above the incarnation it is accused at, and every other member must take
 *   that refutation, judged by its own, possibly older, record of the refuter. Were news about
 *   oneself allowed the full step, one forged accusation at the edge (or one sent just past it
 *   that arrived after a refutation) made the member refute one beyond what every peer accepts,
 *   and they held it dead for good (`sim --scenario gossip --members 100 --hostile`, seed 11).
 *   With half: a refutation lands at most 2^15 + 1 above the refuter's own incarnation, within
 *   the step of any peer less than 2^15 refutations behind; and an accusation a peer took within
 *   its bound reaches the accused within the accused's bound, so it is refuted, not ignored;
 * - age ≤ the highest age seen + `SWIM_AGE_STEP_MAX` (2^16): 65,536 admissions not heard of;
 * - an age never decreases for a member in the table (re-admission gives a younger, larger
 *   age), and a member not in the table, announced by an `alive`, may not be older than the
 *   oldest live member this member knows: a stranger cannot become the leader by claiming age
 *   0 (a member that really is older, forgotten after `deadRetainMs`, rejoins younger);
 * - generation ≤ the highest claim seen + `SWIM_GENERATION_STEP_MAX` (1,024 leader changes not
 *   heard of).
 * The rate at which strangers are admitted is bounded separately (`AdmissionBudget`).
 */
import type { GossipUpdate } from './messages.js';

/** The largest incarnation, age or generation accepted at all. */
export const SWIM_VALUE_MAX = 2 ** 40;
/** The largest rise of a known member's incarnation in one `alive` update. */
export const SWIM_INCARNATION_STEP_MAX = 2 ** 16;
/** The largest rise in one accusation, or in news about oneself (see the module comment). */
export const SWIM_ACCUSATION_STEP_MAX = 2 ** 15;
/** The largest age above the highest age seen. */
export const SWIM_AGE_STEP_MAX = 2 ** 16;
/** The largest generation above the highest claim seen. */
export const SWIM_GENERATION_STEP_MAX = 1024;

/** Why an update was dropped as implausible (the labels of the rejection counters). */
export type SwimRejection =
  | 'out-of-range'
  | 'incarnation-jump'
  | 'age-jump'
  | 'age-decrease'
  | 'generation-jump'
  | 'older-than-leader'
  | 'admission-rate';

export const SWIM_REJECTIONS: readonly SwimRejection[] = Object.freeze([
  'out-of-range', 'incarnation-jump', 'age-jump', 'age-decrease', 'generation-jump',
  'older-than-leader', 'admission-rate',
]);

/** What the receiver knows, for judging one update. */
export interface PlausibilityContext {
  readonly ageSeenMax: number;
  readonly generationMax: number;
  /** The member's record, if in the table (for this member itself: its own values). */
  readonly known: { readonly incarnation: number; readonly age: number } | undefined;
  /** Whether the update is about the judging member itself. */
  readonly aboutSelf: boolean;
  /** The oldest live member's age and id (for strangers' `alive`), if any. */
  readonly oldestLive: { readonly age: number; readonly id: string } | undefined;
}

/** Undefined when `update` is plausible; otherwise why not. Pure. */
export function judgeUpdate(update: GossipUpdate,
  c: PlausibilityContext): SwimRejection | undefined {
  if (update.incarnation > SWIM_VALUE_MAX || update.age > SWIM_VALUE_MAX
    || (update.generation ?? 0) > SWIM_VALUE_MAX) return 'out-of-range';
  if (update.age > c.ageSeenMax + SWIM_AGE_STEP_MAX) return 'age-jump';
  if ((update.generation ?? 0) > c.generationMax + SWIM_GENERATION_STEP_MAX) {
    return 'generation-jump';
  }
  const known = c.known;
  if (known !== undefined) {
    const stepMax = c.aboutSelf || update.state !== 'alive'
      ? SWIM_ACCUSATION_STEP_MAX : SWIM_INCARNATION_STEP_MAX;
    if (update.incarnation > known.incarnation + stepMax) return 'incarnation-jump';
    if (update.state === 'alive' && update.incarnation > known.incarnation
      && update.age < known.age) return 'age-decrease';
    return undefined;
  }
  const oldest = c.oldestLive;
  if (update.state === 'alive' && oldest !== undefined && (update.age < oldest.age
    || (update.age === oldest.age && update.member < oldest.id))) return 'older-than-leader';
  return undefined;
}

/** Whether a claimed generation is within reach of the highest claim seen. */
export function plausibleGeneration(generation: number, generationMax: number): boolean {
  return generation <= SWIM_VALUE_MAX && generation <= generationMax + SWIM_GENERATION_STEP_MAX;
}

/**
 * A token bucket for admissions of members not in the table (by `join`, or by news of an
 * `alive` stranger): `burstMax` at once, then `perSecondMax` a second. A join beyond it is not
 * answered (the joiner retries after `joinTimeoutMs`); a stranger's news beyond it is dropped
 * (gossip repeats it, and push-pull carries it again).
 */
export class AdmissionBudget {
  private tokens: number;
  private refilledAtMs = -Infinity;

  constructor(private readonly perSecondMax: number, private readonly burstMax: number) {
    this.tokens = burstMax;
  }

  /** Takes one admission if the budget allows it at `nowMs`. */
  take(nowMs: number): boolean {
    if (this.refilledAtMs !== -Infinity) {
      const earned = ((nowMs - this.refilledAtMs) * this.perSecondMax) / 1000;
      this.tokens = Math.min(this.burstMax, this.tokens + Math.max(0, earned));
    }
    this.refilledAtMs = nowMs;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
