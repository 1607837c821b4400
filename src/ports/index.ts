/**
 * @packageDocumentation
 * The ports: interfaces only, the seams between the pure protocols and the world. Each has a
 * real adapter in `src/adapters` and a deterministic twin in `src/sim`, and both pass the same
 * compliance suite in `test/compliance`.
 */
export type { Clock } from './clock.js';
export type { Timer, TimerHandle } from './timer.js';
export type { Transport, TransportHandler } from './transport.js';
export type { Storage } from './storage.js';
export type { Logger, LogFields } from './logger.js';
export { SILENT_LOGGER } from './logger.js';
export type { Random } from './random.js';
