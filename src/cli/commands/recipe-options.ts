/**
 * What `lease`, `elect` and `lock` share: TTL flags in seconds, the lease margin flag, the exit
 * code for a lost leadership or lock, status lines as `event key=value ...` (easy to parse in
 * scripts and tests), and waiting for Ctrl-C / SIGTERM or a signal to abort.
 */
import { Command, InvalidArgumentError } from 'commander';
import {
  CLIENT_DEFAULTS, RECIPE_TTL_MS_DEFAULT, type ConclaveClient,
} from '../../client/index.js';
import type { RecipeKind } from '../../core/election/keys.js';
import type { CliIo } from '../io.js';
import { listRecipes } from '../recipe-listing.js';
import { integerIn } from '../parse.js';

/**
 * Exit code when a leadership or lock was lost (its lease ended, this process stalled past
 * the lease margin, or its key vanished). 75 is sysexits' EX_TEMPFAIL: try again later. A
 * value rarely used by programs, so `conclave lock` can tell it from CMD's own codes.
 */
export const EXIT_LOST = 75;

/** Longest TTL a flag accepts: the store's limit (30 days). Unit: s. */
const TTL_S_MAX = 30 * 24 * 3600;

/** Seconds (fractions allowed) to whole milliseconds, at least 1. */
export function ttlSecondsFlag(value: string): number {
  const seconds = Number(value);
  if (value.trim() === '' || !Number.isFinite(seconds) || seconds <= 0 || seconds > TTL_S_MAX) {
    throw new InvalidArgumentError(`expected seconds, more than 0 and at most ${TTL_S_MAX}`);
  }
  return Math.max(1, Math.round(seconds * 1000));
}

export interface RecipeFlags {
  /** From --ttl (absent: RECIPE_TTL_MS_DEFAULT). Unit: ms. */
  readonly ttl?: number;
  readonly leaseMarginMs?: number;
}

/** The client options the recipe flags set. */
export function recipeClientOptions(flags: RecipeFlags): { leaseMarginMs?: number } {
  return flags.leaseMarginMs === undefined ? {} : { leaseMarginMs: flags.leaseMarginMs };
}

/** Adds --ttl (seconds, default 10) and --lease-margin-ms to a campaigning command. */
export function addRecipeOptions(command: Command): Command {
  return command
    .option('--ttl <seconds>', 'TTL of the lease held while waiting and holding; it must ' +
      'exceed the servers\' minimum (about 3.1 × their longest election timeout: 6.2 s on the ' +
      `LAN defaults), and bounds how long a crashed holder blocks the next (default: ` +
      `${RECIPE_TTL_MS_DEFAULT / 1000})`, ttlSecondsFlag)
    .option('--lease-margin-ms <ms>', 'give up this long before the lease could end; also the ' +
      'longest event-loop stall tolerated before giving up ' +
      `(default: ${CLIENT_DEFAULTS.leaseMarginMs})`,
    integerIn(1, 3_600_000));
}

/** One status line: `event key=value ...` (values with spaces or quotes JSON-quoted), or JSON. */
export function statusLine(json: boolean, event: string,
  fields: Readonly<Record<string, string | number>>): string {
  if (json) return JSON.stringify({ event, ...fields });
  const parts = Object.entries(fields).map(([key, value]) => {
    const text = String(value);
    return `${key}=${/^[^\s"=]+$/.test(text) ? text : JSON.stringify(text)}`;
  });
  return [event, ...parts].join(' ');
}

/** Prints a status line on stdout. */
export function printStatus(io: CliIo, json: boolean, event: string,
  fields: Readonly<Record<string, string | number>>): void {
  io.out(statusLine(json, event, fields));
}

/** Aborts its signal on SIGINT or SIGTERM (remembering which) until `remove()`. */
export class StopSignals {
  private readonly controller = new AbortController();
  private received: NodeJS.Signals | undefined;
  private readonly handlers = new Map<NodeJS.Signals, () => void>();

  constructor(onSignal?: (signal: NodeJS.Signals) => void) {
    for (const name of ['SIGINT', 'SIGTERM'] as const) {
      const handler = (): void => {
        this.received ??= name;
        this.controller.abort(new Error(`received ${name}`));
        onSignal?.(name);
      };
      this.handlers.set(name, handler);
      process.on(name, handler);
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The first signal received, if any. */
  get which(): NodeJS.Signals | undefined {
    return this.received;
  }

  remove(): void {
    for (const [name, handler] of this.handlers) process.removeListener(name, handler);
  }
}

/** Resolves when any of `signals` aborts. */
export function firstAbort(signals: readonly AbortSignal[]): Promise<void> {
  const any = AbortSignal.any([...signals]);
  if (any.aborted) return Promise.resolve();
  return new Promise((resolve) => any.addEventListener('abort', () => resolve(), { once: true }));
}

/**
 * How long a lock or campaign may wait before `waiting` is printed. Unit: ms. Why 300: an
 * uncontended acquire takes a few round trips (well under this on a LAN), so the line appears
 * only when someone else holds it, and soon enough that a person knows why nothing happens.
 */
export const WAITING_LINE_AFTER_MS = 300;

/**
 * Prints one `waiting` line on stderr (`lock=NAME` or `name=NAME`, the holder, how many are
 * ahead) if the acquire is still pending after WAITING_LINE_AFTER_MS; `cancel()` once it ends.
 * Nothing is printed when the holder is `selfId`: on a loaded machine an uncontended acquire
 * can outlast the delay, and the listing then finds this candidate already holding.
 */
export function announceWaiting(io: CliIo, json: boolean, client: ConclaveClient,
  kind: RecipeKind, name: string, selfId: string): { cancel(): void } {
  let cancelled = false;
  const field = kind === 'lock' ? 'lock' : 'name';
  const timer = setTimeout(() => {
    void listRecipes(client, kind, name).then(({ listings }) => {
      if (cancelled) return;
      const listing = listings[0];
      const holder = listing?.holder;
      if (holder?.id === selfId) return;
      io.err(statusLine(json, 'waiting', { [field]: name,
        ...(holder === undefined ? {} : { holder: holder.id, fencingToken: holder.fencingToken }),
        // Our own key is among the queue; those before it are ahead of us.
        ahead: Math.max(0, (listing?.queue.length ?? 1) - 1) + (holder === undefined ? 0 : 1) }));
    }, () => {
      if (!cancelled) io.err(statusLine(json, 'waiting', { [field]: name }));
    });
  }, WAITING_LINE_AFTER_MS);
  timer.unref();
  return {
    cancel: () => {
      cancelled = true;
      clearTimeout(timer);
    },
  };
}
