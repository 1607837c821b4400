/**
 * The peer wire format: a stream of frames, each `[u32 big-endian length][payload]`, the payload
 * one MessagePack value (msgpackr, plain maps: no records, no shared structures, so any
 * MessagePack implementation can read it). A frame of length 0 carries no value: it is the
 * "goodbye" control frame (the sender closes this connection on purpose; see tcp-transport.ts).
 *
 * Untrusted input rules, which the decoder keeps for every byte sequence:
 * - The length prefix is checked against `frameBytesMax` as soon as its 4 bytes are in, before
 *   any payload byte is kept: a peer announcing 4 GiB and sending 10 bytes costs 10 bytes.
 * - Bytes held between chunks never exceed `3 + frameBytesMax` (a partial header, or one partial
 *   frame whose length was accepted).
 * - Nothing throws: bad input yields a `FrameError` value with code `CONCLAVE_PROTOCOL`; the
 *   decoder then stays failed (the connection must be closed: framing is lost).
 * - An HTTP request (or a TLS handshake) sent to the peer port is recognised from its first
 *   bytes and named in the error, so an operator who points curl at the wrong port learns why.
 */
import { Packr } from 'msgpackr';

/** Bytes of the length prefix. */
export const FRAME_HEADER_BYTES = 4;

/**
 * Default largest frame payload. Unit: bytes. Default: 1.5 MiB, etcd's default
 * `--max-request-bytes`. It must exceed the largest message a protocol sends: Raft's
 * `bytesPerMessageMax` (1 MiB) plus per-message overhead, and the largest single entry the
 * server accepts plus overhead (an append always carries at least one entry).
 */
export const FRAME_BYTES_MAX_DEFAULT = 1536 * 1024;

/** Upper bound accepted for `frameBytesMax` by config validation. Unit: bytes (64 MiB). */
export const FRAME_BYTES_MAX_LIMIT = 64 * 1024 * 1024;

export type FrameErrorKind =
  /** The length prefix announces more than `frameBytesMax`. */
  | 'frame-too-large'
  /** The stream starts like an HTTP request: wrong port. */
  | 'http-request'
  /** The stream starts like a TLS handshake: the peer expects TLS, this port speaks plain. */
  | 'tls-handshake'
  /** The payload is not exactly one MessagePack value. */
  | 'payload-undecodable'
  /** Outgoing: the encoded value is larger than `frameBytesMax` (it is not sent). */
  | 'payload-too-large'
  /** Outgoing: the value cannot be encoded (a bug in the caller). */
  | 'encode-failed';

/** A protocol error as a value: what went wrong, in words an operator can act on. */
export interface FrameError {
  readonly code: 'CONCLAVE_PROTOCOL';
  readonly kind: FrameErrorKind;
  readonly message: string;
}

export function frameError(kind: FrameErrorKind, message: string): FrameError {
  return { code: 'CONCLAVE_PROTOCOL', kind, message };
}

export type EncodeResult =
  | { readonly ok: true; readonly bytes: Buffer }
  | { readonly ok: false; readonly error: FrameError };

export type DecodeResult =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: FrameError };

/**
 * MessagePack encoding and decoding of single values. One per transport: msgpackr keeps an
 * internal write buffer, which is why this is an object and not module state.
 */
export class MessageCodec {
  // Plain maps only: records and shared structures would let a peer's bytes change how later
  // bytes decode; moreTypes off keeps the encoding readable by any MessagePack library.
  private readonly packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true });

  /** The MessagePack bytes of `value`, refused when longer than `payloadBytesMax`. */
  encodePayload(value: unknown, payloadBytesMax: number): EncodeResult {
    let payload: Buffer;
    try {
      payload = this.packr.pack(value);
    } catch (error) {
      return { ok: false, error: frameError('encode-failed', `cannot encode: ${describe(error)}`) };
    }
    if (payload.length > payloadBytesMax) {
      return {
        ok: false,
        error: frameError('payload-too-large',
          `message of ${payload.length} bytes exceeds the limit of ${payloadBytesMax} bytes`),
      };
    }
    return { ok: true, bytes: payload };
  }

  /** One frame: the 4-byte length, then the payload; a fresh buffer the caller may keep. */
  encodeFrame(value: unknown, frameBytesMax: number): EncodeResult {
    const encoded = this.encodePayload(value, frameBytesMax);
    if (!encoded.ok) return encoded;
    const payload = encoded.bytes;
    // msgpackr hands out views of its reusable buffer: copy into a frame we own.
    const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + payload.length);
    frame.writeUInt32BE(payload.length, 0);
    payload.copy(frame, FRAME_HEADER_BYTES);
    return { ok: true, bytes: frame };
  }

  /** Decodes exactly one MessagePack value. Never throws. */
  decodePayload(payload: Uint8Array): DecodeResult {
    try {
      // Also refuses trailing bytes after the value ("end of buffer not reached").
      return { ok: true, value: this.packr.unpack(payload) };
    } catch (error) {
      return {
        ok: false,
        error: frameError('payload-undecodable',
          `payload of ${payload.length} bytes is not one MessagePack value: ${describe(error)}`),
      };
    }
  }
}

/** The zero-length "goodbye" control frame. */
export function goodbyeFrame(): Buffer {
  return Buffer.alloc(FRAME_HEADER_BYTES);
}

export interface FrameDecoderOutput {
  /** Complete frame payloads in stream order (an empty one is a goodbye frame). */
  readonly payloads: readonly Uint8Array[];
  /** Set when the stream is broken; the decoder stays failed and the connection must close. */
  readonly error: FrameError | undefined;
}

const HTTP_METHOD_PREFIXES: ReadonlySet<string> = new Set([
  'GET ', 'POST', 'PUT ', 'HEAD', 'DELE', 'OPTI', 'PATC', 'CONN', 'TRAC', 'PRI ',
]);

/**
 * Splits a byte stream into frame payloads, across partial and coalesced chunks. Payloads are
 * views of the pushed chunks when a frame lies inside one chunk (no copy), fresh buffers
 * otherwise; the caller must not reuse chunk memory it pushed.
 */
export class FrameDecoder {
  private readonly chunks: Uint8Array[] = [];
  private buffered = 0;
  /** The accepted length of the frame being read; undefined while reading a header. */
  private payloadBytes: number | undefined;
  private atStreamStart = true;
  private failure: FrameError | undefined;

  /** `frameBytesMax`: the largest payload accepted (unit: bytes); may be changed later. */
  constructor(private frameBytesMaxValue: number) {}

  get frameBytesMax(): number {
    return this.frameBytesMaxValue;
  }

  /** Changes the limit for frames whose header has not been read yet. */
  set frameBytesMax(value: number) {
    this.frameBytesMaxValue = value;
  }

  /** Bytes held waiting for the rest of a header or frame. */
  get bufferedBytes(): number {
    return this.buffered;
  }

  get error(): FrameError | undefined {
    return this.failure;
  }

  push(chunk: Uint8Array): FrameDecoderOutput {
    const payloads: Uint8Array[] = [];
    if (this.failure !== undefined) return { payloads, error: this.failure };
    if (chunk.length > 0) {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
    }
    for (;;) {
      if (this.payloadBytes === undefined) {
        if (this.buffered < FRAME_HEADER_BYTES) break;
        const header = this.take(FRAME_HEADER_BYTES);
        const problem = this.checkHeader(header);
        if (problem !== undefined) return this.fail(payloads, problem);
        this.payloadBytes = readUint32(header);
        this.atStreamStart = false;
      }
      if (this.buffered < this.payloadBytes) break;
      payloads.push(this.take(this.payloadBytes));
      this.payloadBytes = undefined;
    }
    return { payloads, error: undefined };
  }

  private checkHeader(header: Uint8Array): FrameError | undefined {
    if (this.atStreamStart) {
      const text = String.fromCharCode(...header);
      if (HTTP_METHOD_PREFIXES.has(text)) {
        return frameError('http-request',
          `received an HTTP request (${JSON.stringify(text.trim())} ...) on a Conclave peer ` +
          'port, which speaks length-prefixed MessagePack frames; use the client address');
      }
      // TLS record: content type 22 (handshake), protocol major version 3.
      if (header[0] === 0x16 && header[1] === 0x03) {
        return frameError('tls-handshake',
          'received a TLS handshake on a plain-text Conclave peer port (TLS on one side only?)');
      }
    }
    const length = readUint32(header);
    if (length > this.frameBytesMaxValue) {
      return frameError('frame-too-large',
        `frame length prefix ${length} exceeds frameBytesMax ${this.frameBytesMaxValue}`);
    }
    return undefined;
  }

  private fail(payloads: Uint8Array[], error: FrameError): FrameDecoderOutput {
    this.failure = error;
    this.chunks.length = 0;
    this.buffered = 0;
    return { payloads, error };
  }

  /** Removes and returns the first `count` buffered bytes (`count <= buffered`). */
  private take(count: number): Uint8Array {
    const first = this.chunks[0];
    if (first !== undefined && first.length >= count) {
      const out = first.subarray(0, count);
      if (first.length === count) this.chunks.shift();
      else this.chunks[0] = first.subarray(count);
      this.buffered -= count;
      return out;
    }
    const out = new Uint8Array(count);
    let filled = 0;
    while (filled < count) {
      const chunk = this.chunks[0]!;
      const part = Math.min(chunk.length, count - filled);
      out.set(chunk.subarray(0, part), filled);
      filled += part;
      if (part === chunk.length) this.chunks.shift();
      else this.chunks[0] = chunk.subarray(part);
    }
    this.buffered -= count;
    return out;
  }
}

function readUint32(bytes: Uint8Array): number {
  return ((bytes[0]! << 24) >>> 0) + (bytes[1]! << 16) + (bytes[2]! << 8) + bytes[3]!;
}

/**
 * What a peer port writes back to an HTTP client before closing: a complete HTTP/1.1 response
 * with a one-line body, so that curl or a browser shows the reason.
 */
export function httpRefusalResponse(): string {
  const body = 'This is a Conclave peer port (length-prefixed MessagePack frames between cluster ' +
    'members), not HTTP: use the client address.\n';
  return 'HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
