/**
 * The gossip keyring: AES-256-GCM on every gossip datagram and every gossip stream message
 * (docs/security.md, "Gossip"). memberlist's keyring is the model: several keys are accepted,
 * so that a key can be rotated in without a flag day; exactly one, the primary, seals what this
 * member sends.
 *
 * Sealed layout (all of it is the AEAD's input: the header is authenticated as associated data,
 * with the channel label, so a datagram cannot be replayed as a stream message or vice versa):
 *
 * ```
 *   version (1 byte = 1) | key id (4 bytes) | nonce (12 bytes) | ciphertext | tag (16 bytes)
 * ```
 *
 * The key id is the first 4 bytes of SHA-256("conclave-gossip-key-id/v1" ‖ key): the receiver
 * tries only the keys with that id (trial decryption among them, if two keys ever share one), so
 * a datagram under an unknown key costs a lookup, not an AES attempt per key. It reveals which of
 * a few keys was used, nothing about the key. Nonces are 96 random bits per message; with random
 * nonces a key should seal fewer than 2^32 messages (NIST SP 800-38D), which at 1,000 datagrams
 * a second is 136 years, far beyond any rotation.
 *
 * What it does not do: it does not stop a replay of a captured message by someone on the path
 * (as in memberlist); SWIM's updates are ordered by incarnation, so a replayed one is old news.
 */
import {
  createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual,
} from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { ConfigInvalidError } from '../errors.js';

/** Bytes of a gossip key: AES-256. */
export const GOSSIP_KEY_BYTES = 32;
/** The first byte of every sealed message. */
export const SEALED_VERSION = 1;
export const SEALED_KEY_ID_BYTES = 4;
export const SEALED_NONCE_BYTES = 12;
export const SEALED_TAG_BYTES = 16;
export const SEALED_HEADER_BYTES = 1 + SEALED_KEY_ID_BYTES + SEALED_NONCE_BYTES;
/** What sealing adds to a message. Unit: bytes (33). */
export const SEALED_OVERHEAD_BYTES = SEALED_HEADER_BYTES + SEALED_TAG_BYTES;
/** Most keys one keyring holds (a rotation needs two; a few more leave room). */
export const GOSSIP_KEYS_MAX = 16;

/** Which channel a sealed message travels on (part of the associated data). */
export type SealChannel = 'udp' | 'tcp';

/**
 * Why a sealed message was dropped: the label of the gossip decrypt-drop counters.
 * - `unencrypted`: the first byte is not the sealed version (a member without a key, or noise).
 * - `truncated`: shorter than the header and the tag.
 * - `unknown-key`: sealed under a key this keyring does not hold.
 * - `auth-failed`: the tag did not verify: tampered, cut short inside, or another channel.
 */
export type OpenFailure = 'unencrypted' | 'truncated' | 'unknown-key' | 'auth-failed';
export const OPEN_FAILURES: readonly OpenFailure[] =
  Object.freeze(['unencrypted', 'truncated', 'unknown-key', 'auth-failed']);

export type OpenResult =
  | { readonly ok: true; readonly plain: Buffer }
  | { readonly ok: false; readonly reason: OpenFailure };

interface KeyEntry {
  readonly key: Buffer;
  readonly id: Buffer;
}

export class GossipKeyring {
  private readonly entries: readonly KeyEntry[];

  /**
   * `keys[0]` is the primary (it seals); all are accepted. Throws CONCLAVE_CONFIG_INVALID for
   * an empty ring, too many keys, or a key that is not 32 bytes.
   */
  constructor(keys: readonly Uint8Array[]) {
    if (keys.length === 0) throw new ConfigInvalidError('a gossip keyring needs at least one key');
    if (keys.length > GOSSIP_KEYS_MAX) {
      throw new ConfigInvalidError(`a gossip keyring holds at most ${GOSSIP_KEYS_MAX} keys, ` +
        `got ${keys.length}`);
    }
    this.entries = keys.map((key, i) => {
      if (key.length !== GOSSIP_KEY_BYTES) {
        throw new ConfigInvalidError(`gossip key ${i + 1} has ${key.length} bytes; AES-256 ` +
          `needs ${GOSSIP_KEY_BYTES} (make one with \`conclave keygen\`)`);
      }
      const copy = Buffer.from(key);
      return { key: copy, id: gossipKeyId(copy) };
    });
  }

  get size(): number {
    return this.entries.length;
  }

  /** The primary key's id, hex (for logs: which key a member seals with). */
  get primaryKeyId(): string {
    return (this.entries[0] as KeyEntry).id.toString('hex');
  }

  /** Seals `plain` under the primary key. */
  seal(plain: Uint8Array, channel: SealChannel): Buffer {
    const entry = this.entries[0] as KeyEntry;
    const out = Buffer.allocUnsafe(SEALED_OVERHEAD_BYTES + plain.length);
    out[0] = SEALED_VERSION;
    entry.id.copy(out, 1);
    const nonce = randomBytes(SEALED_NONCE_BYTES);
    nonce.copy(out, 1 + SEALED_KEY_ID_BYTES);
    const cipher = createCipheriv('aes-256-gcm', entry.key, nonce);
    cipher.setAAD(associatedData(out.subarray(0, SEALED_HEADER_BYTES), channel));
    const body = cipher.update(plain);
    body.copy(out, SEALED_HEADER_BYTES);
    cipher.final();
    cipher.getAuthTag().copy(out, SEALED_HEADER_BYTES + plain.length);
    return out;
  }

  /** Opens a sealed message, or says why not. Never throws. */
  open(sealed: Uint8Array, channel: SealChannel): OpenResult {
    if (sealed.length === 0 || sealed[0] !== SEALED_VERSION) {
      return { ok: false, reason: 'unencrypted' };
    }
    if (sealed.length < SEALED_OVERHEAD_BYTES) return { ok: false, reason: 'truncated' };
    const bytes = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.length);
    const id = bytes.subarray(1, 1 + SEALED_KEY_ID_BYTES);
    const header = bytes.subarray(0, SEALED_HEADER_BYTES);
    const nonce = bytes.subarray(1 + SEALED_KEY_ID_BYTES, SEALED_HEADER_BYTES);
    const body = bytes.subarray(SEALED_HEADER_BYTES, bytes.length - SEALED_TAG_BYTES);
    const tag = bytes.subarray(bytes.length - SEALED_TAG_BYTES);
    let known = false;
    for (const entry of this.entries) {
      if (!timingSafeEqual(entry.id, id)) continue;
      known = true;
      const plain = tryOpen(entry.key, nonce, associatedData(header, channel), body, tag);
      if (plain !== undefined) return { ok: true, plain };
    }
    return { ok: false, reason: known ? 'auth-failed' : 'unknown-key' };
  }
}

function tryOpen(key: Buffer, nonce: Buffer, aad: Buffer, body: Buffer,
  tag: Buffer): Buffer | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, nonce, { authTagLength: 16 });
    decipher.setAAD(aad);
    decipher.setAuthTag(tag);
    const first = decipher.update(body);
    const last = decipher.final(); // throws when the tag does not verify
    return last.length === 0 ? first : Buffer.concat([first, last]);
  } catch {
    return undefined;
  }
}

function associatedData(header: Buffer, channel: SealChannel): Buffer {
  return Buffer.concat([header, Buffer.from(`conclave-gossip/${channel}`, 'utf8')]);
}

/** The 4-byte id of a key (see the module comment). */
export function gossipKeyId(key: Uint8Array): Buffer {
  return createHash('sha256').update('conclave-gossip-key-id/v1').update(key).digest()
    .subarray(0, SEALED_KEY_ID_BYTES);
}

/** A fresh key, base64 (what `conclave keygen` prints). */
export function generateGossipKey(): string {
  return randomBytes(GOSSIP_KEY_BYTES).toString('base64');
}

/**
 * The keys of a key file's text: one base64 key per line, the first the primary; blank lines
 * and lines starting with `#` are skipped. Throws CONCLAVE_CONFIG_INVALID naming the line.
 */
export function parseGossipKeys(text: string, source: string): Buffer[] {
  const keys: Buffer[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === '' || line.startsWith('#')) continue;
    const key = /^[A-Za-z0-9+/]+={0,2}$/.test(line) ? Buffer.from(line, 'base64') : undefined;
    if (key === undefined || key.length !== GOSSIP_KEY_BYTES) {
      throw new ConfigInvalidError(`${source} line ${i + 1}: not a base64 key of ` +
        `${GOSSIP_KEY_BYTES} bytes (make one with \`conclave keygen\`)`);
    }
    keys.push(key);
  }
  if (keys.length === 0) {
    throw new ConfigInvalidError(`${source} holds no key (make one with \`conclave keygen\`)`);
  }
  return keys;
}

/**
 * The keyring in `file` (see `parseGossipKeys`). A file that group or others may read is
 * refused: whoever reads it can speak as any member.
 */
export function loadGossipKeyFile(file: string): GossipKeyring {
  let mode: number;
  let text: string;
  try {
    mode = statSync(file).mode & 0o777;
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new ConfigInvalidError(`--encrypt-key-file ${file} cannot be read: ${why}`);
  }
  if ((mode & 0o077) !== 0) {
    throw new ConfigInvalidError(`--encrypt-key-file ${file} is readable by others (mode ${
      mode.toString(8).padStart(4, '0')}): anyone who reads it can speak as any member; ` +
      `chmod 600 ${file}`);
  }
  return new GossipKeyring(parseGossipKeys(text, `--encrypt-key-file ${file}`));
}
