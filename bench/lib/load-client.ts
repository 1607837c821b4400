/**
 * The load generator: its own Node process (so its CPU is measured apart from the harness), the
 * same code for both systems. `inflight` closed-loop writers each keep one put outstanding on
 * their own keep-alive connection to the leader: a warm-up, then a fixed window in which every
 * completion is counted and its latency kept. Talks to the harness over the IPC channel:
 * `window-start` when the window opens, then `done` with the figures.
 *
 * Run by the harness as: node --import tsx bench/lib/load-client.ts '<LoadClientOptions JSON>'
 */
import * as http from 'node:http';
import { post } from './http.js';
import { LatencyRecorder, type LatencySummary } from './stats.js';
import { putEncoder, valueOf, type SystemName } from './wire.js';

export interface LoadClientOptions {
  readonly system: SystemName;
  /** host:port of the member to send every put to (the leader). */
  readonly endpoint: string;
  /** Closed-loop writers, each with one request outstanding. Unit: requests. */
  readonly inflight: number;
  readonly warmupMs: number;
  readonly windowMs: number;
  readonly keySpaceSize: number;
  readonly keyBytes: number;
  readonly valueBytes: number;
}

export type LoadClientMessage =
  | { readonly kind: 'window-start' }
  | { readonly kind: 'done'; readonly result: LoadClientResult };

export interface LoadClientResult {
  /** Puts acknowledged with 200 inside the window. */
  readonly ops: number;
  /** Puts that failed (non-200 or no answer) inside the window. */
  readonly errors: number;
  readonly firstError: string | undefined;
  /** The window's real length. Unit: ms. */
  readonly windowMs: number;
  readonly latency: LatencySummary;
}

/** A request gives up after this long (a healthy put takes milliseconds). Unit: ms. */
const REQUEST_TIMEOUT_MS = 10_000;
/** Pause after a failed request, so a broken endpoint is not hammered in a hot loop. Unit: ms. */
const ERROR_PAUSE_MS = 10;

async function main(options: LoadClientOptions): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.inflight });
  const encoder = putEncoder(options.system, options.keySpaceSize, options.keyBytes,
    valueOf(options.valueBytes));
  const recorder = new LatencyRecorder();
  let phase: 'warmup' | 'window' | 'done' = 'warmup';
  let errors = 0;
  let firstError: string | undefined;
  const writer = async (lane: number): Promise<void> => {
    const clientId = `bench-${process.pid}-${lane}`;
    for (let sequence = 1; phase !== 'done'; sequence++) {
      const keyIndex = Math.floor(Math.random() * options.keySpaceSize);
      const startMs = performance.now();
      let failure: string | undefined;
      try {
        const body = encoder.body(keyIndex, clientId, sequence);
        const answer = await post(options.endpoint, encoder.path, body,
          { agent, timeoutMs: REQUEST_TIMEOUT_MS, keepBody: false });
        if (answer.status !== 200) failure = `HTTP ${answer.status}`;
      } catch (error) {
        failure = error instanceof Error ? error.message : String(error);
      }
      const inWindow = phase === 'window';
      if (failure === undefined) {
        if (inWindow) recorder.record(performance.now() - startMs);
        continue;
      }
      if (inWindow) {
        errors++;
        firstError ??= failure;
      }
      await new Promise((resolve) => setTimeout(resolve, ERROR_PAUSE_MS));
    }
  };
  const lanes = Array.from({ length: options.inflight }, (_, lane) => writer(lane));
  await new Promise((resolve) => setTimeout(resolve, options.warmupMs));
  phase = 'window';
  const windowStartMs = performance.now();
  send({ kind: 'window-start' });
  await new Promise((resolve) => setTimeout(resolve, options.windowMs));
  phase = 'done';
  const windowMs = performance.now() - windowStartMs;
  const result = { ops: recorder.size, errors, firstError, windowMs, latency: recorder.summary() };
  // Report at once: writers still waiting on a reply are not counted, and need not be awaited.
  send({ kind: 'done', result }, () => process.exit(0));
  await Promise.all(lanes);
}

function send(message: LoadClientMessage, then?: () => void): void {
  if (process.send === undefined) {
    throw new Error('load-client: run me from the harness (no IPC channel)');
  }
  process.send(message, undefined, {}, () => then?.());
}

const argument = process.argv[2];
if (argument === undefined) {
  process.stderr.write('usage: node --import tsx bench/lib/load-client.ts \'<options JSON>\'\n');
  process.exit(2);
}
main(JSON.parse(argument) as LoadClientOptions).catch((error: unknown) => {
  const text = error instanceof Error ? error.stack ?? error.message : String(error);
  process.stderr.write(`load-client: ${text}\n`);
  process.exit(1);
});
