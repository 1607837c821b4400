/**
 * The simulator's seeded pseudo-random generator: sfc32 (Chris Doty-Humphrey's Small Fast
 * Counting generator), seeded through splitmix32. Fast, 128 bits of state, passes PractRand for
 * the volumes a simulation draws. Every random choice of a run comes from one seed through
 * `fork()`, so the seed alone reproduces the run.
 */
import { assert } from '../core/assert.js';
import type { Random } from '../core/random.js';

export const SEED_MAX = 0xffff_ffff;

export class Prng implements Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    assert(Number.isInteger(seed) && seed >= 0 && seed <= SEED_MAX,
      () => `Prng seed must be an integer in [0, ${SEED_MAX}]: ${seed}`);
    let s = seed >>> 0;
    const next = (): number => {
      // splitmix32: spreads a small seed over the whole state.
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  nextUint32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t;
  }

  /** An independent generator derived from this one (for a node, the network, the nemesis). */
  fork(): Prng {
    return new Prng(this.nextUint32());
  }
}
