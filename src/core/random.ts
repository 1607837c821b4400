/**
 * The one source of randomness a core may use, passed in by its caller. The simulator hands out
 * seeded generators so a run is reproducible; real nodes get one seeded from the OS.
 */
import { assert } from './assert.js';

export interface Random {
  /** A uniformly distributed integer in [0, 2^32). */
  nextUint32(): number;
}

/** A float in [0, 1) with 32 bits of randomness. */
export function randomFloat(random: Random): number {
  return random.nextUint32() / 0x1_0000_0000;
}

/** An integer in [minInclusive, maxExclusive). */
export function randomInt(random: Random, minInclusive: number, maxExclusive: number): number {
  assert(Number.isInteger(minInclusive) && Number.isInteger(maxExclusive),
    () => `randomInt bounds must be integers: ${minInclusive}, ${maxExclusive}`);
  assert(maxExclusive > minInclusive,
    () => `randomInt: empty range [${minInclusive}, ${maxExclusive})`);
  return minInclusive + Math.floor(randomFloat(random) * (maxExclusive - minInclusive));
}

/** True with probability `p`. */
export function randomChance(random: Random, p: number): boolean {
  assert(p >= 0 && p <= 1, () => `randomChance: probability out of [0, 1]: ${p}`);
  return p > 0 && randomFloat(random) < p;
}

/** Fisher–Yates shuffle in place; returns the same array. */
export function shuffle<T>(random: Random, items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = randomInt(random, 0, i + 1);
    const tmp = items[i] as T;
    items[i] = items[j] as T;
    items[j] = tmp;
  }
  return items;
}
