/** Randomness is declared in core (the one interface cores consume) and re-exported here. */
export type { Random } from '../core/random.js';
