/**
 * String helpers of the key-value store: UTF-8 length without allocating, well-formedness
 * (no lone surrogates, so every key and value has an exact UTF-8 form), and key order.
 */

/** Length of `text` in UTF-8 bytes (a lone surrogate counts 3, as TextEncoder's U+FFFD). */
export function utf8ByteLength(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && isLowSurrogate(text.charCodeAt(i + 1))) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/**
 * True when the UTF-8 form of `text` is longer than `bytesMax`, counting only when the answer
 * is not already known from the length: each UTF-16 unit is 1 to 3 bytes (a surrogate pair,
 * two units, is 4), so most keys and values are decided without a scan.
 */
export function utf8ByteLengthExceeds(text: string, bytesMax: number): boolean {
  if (text.length > bytesMax) return true;
  if (text.length * 3 <= bytesMax) return false;
  return utf8ByteLength(text) > bytesMax;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** ES2024's String.prototype.isWellFormed where the runtime has it (Node 20 does): no regex. */
const nativeIsWellFormed = (String.prototype as { isWellFormed?: () => boolean }).isWellFormed;

/** True when `text` has no lone surrogate, so it is valid Unicode with one UTF-8 encoding. */
export function isWellFormed(text: string): boolean {
  return nativeIsWellFormed === undefined ? !LONE_SURROGATE.test(text)
    : nativeIsWellFormed.call(text);
}

/** Key order: JavaScript string comparison (UTF-16 code units), the same on every replica. */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
