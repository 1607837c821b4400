/**
 * The run as a reader wants it: one line per event that matters, with the milliseconds since
 * the fault, who saw it, and what it was; and the tally of many runs.
 */
import type { EshopEvent } from './events.js';

/** The words for one event, or undefined for the ones the timeline leaves out. */
export function describeEvent(event: EshopEvent): string | undefined {
  switch (event.kind) {
    case 'fault':
      return `FAULT: ${event.action} ${event.target}${event.pid === undefined ? ''
        : ` (pid ${event.pid})`}`;
    case 'service-exited':
      return `${event.service} (incarnation ${event.incarnation}) exited: ${event.how}`;
    case 'service-down':
      return `failure detected: ${event.service} down (phi ${event.phi}, silent `
        + `${event.silenceMs} ms)`;
    case 'service-up':
      return `${event.service} healthy again (incarnation ${event.incarnation})`;
    case 'self-stall':
      return `own stall of ${event.stalledMs} ms: forgets the services' silence`;
    case 'leader-seen':
      return event.leader === undefined ? `leader lost: none (${event.reason})`
        : `leader is ${event.leader}, generation ${event.generation} (${event.reason})`;
    case 'leader-observed': {
      const now = event.leader === undefined ? 'no candidate left'
        : `first in line now ${event.leader} (token ${event.token})`;
      return event.previous === undefined ? `election: ${now}`
        : `leader lost: ${event.previous}'s key is gone (lease ended or resigned); ${now}`;
    }
    case 'became-leader':
      return `NEW LEADER: this monitor, term ${event.term}, token ${event.token}`;
    case 'lost-leadership':
      return `leadership with token ${event.token} ended (${event.reason})`;
    case 'campaign-failed':
      return `campaign failed: ${event.error}`;
    case 'registered':
      return `announced token ${event.token} to the supervisor`;
    case 'leader-registered':
      return `fence raised to ${event.token} by ${event.monitor}`;
    case 'stale-leadership':
      return `token ${event.token} refused (supervisor has ${event.highest}): stops acting`;
    case 'order-sent':
      return `restart ordered: ${event.service} (incarnation ${event.incarnation}) with token `
        + `${event.token}`;
    case 'order-done':
      return `restart done: ${event.service} now incarnation ${event.incarnation} `
        + `(${event.outcome})`;
    case 'order-found-done':
      return `restart of ${event.service} already recorded done (token ${event.doneBy}): `
        + 'not ordered again';
    case 'order-rejected':
      return `order refused: ${event.code}`;
    case 'order-failed':
      return `order for ${event.service} failed, will retry: ${event.error}`;
    case 'pausing':
      return `PAUSED (SIGSTOP) with its order for ${event.service} (token ${event.token}) `
        + 'issued but not yet sent';
    case 'resumed':
      return `resumed (SIGCONT) after ${event.pausedMs} ms: the issued order goes out now`;
    case 'restarted':
      return `RESTARTED ${event.service} -> incarnation ${event.incarnation} (pid ${event.pid}) `
        + `for ${event.monitor}, token ${event.token}`;
    case 'duplicate':
      return `no-op: ${event.service} incarnation ${event.incarnation} already replaced `
        + `(${event.monitor}, token ${event.token})`;
    case 'rejected':
      return `REJECTED ${event.what}${event.service === undefined ? '' : ` of ${event.service}`}`
        + ` from ${event.monitor}: token ${event.token} < ${event.highest} (${event.code}, 409)`;
    case 'supervisor-ready': case 'service-started': case 'service-listening':
    case 'monitor-ready':
      return undefined;
    default:
      return assertNever(event);
  }
}

/** The timeline lines of the events from `startAtMs` to `endAtMs`. */
export function formatTimeline(events: readonly EshopEvent[], startAtMs: number,
  endAtMs = Infinity): string[] {
  const lines: string[] = [];
  const sorted = [...events].filter((e) => e.atMs >= startAtMs && e.atMs <= endAtMs)
    .sort((a, b) => a.atMs - b.atMs);
  for (const event of sorted) {
    const text = describeEvent(event);
    if (text === undefined) continue;
    const ms = String(event.atMs - startAtMs).padStart(6);
    lines.push(`${ms} ms  ${event.source.padEnd(10)}  ${text}`);
  }
  return lines;
}

function assertNever(value: never): never {
  throw new Error(`unexpected event ${JSON.stringify(value)}`);
}
