/**
 * The frames of the multiplexed client stream (docs/protocol.md), decoded and checked before
 * anything acts on them. A WebSocket message is a msgpack sequence: one or more msgpack maps
 * back to back, each one frame. A request frame is `{ id, op, body }`; what cannot be read as
 * one becomes a `bad` frame carrying the error to answer (with the request's id when it had a
 * readable one), never an exception.
 */
import { Packr, Unpackr } from 'msgpackr';
import { REQUEST_TIMEOUT_MS_MAX } from '../adapters/request-deadline.js';
import { CoordError } from '../errors.js';
import type { Body } from './client-requests.js';

/** The version of the stream protocol this member speaks (the hello carries the client's). */
export const STREAM_PROTOCOL_VERSION = 1;

/**
 * Bytes a frame may take on top of its body, for `id`, `op` and the map around them. Unit:
 * bytes. So a frame whose body is at the HTTP body limit (`requestBytesMax`) is accepted.
 */
export const FRAME_ENVELOPE_BYTES = 1024;

export type RequestFrame = {
  readonly kind: 'request';
  readonly id: number;
  readonly op: string;
  readonly body: Body;
  /**
   * The client's deadline for this request (HTTP's `conclave-timeout`): the member answers
   * CONCLAVE_DEADLINE_EXCEEDED when it passes with the call still waiting. Unit: ms.
   */
  readonly timeoutMs?: number;
  /** The frame's size in the message. Unit: bytes. */
  readonly bytes: number;
};

export type BadFrame = {
  readonly kind: 'bad';
  /** The request's id, when it had a readable one (its answer repeats it). */
  readonly id?: number;
  readonly error: CoordError;
  /** The stream cannot go on: the member answers, then closes it. */
  readonly fatal?: true;
};

export type Frame = RequestFrame | BadFrame;

// Plain msgpack both ways: no record extension, no structured clone, maps as objects; numbers
// beyond 2^53 decode as numbers (the parsers then refuse what is not a safe integer).
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, structuredClone: false,
  int64AsType: 'number' });
const packr = new Packr({ useRecords: false, variableMapSize: true,
  // Absent fields stay absent, as JSON.stringify leaves them out of the HTTP answers.
  ...{ skipValues: [undefined] } });

const FRAME_FIELDS: ReadonlySet<string> = new Set(['id', 'op', 'body', 'timeoutMs']);

function protocolError(message: string): CoordError {
  return new CoordError('CONCLAVE_PROTOCOL', message);
}

/**
 * The frames of one message, at most `framesMax` (more become one fatal `bad` frame) and
 * each at most `frameBytesMax`. A message that stops being msgpack ends in a `bad` frame: what came
 * before it is kept.
 */
export function decodeMessage(data: Uint8Array, framesMax: number, frameBytesMax: number):
  Frame[] {
  const frames: Frame[] = [];
  try {
    unpackr.unpackMultiple(data, (value: unknown, start?: number, end?: number) => {
      const bytes = (end ?? 0) - (start ?? 0);
      if (frames.length >= framesMax) {
        frames.push({ kind: 'bad', fatal: true, error: new CoordError('CONCLAVE_OVERLOADED',
          `a message holds at most ${framesMax} frames; the rest was not read and the stream `
          + 'is closed: its requests were not applied') });
        return false; // stop reading this message
      }
      frames.push(checkFrame(value, bytes, frameBytesMax));
      return undefined;
    });
  } catch (error) {
    frames.push({ kind: 'bad', error: protocolError('the message is not a msgpack sequence '
      + `of frames: ${error instanceof Error ? error.message.slice(0, 200) : String(error)}`) });
  }
  if (frames.length === 0) frames.push({ kind: 'bad', error: protocolError('empty message') });
  return frames;
}

/** One decoded value as a request frame, or what is wrong with it. */
export function checkFrame(value: unknown, bytes: number, frameBytesMax: number): Frame {
  if (typeof value !== 'object' || value === null || Array.isArray(value)
    || value instanceof Uint8Array) {
    return { kind: 'bad', error: protocolError('a frame must be a map { id, op, body }') };
  }
  const frame = value as Record<string, unknown>;
  const id = frame['id'];
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) {
    return { kind: 'bad', error: protocolError('a frame needs an "id": an integer >= 0') };
  }
  const bad = (message: string): Frame => ({ kind: 'bad', id,
    error: new CoordError('CONCLAVE_REQUEST_INVALID', message) });
  const unknown = Object.keys(frame).filter((name) => !FRAME_FIELDS.has(name));
  if (unknown.length > 0) return bad(unknown.map((n) => `${n}: unknown field`).join('; '));
  const op = frame['op'];
  if (typeof op !== 'string') return bad('op: must be a string');
  const body = frame['body'] ?? {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)
    || body instanceof Uint8Array || body instanceof Date) {
    return bad('body: must be a map');
  }
  if (bytes > frameBytesMax) {
    return bad(`the frame of ${bytes} bytes is over the limit of ${frameBytesMax} `
      + '(--max-request-bytes plus the frame envelope)');
  }
  const timeoutMs = frame['timeoutMs'];
  if (timeoutMs === undefined) return { kind: 'request', id, op, body: body as Body, bytes };
  if (typeof timeoutMs !== 'number' || !Number.isSafeInteger(timeoutMs) || timeoutMs < 1
    || timeoutMs > REQUEST_TIMEOUT_MS_MAX) {
    return bad(`timeoutMs: must be an integer from 1 to ${REQUEST_TIMEOUT_MS_MAX}`);
  }
  return { kind: 'request', id, op, body: body as Body, timeoutMs, bytes };
}

/** An answer frame (docs/protocol.md, "Answers"). */
export type AnswerFrame =
  | { readonly id: number; readonly ok: unknown }
  | { readonly id?: number; readonly error: Readonly<Record<string, unknown>> }
  | { readonly id: number; readonly watch: Uint8Array }
  | { readonly id: number; readonly end: true };

/** One frame's msgpack encoding. */
export function encodeFrame(frame: AnswerFrame | Readonly<Record<string, unknown>>): Uint8Array {
  return packr.pack(frame);
}
