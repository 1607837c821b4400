/**
 * Goal: commands survive encoding exactly, the encoding is canonical (one command, one byte
 * string), and decoding is total: no input bytes make it throw. Method: round trips of
 * hand-picked and generated commands; fast-check over random bytes, random JSON values and
 * byte-level mutations of valid encodings, asserting a command or a decode-error each time;
 * the validated encoding hands the proposer the very command its bytes decode to.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  decodeKvCommand, encodeKvCommand, encodeValidKvCommand, KV_COMMAND_FORMAT_JSON_V1,
  KV_STORE_DEFAULTS, parseKvCommand,
} from '../../../src/core/kv/index.js';
import type { KvCommand } from '../../../src/core/kv/index.js';
import { stampSteps, step } from './arbitraries.js';

const stamp = { clientId: 'client-1', sequence: 7, nowMs: 1_700_000_000_000 };

const samples: KvCommand[] = [
  { kind: 'put', ...stamp, key: 'a', value: 'b' },
  { kind: 'put', ...stamp, key: 'ключ/😀', value: 'line\n"quoted"\u0000', prevKv: true },
  { kind: 'put', ...stamp, key: 'lone', value: '\ud800 and \udfff' },
  { kind: 'delete', ...stamp, key: 'a/', prefix: true, prevKv: false },
  { kind: 'txn', ...stamp,
    compare: [
      { key: 'a', target: 'value', result: 'equal', value: 'x' },
      { key: 'a', target: 'version', result: 'greater', version: 1 },
      { key: 'a', target: 'createRevision', result: 'not-equal', createRevision: 0 },
      { key: 'a', target: 'modRevision', result: 'less', modRevision: 9 },
    ],
    success: [{ kind: 'put', key: 'a', value: 'y' }, { kind: 'range', key: 'a', limit: 1 }],
    failure: [{ kind: 'delete', key: 'b', prefix: true, prevKv: true }] },
  { kind: 'compact', ...stamp, revision: 12 },
  { kind: 'put', ...stamp, key: 'leased', value: 'v', lease: 41 },
  { kind: 'txn', ...stamp, compare: [], success: [{ kind: 'put', key: 'a', value: 'b', lease: 3 }],
    failure: [] },
  { kind: 'lease-grant', ...stamp, ttlMs: 10_000 },
  { kind: 'lease-revoke', ...stamp, leaseId: 41 },
  { kind: 'lease-checkpoint', nowMs: 5, leases: [{ leaseId: 41, remainingMs: 2500 }] },
  { kind: 'lease-renew', nowMs: 5, leaseIds: [41, 43] },
  { kind: 'lease-expire', nowMs: 5, leases: [{ leaseId: 41, renewals: 2 }] },
];

function isDecodeError(value: unknown): boolean {
  return typeof value === 'object' && value !== null
    && (value as { kind?: unknown }).kind === 'decode-error';
}

describe('kv: codec', () => {
  test('every kind of command decodes to exactly itself', () => {
    for (const command of samples) {
      const bytes = encodeKvCommand(command);
      assert.equal(bytes[0], KV_COMMAND_FORMAT_JSON_V1);
      assert.deepEqual(decodeKvCommand(bytes), command);
    }
  });

  test('generated commands round-trip', () => {
    fc.assert(fc.property(fc.array(step, { maxLength: 10 }), (steps) => {
      for (const command of stampSteps(steps, 0)) {
        assert.deepEqual(decodeKvCommand(encodeKvCommand(command)), command);
      }
    }), { numRuns: 300 });
  });

  test('the validated encoding hands back exactly what decoding its bytes gives', () => {
    // The leader applies this command instead of decoding its own entry: any difference would
    // make it disagree with followers. Valid samples only (the lone surrogate one is invalid).
    const valid = samples.filter((c) => encodeValidKvCommand(c, KV_STORE_DEFAULTS).kind === 'ok');
    assert.equal(valid.length, samples.length - 1);
    let checked = 0;
    const check = (command: KvCommand): void => {
      const encoded = encodeValidKvCommand(command, KV_STORE_DEFAULTS);
      if (encoded.kind !== 'ok') return; // generated txns may break a rule
      checked++;
      assert.deepStrictEqual(encoded.command, decodeKvCommand(encoded.bytes));
      assert.deepStrictEqual(encoded.bytes, encodeKvCommand(command));
      // The format on disk, as before: the version byte, then the canonical command's JSON.
      assert.equal(new TextDecoder().decode(encoded.bytes),
        `\u0001${JSON.stringify(encoded.command)}`);
      assert.notEqual(encoded.command, command);
    };
    valid.forEach(check);
    fc.assert(fc.property(fc.array(step, { maxLength: 10 }), (steps) => {
      stampSteps(steps, 0).forEach(check);
    }), { numRuns: 300 });
    assert.ok(checked > 500, `only ${checked} valid commands checked`);
  });

  test('the validated command shares no array or object with the caller', () => {
    const renew = { kind: 'lease-renew' as const, nowMs: 5, leaseIds: [41, 43] };
    const encoded = encodeValidKvCommand(renew, KV_STORE_DEFAULTS);
    assert.ok(encoded.kind === 'ok');
    renew.leaseIds.push(44);
    assert.deepStrictEqual(encoded.command, { kind: 'lease-renew', nowMs: 5, leaseIds: [41, 43] });
  });

  test('the encoding is canonical: field order and extra fields do not change the bytes', () => {
    const shuffled = { value: 'b', key: 'a', nowMs: stamp.nowMs, sequence: 7, kind: 'put',
      clientId: 'client-1', extra: 'dropped' } as unknown as KvCommand;
    assert.deepEqual(encodeKvCommand(shuffled), encodeKvCommand(samples[0] as KvCommand));
  });

  test('decoding rejects foreign versions, unknown kinds and fields, and wrong types', () => {
    const json = (value: unknown): Uint8Array =>
      new Uint8Array([1, ...new TextEncoder().encode(JSON.stringify(value))]);
    const put = { kind: 'put', ...stamp, key: 'a', value: 'b' };
    const bad: [string, Uint8Array][] = [
      ['empty', new Uint8Array()],
      ['version 2', new Uint8Array([2, ...json(put).subarray(1)])],
      ['invalid UTF-8', new Uint8Array([1, 0xff, 0xfe])],
      ['not JSON', new Uint8Array([1, 0x7b])],
      ['unknown kind', json({ ...put, kind: 'lease-keepalive' })],
      ['unknown field', json({ ...put, ttlMs: 5 })],
      ['a stamped system command', json({ kind: 'lease-renew', ...stamp, leaseIds: [1] })],
      ['a string lease id', json({ kind: 'lease-renew', nowMs: 1, leaseIds: ['1'] })],
      ['a checkpoint entry with an extra field', json({ kind: 'lease-checkpoint', nowMs: 1,
        leases: [{ leaseId: 1, remainingMs: 5, ttlMs: 9 }] })],
      ['a string sequence', json({ ...put, sequence: '7' })],
      ['a number key', json({ ...put, key: 5 })],
      ['an array', json([put])],
      ['null', json(null)],
      ['a txn without failure', json({ kind: 'txn', ...stamp, compare: [], success: [] })],
      ['an unknown compare target', json({ kind: 'txn', ...stamp, success: [], failure: [],
        compare: [{ key: 'a', target: 'lease', result: 'equal', lease: 1 }] })],
      ['an unknown compare result', json({ kind: 'txn', ...stamp, success: [], failure: [],
        compare: [{ key: 'a', target: 'version', result: '>=', version: 1 }] })],
      ['a compare operand of another target', json({ kind: 'txn', ...stamp, success: [],
        failure: [], compare: [{ key: 'a', target: 'version', result: 'equal', value: 'x' }] })],
      ['a non-boolean prefix', json({ kind: 'delete', ...stamp, key: 'a', prefix: 1 })],
      ['a __proto__ field', new Uint8Array([1, ...new TextEncoder().encode(
        '{"kind":"put","clientId":"c","sequence":1,"nowMs":0,"key":"a","value":"b",'
        + '"__proto__":{"x":1}}')])],
    ];
    for (const [name, bytes] of bad) {
      const decoded = decodeKvCommand(bytes);
      assert.ok(isDecodeError(decoded), `${name}: ${JSON.stringify(decoded)}`);
    }
  });

  test('decoding refuses entries above bytesMax before parsing them', () => {
    const bytes = encodeKvCommand(samples[0] as KvCommand);
    assert.ok(isDecodeError(decodeKvCommand(bytes, bytes.length - 1)));
    assert.ok(!isDecodeError(decodeKvCommand(bytes, bytes.length)));
  });

  test('decoding random bytes never throws', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), fc.boolean(), (bytes, versioned) => {
      if (versioned && bytes.length > 0) bytes[0] = KV_COMMAND_FORMAT_JSON_V1;
      const decoded = decodeKvCommand(bytes);
      assert.ok(typeof decoded === 'object' && decoded !== null);
    }), { numRuns: 20_000 });
  });

  test('decoding mutated valid encodings never throws', () => {
    const mutation = fc.record({ at: fc.nat(), byte: fc.nat({ max: 255 }), cut: fc.nat() });
    fc.assert(fc.property(fc.constantFrom(...samples), fc.array(mutation, { maxLength: 4 }),
      (command, mutations) => {
        let bytes = encodeKvCommand(command);
        for (const { at, byte, cut } of mutations) {
          bytes[at % bytes.length] = byte;
          if (cut % 5 === 0) bytes = bytes.subarray(0, cut % (bytes.length + 1));
          if (bytes.length === 0) break;
        }
        const decoded = decodeKvCommand(bytes);
        if (!isDecodeError(decoded)) {
          // Whatever decodes is a well-formed command that encodes again.
          assert.ok(encodeKvCommand(decoded as KvCommand).length > 0);
        }
      }), { numRuns: 5_000 });
  });

  test('parsing arbitrary JSON values never throws', () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => {
      const parsed = parseKvCommand(value);
      assert.ok(typeof parsed === 'object' && parsed !== null);
    }), { numRuns: 5_000 });
  });

  test('encodeValidKvCommand returns bytes only for a valid command within commandBytesMax', () => {
    const ok = encodeValidKvCommand(samples[0] as KvCommand, KV_STORE_DEFAULTS);
    assert.equal(ok.kind, 'ok');
    const invalid = encodeValidKvCommand({ kind: 'put', ...stamp, key: '', value: 'b' },
      KV_STORE_DEFAULTS);
    assert.deepEqual(invalid.kind === 'invalid' && invalid.problems.map((p) => p.field), ['key']);
    // Quotes double in JSON: a value within valueBytesMax can still exceed commandBytesMax.
    const quoted = '"'.repeat(KV_STORE_DEFAULTS.valueBytesMax);
    const big = encodeValidKvCommand({ kind: 'put', ...stamp, key: 'k', value: quoted },
      KV_STORE_DEFAULTS);
    assert.equal(big.kind, 'invalid');
    assert.match(JSON.stringify(big), /encoded command must be at most 2097152 bytes/);
  });
});
