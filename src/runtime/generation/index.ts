/**
 * @packageDocumentation
 * Durable generation clocks over the Storage port: `GenerationStore` saves a generation
 * crash-safely (temporary file, sync, rename, directory sync, then the callback) and
 * `loadGeneration` reads back the highest durable one, or reports a corrupt file by name.
 *
 * Invariants: after a crash, the loaded generation is at least the last one whose save
 * completed, and never more than the highest one a save was requested for; a torn temporary
 * file is ignored, a corrupt main file stops the node.
 *
 * @example
 * ```ts
 * const loaded = loadGeneration(storage);
 * if (loaded.kind === 'corrupt') throw new Error(loaded.message);
 * const clock = new GenerationClock(generation(loaded.generation));
 * const store = new GenerationStore(storage, loaded.generation);
 * const g = clock.next();
 * store.save(g, (error) => { if (error === undefined) clock.markPersisted(g); });
 * ```
 */
export {
  GENERATION_FILE_NAME,
  GenerationStore,
  generationTmpFileName,
  loadGeneration,
  type GenerationLoadResult,
} from './generation-store.js';
