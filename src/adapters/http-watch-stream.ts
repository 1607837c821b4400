/**
 * A watch stream over HTTP: the member's newline-delimited JSON, read line by line into
 * WatchFrames (client-wire.ts). At most `framesBufferedMax` frames wait for the consumer; then
 * the response is paused, so a slow consumer slows the member's sending instead of filling
 * this process's memory. A partial line when the stream breaks is dropped; a line that is not
 * a frame ends the stream with CONCLAVE_PROTOCOL.
 */
import type { ClientRequest as NodeRequest, IncomingMessage } from 'node:http';
import type { StreamEnd, WatchFrame, WatchStream } from '../ports/client-transport.js';
import { CoordError } from '../errors.js';
import { parseWatchLine } from './client-wire.js';

/** Longest line read (one batch of events). Unit: bytes. Why: far above the server's batch. */
const LINE_BYTES_MAX = 64 * 1024 * 1024;

export class HttpWatchStream implements WatchStream {
  private readonly frames: (WatchFrame | StreamEnd)[] = [];
  private waiting: ((frame: WatchFrame | StreamEnd) => void) | undefined;
  private buffered = '';
  private ended = false;
  private readonly decoder = new TextDecoder();

  constructor(private readonly request: NodeRequest, private readonly response: IncomingMessage,
    private readonly framesBufferedMax: number, private readonly onClose: () => void) {
    response.on('data', (chunk: Buffer) => this.onData(chunk));
    response.on('end', () => this.finish());
    response.on('error', () => this.finish());
    response.on('aborted', () => this.finish());
    request.on('error', () => this.finish());
    request.on('close', () => this.finish());
  }

  next(): Promise<WatchFrame | StreamEnd> {
    const frame = this.frames.shift();
    if (frame !== undefined) {
      if (this.frames.length < this.framesBufferedMax / 2 && !this.ended) this.response.resume();
      return Promise.resolve(frame);
    }
    if (this.ended) return Promise.resolve({ kind: 'end' });
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  close(): void {
    this.finish();
    this.request.destroy();
  }

  private onData(chunk: Buffer): void {
    if (this.ended) return;
    this.buffered += this.decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = this.buffered.indexOf('\n')) >= 0) {
      const line = this.buffered.slice(0, newline).trim();
      this.buffered = this.buffered.slice(newline + 1);
      if (line === '') continue;
      const frame = parseWatchLine(line);
      if (frame instanceof CoordError) {
        this.push({ kind: 'end', error: frame });
        this.close();
        return;
      }
      this.push(frame);
    }
    if (this.buffered.length > LINE_BYTES_MAX) {
      this.push({ kind: 'end', error: new CoordError('CONCLAVE_PROTOCOL',
        `watch stream sent a line of more than ${LINE_BYTES_MAX} bytes`) });
      this.close();
      return;
    }
    if (this.frames.length >= this.framesBufferedMax) this.response.pause();
  }

  private push(frame: WatchFrame | StreamEnd): void {
    const waiting = this.waiting;
    if (waiting !== undefined) {
      this.waiting = undefined;
      waiting(frame);
    } else {
      this.frames.push(frame);
    }
  }

  /** The stream is over: a partial line is dropped; readers see `end` after what was read. */
  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.buffered = '';
    this.push({ kind: 'end' });
    this.onClose();
  }
}
