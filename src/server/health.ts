/**
 * `GET /health` on the client port, for load balancers and Kubernetes probes (etcd's /health
 * is the model): 200 `{"health":"true"}` when this member can serve, else 503
 * `{"health":"false","reason":"..."}` naming the first reason it cannot. A member is healthy
 * when it is running, knows a leader in its term (a partitioned follower forgets it at its
 * election timeout, a partitioned leader steps down by check-quorum), has applied its log to
 * within HEALTH_APPLY_LAG_ENTRIES_MAX of its commit index, and raises no NOSPACE alarm (as
 * etcd's /health reports alarms). Nothing is proposed: a probe every second costs no log entry.
 */
import type { RaftStatus } from '../core/raft/index.js';

/**
 * Committed entries a member may have left to apply and still be healthy. Unit: entries.
 * Default: 1000. Why: a member applies a thousand small entries in a few milliseconds, so a
 * larger backlog means it is stalled (a snapshot being restored, a disk that cannot keep up)
 * and its serializable reads are stale by more than a moment; 1000 is also
 * `--snapshot-catchup-entries`' default, past which a leader stops sending a follower appends.
 */
export const HEALTH_APPLY_LAG_ENTRIES_MAX = 1000;

export interface HealthInputs {
  readonly stopped: boolean;
  readonly status: RaftStatus;
  readonly alarms: readonly string[];
}

export type Health =
  | { readonly health: 'true' }
  | { readonly health: 'false'; readonly reason: string };

/** The member's health from its state now (pure: the route reads the state and answers). */
export function healthOf(inputs: HealthInputs): Health {
  const { status } = inputs;
  const sick = (reason: string): Health => ({ health: 'false', reason });
  if (inputs.stopped) return sick(`member ${status.id} is stopped`);
  if (status.leaderId === undefined) {
    return sick(`member ${status.id} knows no leader in term ${status.term}`);
  }
  const lag = status.commitIndex - status.appliedIndex;
  if (lag > HEALTH_APPLY_LAG_ENTRIES_MAX) {
    return sick(`member ${status.id} has ${lag} committed entries left to apply (applied `
      + `${status.appliedIndex}, committed ${status.commitIndex}; healthy within `
      + `${HEALTH_APPLY_LAG_ENTRIES_MAX})`);
  }
  if (inputs.alarms.length > 0) return sick(`alarm ${inputs.alarms.join(',')}`);
  return { health: 'true' };
}
