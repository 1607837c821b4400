/**
 * A running 64-bit hash (two 32-bit FNV-1a lanes) over every delivered event of a run. Same
 * seed and same code give the same hash; a different hash means the runs diverged.
 */
export class TraceHash {
  private lo = 0x811c9dc5;
  private hi = 0x01000193 ^ 0x5bd1e995;

  mixNumber(value: number): void {
    // Integers and the low bits of fractional values both matter; times are ms with fractions.
    const scaled = Math.round(value * 1000);
    this.mixInt(scaled | 0);
    this.mixInt(Math.floor(scaled / 0x1_0000_0000) | 0);
  }

  mixString(value: string): void {
    for (let i = 0; i < value.length; i++) this.mixInt(value.charCodeAt(i));
    this.mixInt(value.length);
  }

  /** 16 hex digits. */
  digest(): string {
    const hex = (word: number): string => (word >>> 0).toString(16).padStart(8, '0');
    return hex(this.hi) + hex(this.lo);
  }

  private mixInt(value: number): void {
    this.lo = Math.imul(this.lo ^ (value & 0xffff), 0x01000193);
    this.lo = Math.imul(this.lo ^ (value >>> 16), 0x01000193);
    this.hi = Math.imul(this.hi ^ (value >>> 8), 0x01000193);
    this.hi = Math.imul(this.hi ^ this.lo, 0x01000193);
  }
}
