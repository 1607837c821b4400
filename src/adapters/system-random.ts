/**
 * Randomness from the operating system, for real nodes (the simulator passes seeded
 * generators instead). Draws are buffered: one `getRandomValues` call serves 256 numbers.
 */
import { webcrypto } from 'node:crypto';
import type { Random } from '../core/random.js';

const POOL_SIZE = 256;

export class SystemRandom implements Random {
  private readonly pool = new Uint32Array(POOL_SIZE);
  private next = POOL_SIZE;

  nextUint32(): number {
    if (this.next === POOL_SIZE) {
      webcrypto.getRandomValues(this.pool);
      this.next = 0;
    }
    return this.pool[this.next++]!;
  }
}
