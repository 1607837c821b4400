/**
 * What every process of the example reports, one JSON object per line on stdout: the scenario
 * runner reads these lines to build the timeline and to check the run. Each line carries the
 * wall-clock time it happened at (`atMs`, Date.now(): every process runs on this machine, so
 * one clock orders them all) and the process that said it (`source`).
 */

/** Who said it: `supervisor`, `monitor-1`, `runner`, ... */
export type EventSource = string;

/** The events, by kind. Fields are plain JSON (the lines cross process boundaries). */
export type EshopEventBody =
  // A service (read by the supervisor, which started it).
  | { readonly kind: 'service-listening'; readonly port: number }
  // The supervisor.
  | { readonly kind: 'supervisor-ready'; readonly port: number }
  | { readonly kind: 'service-started'; readonly service: string; readonly port: number;
    readonly pid: number; readonly incarnation: number }
  | { readonly kind: 'service-exited'; readonly service: string; readonly pid: number;
    readonly incarnation: number; readonly how: string }
  | { readonly kind: 'leader-registered'; readonly monitor: string; readonly token: number }
  | { readonly kind: 'restarted'; readonly service: string; readonly monitor: string;
    readonly token: number; readonly incarnation: number; readonly pid: number }
  | { readonly kind: 'duplicate'; readonly service: string; readonly monitor: string;
    readonly token: number; readonly incarnation: number; readonly current: number }
  | { readonly kind: 'rejected'; readonly what: 'restart' | 'register';
    readonly service?: string; readonly monitor: string; readonly token: number;
    readonly highest: number; readonly code: string }
  // A monitor.
  | { readonly kind: 'monitor-ready'; readonly address?: string }
  | { readonly kind: 'service-down'; readonly service: string; readonly phi: number;
    readonly silenceMs: number }
  | { readonly kind: 'service-up'; readonly service: string; readonly incarnation: number }
  | { readonly kind: 'self-stall'; readonly stalledMs: number }
  | { readonly kind: 'leader-seen'; readonly leader?: string; readonly generation?: number;
    readonly reason: string }
  | { readonly kind: 'became-leader'; readonly token: number; readonly term: number }
  | { readonly kind: 'lost-leadership'; readonly token: number; readonly reason: string }
  | { readonly kind: 'registered'; readonly token: number }
  | { readonly kind: 'stale-leadership'; readonly token: number; readonly highest: number }
  | { readonly kind: 'order-sent'; readonly service: string; readonly token: number;
    readonly incarnation: number }
  | { readonly kind: 'order-done'; readonly service: string; readonly token: number;
    readonly outcome: 'restarted' | 'already-restarted'; readonly incarnation: number }
  /** runOnce found the restart recorded done by an earlier leader: not ordered again. */
  | { readonly kind: 'order-found-done'; readonly service: string; readonly token: number;
    readonly doneBy: number; readonly incarnation: number }
  | { readonly kind: 'order-rejected'; readonly service: string; readonly token: number;
    readonly code: string; readonly message: string }
  | { readonly kind: 'order-failed'; readonly service: string; readonly token: number;
    readonly error: string }
  | { readonly kind: 'pausing'; readonly service: string; readonly token: number }
  | { readonly kind: 'resumed'; readonly pausedMs: number }
  | { readonly kind: 'campaign-failed'; readonly error: string }
  // The runner.
  | { readonly kind: 'fault'; readonly action: string; readonly target: string;
    readonly pid?: number }
  /** Core mode: the election's leader as every client sees it (the first candidate in line). */
  | { readonly kind: 'leader-observed'; readonly leader?: string; readonly token?: number;
    readonly previous?: string };

export type EshopEvent = EshopEventBody & {
  readonly atMs: number;
  readonly source: EventSource;
};

export type EshopEventKind = EshopEvent['kind'];

/** One event of kind K. */
export type EshopEventOf<K extends EshopEventKind> = Extract<EshopEvent, { readonly kind: K }>;

/** Writes one event line to stdout (synchronous for pipes and files on Linux). */
export function emitEvent(source: EventSource, body: EshopEventBody): void {
  process.stdout.write(`${JSON.stringify({ atMs: Date.now(), source, ...body })}\n`);
}

/** The event on one stdout line, or undefined when the line is not one of ours. */
export function parseEventLine(line: string): EshopEvent | undefined {
  if (!line.startsWith('{')) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  const ok = typeof record['kind'] === 'string' && typeof record['source'] === 'string'
    && typeof record['atMs'] === 'number';
  // Our own processes wrote it with emitEvent: the fields beyond these follow the union.
  return ok ? (value as EshopEvent) : undefined;
}
