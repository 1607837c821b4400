/**
 * @packageDocumentation
 * The Generation Clock pattern as small pure pieces: a number that only grows (Raft's `Term`,
 * the emergent coordinator's `Generation`), the rule every protocol applies to an incoming
 * message's generation, and the persist-before-use discipline.
 *
 * The rule (`classifyIncoming`, `GenerationClock.observe`): a message from a lower generation is
 * rejected and the sender is told the current one (so it steps down); an equal one is accepted;
 * a higher one is adopted, and the receiver steps down from any role it held.
 *
 * Invariants: a clock's `current` and `durable` generations never decrease and
 * `durable <= current`; a generation is used (messages that depend on it are sent) only once it
 * is durable (`assertUsable`); records on disk carry a CRC-32 and are checked on read and write.
 * Persisting goes through `GenerationStore` in src/runtime/generation (write a temporary file,
 * sync, rename, sync the directory).
 *
 * @example
 * ```ts
 * import { GenerationClock } from './core/generation/index.js';
 * import { generation, type Generation } from './core/ids.js';
 *
 * const clock = new GenerationClock<Generation>(generation(3)); // loaded from disk
 * const g = clock.next();                    // 4, pending: become coordinator
 * store.save(g, (error) => {                 // persist before use
 *   if (error === undefined) { clock.markPersisted(g); clock.assertUsable(); broadcast(g); }
 * });
 * const decision = clock.observe(generation(2)); // { kind: 'reject', current: 4 }
 * ```
 */
export {
  GenerationClock,
  classifyIncoming,
  compareGenerations,
  isValidGeneration,
  type GenerationComparison,
  type GenerationDecision,
} from './generation-clock.js';
export {
  GENERATION_RECORD_SIZE_BYTES,
  decodeGenerationRecord,
  encodeGenerationRecord,
  type GenerationRecordDecoded,
} from './generation-record.js';
