/**
 * The digest of a client command, kept with its idempotency record: a retry under the same
 * (clientId, sequence) must carry the same command, or it is refused (`idempotency-mismatch`)
 * instead of silently answering with the first command's result (issue #18).
 *
 * What it covers: the command's kind and every field that decides what it does, walked in one
 * fixed order; not the stamp (clientId, sequence, nowMs: a retry repeats the first two, and the
 * leader stamps the time anew). Absent and default options hash alike (`prevKv` absent or
 * false, `limit` absent or 0), so a client that spells a retry differently is not refused.
 *
 * The hash: two 32-bit lanes over the UTF-16 units of length-prefixed fields, two units per
 * step (an FNV-1a-style lane and a multiply-rotate lane), each finished with MurmurHash3's
 * avalanche, printed as 16 hex digits. Pure and deterministic, so every replica computes the
 * same digest from the same entry. It guards against mistakes (a copied curl line, a reset
 * sequence counter), not an adversary: anyone who can send under a client id can already
 * spend its sequence numbers.
 */
import { assertNever } from '../assert.js';
import type { KvClientCommand, KvCompare, KvTxnOp } from './types.js';

class Hasher {
  private a = 0x811c9dc5;
  private b = 0x2545f491;

  text(value: string): void {
    this.count(value.length);
    let a = this.a;
    let b = this.b;
    // Two UTF-16 units per step, packed into one 32-bit word (the length is hashed first).
    const end = value.length - 1;
    let i = 0;
    for (; i < end; i += 2) {
      const word = value.charCodeAt(i) | (value.charCodeAt(i + 1) << 16);
      a = Math.imul(a ^ word, 0x01000193);
      b = Math.imul(b ^ word, 0x5bd1e995);
      b = (b << 13) | (b >>> 19);
    }
    if (i === end) {
      a = Math.imul(a ^ value.charCodeAt(i), 0x01000193);
      b = Math.imul(b ^ value.charCodeAt(i), 0x5bd1e995);
    }
    this.a = a;
    this.b = b;
  }

  /** A number, or a marker for an absent one (numbers of commands are integers when valid). */
  count(value: number | undefined): void {
    const text = value === undefined ? 'u' : String(value);
    for (let i = 0; i < text.length; i++) {
      const unit = text.charCodeAt(i);
      this.a = Math.imul(this.a ^ unit, 0x01000193);
      this.b = Math.imul(this.b ^ unit, 0x5bd1e995);
      this.b = (this.b << 13) | (this.b >>> 19);
    }
    this.a = Math.imul(this.a ^ 0x3b, 0x01000193); // a separator after every field
  }

  flag(value: boolean | undefined): void {
    this.count(value === true ? 1 : 0);
  }

  hex(): string {
    const a = avalanche(this.a ^ Math.imul(this.b, 0x9e3779b1));
    const b = avalanche(this.b ^ a);
    return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');
  }
}

/** MurmurHash3's 32-bit finalizer: every input bit affects every output bit. */
function avalanche(h: number): number {
  let x = h ^ (h >>> 16);
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  return x ^ (x >>> 16);
}

/** The command's digest (16 hex digits); equal for two commands that do the same thing. */
export function kvCommandDigest(command: KvClientCommand): string {
  const h = new Hasher();
  h.text(command.kind);
  switch (command.kind) {
    case 'put':
      h.text(command.key);
      h.text(command.value);
      h.flag(command.prevKv);
      h.count(command.lease);
      break;
    case 'delete':
      h.text(command.key);
      h.flag(command.prefix);
      h.flag(command.prevKv);
      break;
    case 'txn':
      h.count(command.compare.length);
      for (const c of command.compare) hashCompare(h, c);
      h.count(command.success.length);
      for (const op of command.success) hashOp(h, op);
      h.count(command.failure.length);
      for (const op of command.failure) hashOp(h, op);
      break;
    case 'compact':
      h.count(command.revision);
      break;
    case 'lease-grant':
      h.count(command.ttlMs);
      break;
    case 'lease-revoke':
      h.count(command.leaseId);
      break;
    case 'auth':
      // Short, in the canonical order: hashed as JSON. Not the salted hash nor the token key:
      // the member draws them afresh for a retry, which must still count as the same request.
      h.text(JSON.stringify({ ...command, clientId: undefined, sequence: undefined,
        nowMs: undefined, principal: undefined, password: undefined, tokenKey: undefined }));
      break;
    default:
      return assertNever(command, 'kv client command');
  }
  return h.hex();
}

function hashCompare(h: Hasher, c: KvCompare): void {
  h.text(c.key);
  h.text(c.target);
  h.text(c.result);
  switch (c.target) {
    case 'value':
      h.text(c.value);
      break;
    case 'version':
      h.count(c.version);
      break;
    case 'createRevision':
      h.count(c.createRevision);
      break;
    case 'modRevision':
      h.count(c.modRevision);
      break;
    default:
      assertNever(c, 'kv compare');
  }
}

function hashOp(h: Hasher, op: KvTxnOp): void {
  h.text(op.kind);
  h.text(op.key);
  switch (op.kind) {
    case 'put':
      h.text(op.value);
      h.flag(op.prevKv);
      h.count(op.lease);
      break;
    case 'delete':
      h.flag(op.prefix);
      h.flag(op.prevKv);
      break;
    case 'range':
      h.flag(op.prefix);
      h.count(op.limit === 0 ? undefined : op.limit);
      break;
    default:
      assertNever(op, 'kv txn op');
  }
}
