/**
 * The shape check a transport applies to every decoded value before it reaches a protocol:
 * the wire is untrusted, so a value becomes a message only through a total validator that
 * never throws and returns a value holding only the known fields (a copy, or the decoded value
 * itself when it is a plain object with nothing else).
 */
import { validateRaftMessage, type RaftMessage } from '../core/raft/messages.js';
import type { SwimMessage } from '../core/swim/messages.js';
import { validateSwimMessage } from '../core/swim/validate-message.js';

export type MessageValidation<M> =
  | { readonly ok: true; readonly message: M }
  | { readonly ok: false; readonly problem: string };

/** Total: returns a verdict for any value, never throws. */
export type MessageValidator<M> = (value: unknown) => MessageValidation<M>;

/** Raft's peer messages (`validateRaftMessage`, which answers `M | { error }`). */
export const RAFT_MESSAGE_VALIDATOR: MessageValidator<RaftMessage> = (value) => {
  const result = validateRaftMessage(value);
  return 'error' in result ? { ok: false, problem: result.error } : { ok: true, message: result };
};

/** SWIM's gossip messages (`validateSwimMessage` already answers in this shape). */
export const SWIM_MESSAGE_VALIDATOR: MessageValidator<SwimMessage> = validateSwimMessage;

/**
 * Runs `validate` and turns a throw (a validator bug) into a refusal: a hostile frame must
 * not crash the node even through a validator that is not as total as it promises.
 */
export function validateSafely<M>(
  validate: MessageValidator<M>, value: unknown,
): MessageValidation<M> {
  try {
    return validate(value);
  } catch (error) {
    const why = error instanceof Error ? error.message : 'unknown';
    return { ok: false, problem: `validator threw: ${why}` };
  }
}
