/**
 * adapters: frame codec. Goal: the peer wire format splits any byte stream into the frames that
 * were sent, whatever the chunking; refuses a length prefix above the limit before keeping any
 * payload byte; names HTTP and TLS clients; and never throws on any input.
 * Method: examples for each rule, and fast-check properties over random values, random
 * chunkings and random bytes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  FRAME_HEADER_BYTES, FrameDecoder, MessageCodec, goodbyeFrame, httpRefusalResponse,
} from '../../src/adapters/frame-codec.js';

const codec = new MessageCodec();
const bytes = (...values: number[]): Uint8Array => Uint8Array.from(values);
const ascii = (text: string): Uint8Array => new TextEncoder().encode(text);

function frameOf(value: unknown, max = 1 << 20): Buffer {
  const encoded = codec.encodeFrame(value, max);
  assert.ok(encoded.ok, 'encodable');
  return encoded.bytes;
}

function decodeAll(decoder: FrameDecoder, chunks: readonly Uint8Array[]): unknown[] {
  const values: unknown[] = [];
  for (const chunk of chunks) {
    const out = decoder.push(chunk);
    assert.equal(out.error, undefined, out.error?.message);
    for (const payload of out.payloads) {
      const decoded = codec.decodePayload(payload);
      assert.ok(decoded.ok);
      values.push(decoded.value);
    }
  }
  return values;
}

/** Cuts `stream` at the given offsets (sorted, deduplicated, inside the stream). */
function cut(stream: Uint8Array, offsets: readonly number[]): Uint8Array[] {
  const points = [...new Set(offsets.map((o) => o % (stream.length + 1)))].sort((x, y) => x - y);
  const chunks: Uint8Array[] = [];
  let start = 0;
  for (const point of [...points, stream.length]) {
    chunks.push(stream.subarray(start, point));
    start = point;
  }
  return chunks;
}

const plainValue = fc.oneof(
  fc.record({ kind: fc.string(), n: fc.integer(), data: fc.uint8Array({ maxLength: 300 }) }),
  fc.array(fc.oneof(fc.integer(), fc.string(), fc.boolean()), { maxLength: 20 }),
  fc.string({ maxLength: 200 }),
);

describe('adapters: frame codec: framing', () => {
  test('values come back equal through encode, any chunking, and decode', () => {
    fc.assert(fc.property(
      fc.array(plainValue, { minLength: 1, maxLength: 8 }),
      fc.array(fc.nat(), { maxLength: 12 }),
      (values, offsets) => {
        const stream = Buffer.concat(values.map((v) => frameOf(v)));
        const decoded = decodeAll(new FrameDecoder(1 << 20), cut(stream, offsets));
        assert.deepEqual(decoded.map(normalize), values.map(normalize));
      },
    ), { numRuns: 300 });
  });

  test('coalesced frames in one chunk and one byte at a time both decode in order', () => {
    const values = [{ kind: 'a', n: 1 }, { kind: 'b', n: 2 }, { kind: 'c', n: 3 }];
    const stream = Buffer.concat(values.map((v) => frameOf(v)));
    assert.deepEqual(decodeAll(new FrameDecoder(1024), [stream]), values);
    const oneByOne = [...stream].map((b) => bytes(b));
    assert.deepEqual(decodeAll(new FrameDecoder(1024), oneByOne), values);
  });

  test('a zero-length frame is a goodbye: an empty payload', () => {
    const out = new FrameDecoder(16).push(goodbyeFrame());
    assert.equal(out.error, undefined);
    assert.deepEqual(out.payloads.map((p) => p.length), [0]);
  });

  test('a frame of exactly frameBytesMax is accepted; one byte more is refused', () => {
    const exact = new FrameDecoder(10).push(Buffer.concat([bytes(0, 0, 0, 10), Buffer.alloc(10)]));
    assert.equal(exact.error, undefined);
    assert.equal(exact.payloads[0]?.length, 10);
    const over = new FrameDecoder(10).push(bytes(0, 0, 0, 11));
    assert.equal(over.error?.kind, 'frame-too-large');
    assert.equal(over.error?.code, 'CONCLAVE_PROTOCOL');
  });
});

describe('adapters: frame codec: untrusted input', () => {
  test('an oversized length prefix fails at the header, keeping none of the payload', () => {
    const decoder = new FrameDecoder(1536 * 1024);
    const out = decoder.push(bytes(0xff, 0xff, 0xff, 0xff, 1, 2, 3));
    assert.equal(out.error?.kind, 'frame-too-large');
    assert.match(out.error?.message ?? '', /4294967295 exceeds frameBytesMax 1572864/);
    assert.equal(decoder.bufferedBytes, 0);
    // Failed for good: framing is lost, later bytes are not read as frames.
    const later = decoder.push(frameOf({ kind: 'late' }));
    assert.equal(later.error?.kind, 'frame-too-large');
    assert.deepEqual(later.payloads, []);
  });

  test('the length is checked when its 4 bytes are in, even split over chunks', () => {
    const decoder = new FrameDecoder(100);
    assert.equal(decoder.push(bytes(0x00, 0x10)).error, undefined);
    assert.equal(decoder.bufferedBytes, 2);
    assert.equal(decoder.push(bytes(0x00, 0x00)).error?.kind, 'frame-too-large');
  });

  for (const request of ['GET / HTTP/1.1\r\n', 'POST /v3/kv HTTP/1.1\r\n', 'PUT /x HTTP/1.1\r\n',
    'HEAD / HTTP/1.0\r\n', 'DELETE /x HTTP/1.1\r\n', 'OPTIONS * HTTP/1.1\r\n']) {
    const method = request.split(' ')[0]!;
    test(`an HTTP ${method} request is named as such`, () => {
      const out = new FrameDecoder(1 << 20).push(ascii(request));
      assert.equal(out.error?.kind, 'http-request');
      assert.match(out.error?.message ?? '', /HTTP request .* Conclave peer port/);
      assert.ok(out.error?.message.includes(JSON.stringify(method.slice(0, 4).trim())));
    });
  }

  test('HTTP is recognised only at the start of the stream', () => {
    const decoder = new FrameDecoder(1 << 20);
    decoder.push(frameOf({ kind: 'first' }));
    assert.equal(decoder.push(ascii('GET / HTTP/1.1\r\n')).error?.kind, 'frame-too-large');
  });

  test('a TLS ClientHello on the plain port is named as such', () => {
    const out = new FrameDecoder(1 << 20).push(bytes(0x16, 0x03, 0x01, 0x02, 0x00, 0x01));
    assert.equal(out.error?.kind, 'tls-handshake');
  });

  test('the HTTP refusal is a complete 400 response with a one-line body', () => {
    const response = httpRefusalResponse();
    assert.match(response, /^HTTP\/1\.1 400 Bad Request\r\n/);
    const [head, body] = response.split('\r\n\r\n') as [string, string];
    assert.equal(Number(/Content-Length: (\d+)/.exec(head)?.[1]), Buffer.byteLength(body));
    assert.match(body, /^This is a Conclave peer port .*\n$/);
  });

  test('the decoder never throws and never holds more than 3 + frameBytesMax bytes', () => {
    fc.assert(fc.property(
      fc.integer({ min: 0, max: 300 }),
      fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 30 }),
      (frameBytesMax, chunks) => {
        const decoder = new FrameDecoder(frameBytesMax);
        for (const chunk of chunks) {
          const out = decoder.push(chunk);
          assert.ok(decoder.bufferedBytes <= 3 + frameBytesMax);
          for (const p of out.payloads) assert.ok(p.length <= frameBytesMax);
          if (out.error !== undefined) assert.equal(out.error.code, 'CONCLAVE_PROTOCOL');
        }
      },
    ), { numRuns: 2000 });
  });

  test('payload decoding never throws on random bytes: a value or an error', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), (payload) => {
      const decoded = codec.decodePayload(payload);
      if (!decoded.ok) assert.equal(decoded.error.kind, 'payload-undecodable');
    }), { numRuns: 20_000 });
  });

  test('payload decoding refuses empty input, trailing bytes and deep nesting', () => {
    assert.equal(codec.decodePayload(new Uint8Array(0)).ok, false);
    assert.equal(codec.decodePayload(bytes(0x01, 0x02)).ok, false);
    assert.equal(codec.decodePayload(new Uint8Array(200_000).fill(0x91)).ok, false);
    // and the codec still works afterwards
    assert.deepEqual(codec.decodePayload(frameOf({ ok: 1 }).subarray(FRAME_HEADER_BYTES)),
      { ok: true, value: { ok: 1 } });
  });

  test('maps never touch prototypes: a __proto__ key stays plain data', () => {
    const payload = bytes(0x81, 0xa9, ...ascii('__proto__'), 0x81, 0xa1, 0x78, 0x01);
    const decoded = codec.decodePayload(payload);
    assert.ok(decoded.ok);
    assert.equal(({} as Record<string, unknown>)['x'], undefined);
    assert.equal(Object.getPrototypeOf(decoded.value), Object.prototype);
  });
});

describe('adapters: frame codec: encoding', () => {
  test('a value larger than the limit is refused with its size, not framed', () => {
    const encoded = codec.encodeFrame({ data: new Uint8Array(2000) }, 1000);
    assert.equal(encoded.ok, false);
    assert.ok(!encoded.ok && encoded.error.kind === 'payload-too-large');
    assert.match(!encoded.ok ? encoded.error.message : '', /exceeds the limit of 1000 bytes/);
  });

  test('an unencodable value is an error value, not a throw', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    const encoded = codec.encodeFrame(cyclic, 1 << 20);
    assert.ok(!encoded.ok && encoded.error.kind === 'encode-failed');
    assert.ok(!codec.encodeFrame(2n ** 70n, 1 << 20).ok);
  });

  test('frames are independent buffers: later encodes do not change earlier frames', () => {
    const first = frameOf({ kind: 'first', n: 1 });
    const copy = Buffer.from(first);
    for (let i = 0; i < 2000; i++) frameOf({ kind: 'other', n: i });
    assert.ok(first.equals(copy));
  });
});

/** Buffers and Uint8Arrays compare equal by content. */
function normalize(value: unknown): unknown {
  if (value instanceof Uint8Array) return [...value];
  if (Array.isArray(value)) return value.map(normalize);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalize(v)]));
  }
  return value;
}
