/**
 * The holding checkers (docs/elections.md, "Holding, made exact"), against the simulator's real
 * (virtual) time. The election and lock clients call `held()` right before each fenced write,
 * as the docs tell holders to, and write only when it said true. Per holding:
 *
 * - held: no write is sent while `held()` is false; `held()` never says true once the holder's
 *   lease has ended on any member (its true expiry), nor once the lease's local deadline has
 *   passed on the holder's own clock.
 * - holding-end: a release (`resign()`, `unlock()`) aborts the signal with a
 *   HoldingReleasedError (code CONCLAVE_RELEASED, no expiry code), a loss with a
 *   LeadershipLostError (CONCLAVE_LEASE_EXPIRED); either is named 'AbortError'.
 * - unlock-after-loss: `resign()`/`unlock()` called after a loss settles at once (no round
 *   trip to the cluster: the revoke begun at the loss goes on behind it).
 * - announce: a holder's first write waits for its announce's acknowledgement (counted here;
 *   the fence checker in recipe-checker.ts holds the fence to its rule).
 */
import type { CoordError } from '../../../errors.js';
import { HoldingReleasedError, LeadershipLostError } from '../../../client/recipe-driver.js';
import type { Violation } from '../../scenario.js';
import type { Leadership } from './recipe-checker.js';

export interface HeldCounts {
  /** `held()` calls right before a write. */
  checks: number;
  /** Of those, answered false: the write was not sent. */
  refused: number;
  /** Holdings whose signal reason was checked, by kind. */
  releasesChecked: number;
  lossesChecked: number;
  /** Unlocks or resigns after a loss, each checked to settle at once. */
  unlocksAfterLoss: number;
  /** Announces acknowledged by the resource before the holder's first write. */
  announced: number;
}

/** What the checker needs to know of a holder's lease at the moment of a check. */
export interface HeldView {
  readonly leaseId: number;
  /** Now minus the lease's local deadline, on the holder's clock (>= 0: passed). Unit: ms. */
  readonly pastDeadlineMs: number;
}

export class HeldChecker {
  readonly violations: Violation[] = [];
  readonly counts: HeldCounts = {
    checks: 0, refused: 0, releasesChecked: 0, lossesChecked: 0, unlocksAfterLoss: 0,
    announced: 0,
  };

  constructor(
    private readonly nowMs: () => number,
    /** When the lease ended on the first member that ended it (undefined: not ended). */
    private readonly leaseEndedAtMs: (leaseId: number) => number | undefined,
  ) {}

  /** The holder of `l` asked `held()` (answer `held`) and then wrote (`sent`) or not. */
  checked(l: Leadership, view: HeldView, held: boolean, sent: boolean): void {
    this.counts.checks++;
    if (!held) this.counts.refused++;
    const who = `${l.recipe}: ${l.client} (token ${l.fencingToken}, lease ${view.leaseId})`;
    if (sent && !held) this.violate('held', `${who} wrote while held() was false`);
    if (!held) return;
    const endedAtMs = this.leaseEndedAtMs(view.leaseId);
    if (endedAtMs !== undefined) {
      this.violate('held', `${who}: held() said true ${fmt(this.nowMs() - endedAtMs)} ms `
        + `after its lease ended at a member${sent ? ', and it wrote' : ''}`);
    } else if (view.pastDeadlineMs >= 0) {
      this.violate('held', `${who}: held() said true ${fmt(view.pastDeadlineMs)} ms past the `
        + `lease's local deadline`);
    }
  }

  /** The holding's signal aborted with `reason`; `released`: the holder had let it go. */
  ended(l: Leadership, reason: unknown, released: boolean): void {
    const who = `${l.recipe}: ${l.client} (token ${l.fencingToken})`;
    const error = reason as CoordError;
    if (error?.name !== 'AbortError') {
      this.violate('holding-end', `${who}: the signal's reason is named ${String(error?.name)}, `
        + 'not AbortError');
    }
    if (reason instanceof HoldingReleasedError) {
      this.counts.releasesChecked++;
      if (!released || error.code !== 'CONCLAVE_RELEASED') {
        this.violate('holding-end', `${who}: ended as released (${error.code}) though `
          + `${released ? 'it was released' : 'its holder did not let it go'}`);
      }
    } else if (reason instanceof LeadershipLostError) {
      this.counts.lossesChecked++;
      if (error.code !== 'CONCLAVE_LEASE_EXPIRED') {
        this.violate('holding-end',
          `${who}: a loss (${reason.lossReason}) with code ${error.code}`);
      }
    } else if (released) {
      this.violate('holding-end', `${who}: released, but the reason is ${String(reason)}`);
    }
  }

  /** An unlock or resign after a loss settled `afterMs` after it was called. */
  unlockedAfterLoss(l: Leadership, afterMs: number): void {
    this.counts.unlocksAfterLoss++;
    if (afterMs > 0) {
      this.violate('unlock-after-loss', `${l.recipe}: ${l.client}'s unlock after a loss took `
        + `${fmt(afterMs)} ms`);
    }
  }

  announced(): void {
    this.counts.announced++;
  }

  private violate(checker: string, message: string): void {
    this.violations.push({ checker, atMs: this.nowMs(), message });
  }
}

function fmt(ms: number): string {
  return ms.toFixed(1);
}
