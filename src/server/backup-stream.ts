/**
 * `GET /v1/snapshot`: a consistent point-in-time backup of the store (backup-file.ts), served
 * by the leader. A follower answers 307 to the leader. The leader first confirms its leadership
 * and waits until it applied everything committed before the request (ReadIndex, as a
 * linearizable read), then captures the store copy-on-write at that point, encodes it in steps
 * (writes go on meanwhile) and streams it a frame per event-loop turn, waiting for the socket
 * to drain. A client that goes away cancels the capture.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { crc32c } from '../core/checksum.js';
import type { NodeId } from '../core/ids.js';
import type { ConsistentCore } from '../runtime/core/consistent-core.js';
import { kvSnapshotSteps } from '../runtime/core/kv-snapshots.js';
import {
  BACKUP_FRAME_BYTES_MAX, encodeBackupEnd, encodeBackupHeader, encodeFrameLength,
  type BackupHeader,
} from './backup-file.js';

/**
 * Backups a member streams at once. Unit: streams. Default: 1. Why: each holds a whole encoded
 * copy of the store in memory until it is sent; an operator needs one at a time.
 */
export const BACKUP_STREAMS_MAX = 1;

export interface BackupStreamOptions {
  readonly core: ConsistentCore;
  readonly clusterId: string;
  readonly clientUrlOf: (id: NodeId) => string | undefined;
}

type Send = (res: ServerResponse, status: number, body: unknown) => void;

export class BackupStreams {
  private streams = 0;

  constructor(private readonly o: BackupStreamOptions, private readonly send: Send) {}

  serve(req: IncomingMessage, res: ServerResponse): void {
    const status = this.o.core.status();
    if (status.role !== 'leader') return this.redirect(res, status.leaderId, req.url ?? '');
    if (this.streams >= BACKUP_STREAMS_MAX) {
      return this.fail(res, 429, 'CONCLAVE_LIMIT_EXCEEDED', `this member streams at most `
        + `${BACKUP_STREAMS_MAX} backup at once; retry when it is done`);
    }
    this.streams += 1;
    let open = true;
    res.once('close', () => {
      if (open) this.streams -= 1;
      open = false;
    });
    this.o.core.runtime.read((outcome) => {
      if (res.destroyed) return;
      if (outcome.kind !== 'ready') {
        return this.fail(res, 503, 'CONCLAVE_NOT_LEADER', `leadership not confirmed `
          + `(${outcome.reason}); retry`);
      }
      this.capture(res);
    });
  }

  private capture(res: ServerResponse): void {
    const store = this.o.core.store;
    const header: BackupHeader = { clusterId: this.o.clusterId, index: store.appliedIndex,
      term: this.o.core.status().term, revision: store.revision, keys: store.keyCount };
    const steps = kvSnapshotSteps(store);
    let done = false;
    res.once('close', () => {
      if (!done) steps.cancel();
    });
    const encode = (): void => {
      if (res.destroyed) return;
      const data = steps.step();
      if (data === undefined) return void setImmediate(encode);
      done = true;
      res.writeHead(200, { 'content-type': 'application/octet-stream',
        'cache-control': 'no-store', 'x-conclave-revision': String(header.revision) });
      streamFrames(res, encodeBackupHeader(header), data);
    };
    encode();
  }

  private redirect(res: ServerResponse, leaderId: NodeId | undefined, path: string): void {
    const leaderUrl = leaderId === undefined ? undefined : this.o.clientUrlOf(leaderId);
    if (leaderUrl === undefined) {
      return this.fail(res, 503, 'CONCLAVE_NO_QUORUM', `${this.o.core.id} knows no leader`);
    }
    res.writeHead(307, { location: `${leaderUrl}${path}`, 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 'CONCLAVE_NOT_LEADER', outcome: 'failed',
      message: `not the leader; the leader is ${leaderId}`, leaderId, leaderUrl } }));
  }

  private fail(res: ServerResponse, status: number, code: string, message: string): void {
    this.send(res, status, { error: { code, message, outcome: 'failed' } });
  }
}

/** Header, frames of the data (one per turn, after the socket drained), end and CRC. */
function streamFrames(res: ServerResponse, header: Uint8Array, data: Uint8Array): void {
  let crc = crc32c(header);
  res.write(header);
  let at = 0;
  const next = (): void => {
    if (res.destroyed) return;
    if (at >= data.length) return void res.end(encodeBackupEnd(data.length, crc));
    const frame = data.subarray(at, Math.min(data.length, at + BACKUP_FRAME_BYTES_MAX));
    at += frame.length;
    const length = encodeFrameLength(frame.length);
    crc = crc32c(frame, 0, frame.length, crc32c(length, 0, 4, crc));
    res.write(length);
    if (res.write(frame)) setImmediate(next);
    else res.once('drain', next);
  };
  next();
}
