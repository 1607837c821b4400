/**
 * The resource that election and lock holders write to, guarded by a FenceState (the same
 * code a real resource uses through `Fence`): it accepts a write whose fencing token is at
 * least the highest it accepted, and refuses a lower one. A write reaches it a short, random
 * network delay after the holder sent it; the resource itself never pauses. A new holder
 * announces its token first, and writes only once the announce was acknowledged.
 */
import { FenceState, type FenceDecision } from '../../../core/election/index.js';
import { randomFloat } from '../../../core/random.js';
import type { Prng } from '../../prng.js';
import type { Scheduler } from '../../scheduler.js';
import type { Leadership, RecipeChecker } from './recipe-checker.js';

/** The longest trip of a write to the resource. Unit: ms (real). */
const WRITE_DELAY_MS_MAX = 3;

export class FencedResources {
  private readonly fences = new Map<string, FenceState>();

  constructor(
    private readonly scheduler: Scheduler,
    private readonly prng: Prng,
    private readonly checker: RecipeChecker,
  ) {}

  /** The holder of `leadership` sends a write with `token`; the fence decides on arrival. */
  write(leadership: Leadership, token: number): void {
    this.scheduler.schedule(WRITE_DELAY_MS_MAX * randomFloat(this.prng), () => {
      this.checker.written(leadership, token, this.fence(leadership.recipe).offer(token));
    });
  }

  /**
   * The announce step (`Fence.announce`): a new holder registers `token` before its first
   * write; the fence decides on arrival, and the answer travels back to `acked`.
   */
  announce(leadership: Leadership, token: number, acked: (decision: FenceDecision) => void):
    void {
    this.scheduler.schedule(WRITE_DELAY_MS_MAX * randomFloat(this.prng), () => {
      const decision = this.fence(leadership.recipe).offer(token);
      this.checker.announced(leadership, token, decision);
      this.scheduler.schedule(WRITE_DELAY_MS_MAX * randomFloat(this.prng), () => acked(decision));
    });
  }

  private fence(recipe: string): FenceState {
    let fence = this.fences.get(recipe);
    if (fence === undefined) {
      fence = new FenceState();
      this.fences.set(recipe, fence);
    }
    return fence;
  }
}
