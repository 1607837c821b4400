/**
 * adapters: gossip keyring. Goal: AES-256-GCM sealing of gossip messages refuses, by a named
 * reason, everything but a message sealed under a key of the ring on the same channel; keys
 * rotate in (accepted) before they seal; key files are parsed and their mode checked.
 * Method: seal and open byte strings directly; key files under os.tmpdir().
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  GossipKeyring, SEALED_OVERHEAD_BYTES, generateGossipKey, loadGossipKeyFile, parseGossipKeys,
} from '../../src/adapters/gossip-keyring.js';

const key = (): Buffer => Buffer.from(generateGossipKey(), 'base64');
const plain = Buffer.from('a gossip datagram, as msgpack would make it');

describe('adapters: gossip keyring', () => {
  test('a sealed message opens under the same key, and only on its channel', () => {
    const ring = new GossipKeyring([key()]);
    const sealed = ring.seal(plain, 'udp');
    assert.equal(sealed.length, plain.length + SEALED_OVERHEAD_BYTES);
    assert.equal(sealed[0], 1);
    const opened = ring.open(sealed, 'udp');
    assert.ok(opened.ok);
    assert.deepEqual(opened.plain, plain);
    assert.deepEqual(ring.open(sealed, 'tcp'), { ok: false, reason: 'auth-failed' });
  });

  test('two seals of one message differ (fresh nonces)', () => {
    const ring = new GossipKeyring([key()]);
    assert.notDeepEqual(ring.seal(plain, 'udp'), ring.seal(plain, 'udp'));
  });

  test('rotation: a ring accepts every key, seals with the first only', () => {
    const oldKey = key();
    const newKey = key();
    const before = new GossipKeyring([oldKey]);
    const during = new GossipKeyring([oldKey, newKey]);
    const promoted = new GossipKeyring([newKey, oldKey]);
    const after = new GossipKeyring([newKey]);
    // Step 1: the new key is installed everywhere as a second key; old seals still flow.
    assert.ok(during.open(before.seal(plain, 'udp'), 'udp').ok);
    assert.ok(before.open(during.seal(plain, 'udp'), 'udp').ok);
    // Step 2: members promote the new key one by one; un-promoted members still read them.
    assert.ok(during.open(promoted.seal(plain, 'udp'), 'udp').ok);
    // Step 3: the old key is removed; what it sealed is refused by name.
    assert.ok(after.open(promoted.seal(plain, 'udp'), 'udp').ok);
    assert.deepEqual(after.open(before.seal(plain, 'udp'), 'udp'),
      { ok: false, reason: 'unknown-key' });
  });

  test('a wrong key is unknown-key; a forged key id is auth-failed', () => {
    const ring = new GossipKeyring([key()]);
    const other = new GossipKeyring([key()]);
    assert.deepEqual(ring.open(other.seal(plain, 'udp'), 'udp'),
      { ok: false, reason: 'unknown-key' });
    const forged = other.seal(plain, 'udp');
    ring.seal(plain, 'udp').copy(forged, 1, 1, 5); // our key id over their ciphertext
    assert.deepEqual(ring.open(forged, 'udp'), { ok: false, reason: 'auth-failed' });
  });

  test('every tampered byte is refused', () => {
    const ring = new GossipKeyring([key()]);
    const sealed = ring.seal(plain, 'udp');
    for (let i = 1; i < sealed.length; i++) {
      const tampered = Buffer.from(sealed);
      tampered[i] = (tampered[i] as number) ^ 0x01;
      const opened = ring.open(tampered, 'udp');
      assert.ok(!opened.ok, `byte ${i} flipped was accepted`);
      assert.equal(opened.reason, i < 5 ? 'unknown-key' : 'auth-failed', `byte ${i}`);
    }
  });

  test('truncated, empty and unencrypted messages are refused by name', () => {
    const ring = new GossipKeyring([key()]);
    const sealed = ring.seal(plain, 'udp');
    for (const length of [1, 5, 17, SEALED_OVERHEAD_BYTES - 1]) {
      assert.deepEqual(ring.open(sealed.subarray(0, length), 'udp'),
        { ok: false, reason: 'truncated' }, `length ${length}`);
    }
    for (const length of [SEALED_OVERHEAD_BYTES, sealed.length - 1]) {
      assert.deepEqual(ring.open(sealed.subarray(0, length), 'udp'),
        { ok: false, reason: 'auth-failed' }, `length ${length}`);
    }
    assert.deepEqual(ring.open(new Uint8Array(0), 'udp'), { ok: false, reason: 'unencrypted' });
    // A plain msgpack envelope (a fixarray of 4) from a member without a key.
    assert.deepEqual(ring.open(Buffer.from([0x94, 1, 2, 3]), 'udp'),
      { ok: false, reason: 'unencrypted' });
  });

  test('an empty message seals and opens', () => {
    const ring = new GossipKeyring([key()]);
    const opened = ring.open(ring.seal(new Uint8Array(0), 'tcp'), 'tcp');
    assert.ok(opened.ok);
    assert.equal(opened.plain.length, 0);
  });

  test('rings of no key, too many keys, or keys of the wrong size are refused', () => {
    assert.throws(() => new GossipKeyring([]), /at least one key/);
    assert.throws(() => new GossipKeyring(Array.from({ length: 17 }, key)), /at most 16/);
    assert.throws(() => new GossipKeyring([Buffer.alloc(16)]), /has 16 bytes.*needs 32/);
  });

  test('key files: one base64 key a line, comments skipped, the first seals', () => {
    const a = generateGossipKey();
    const b = generateGossipKey();
    const keys = parseGossipKeys(`# primary\n${a}\n\n${b}\n`, 'f');
    assert.deepEqual(keys.map((k) => k.toString('base64')), [a, b]);
    assert.throws(() => parseGossipKeys('# nothing\n', 'f'), /holds no key/);
    assert.throws(() => parseGossipKeys(`${a}\nnot base64!\n`, 'f'), /f line 2: not a base64/);
    assert.throws(() => parseGossipKeys(Buffer.alloc(16).toString('base64'), 'f'), /line 1/);
  });

  test('a key file readable by group or others is refused; 0600 loads', () => {
    const dir = mkdtempSync(join(tmpdir(), 'conclave-keyring-'));
    try {
      const file = join(dir, 'gossip.key');
      writeFileSync(file, `${generateGossipKey()}\n`);
      chmodSync(file, 0o644);
      assert.throws(() => loadGossipKeyFile(file), /readable by others \(mode 0644\).*chmod 600/);
      chmodSync(file, 0o600);
      assert.equal(loadGossipKeyFile(file).size, 1);
      assert.throws(() => loadGossipKeyFile(join(dir, 'missing')), /cannot be read/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
