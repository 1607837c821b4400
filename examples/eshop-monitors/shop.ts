/**
 * Starts one ExampleEshop for a scenario run: the supervisor (which starts the services), then
 * the monitors, monitor-1 first so that it is the first leader in both modes (the oldest gossip
 * member; the first in the election's line). Resolves once every monitor sees every service
 * healthy and the leader's token is registered with the supervisor.
 */
import { fileURLToPath } from 'node:url';
import type { MonitorConfig } from './config.js';
import type { EshopEvent, EshopEventOf } from './events.js';
import type { EventLog, ProcessGroup, TrackedProcess } from './processes.js';

/** The example's processes run TypeScript through tsx's loader, as the runner does. */
const TSX_LOADER = import.meta.resolve('tsx');
const SUPERVISOR_FILE = fileURLToPath(new URL('./supervisor.ts', import.meta.url));
const MONITOR_FILE = fileURLToPath(new URL('./monitor.ts', import.meta.url));

export type CoordinationMode = 'core' | 'etcd' | 'gossip';

export const SHOP_SERVICES: readonly string[] = Object.freeze(['catalog', 'cart', 'payment']);

export interface ShopOptions {
  readonly coordination: CoordinationMode;
  /** Core and etcd modes: the cluster's client endpoints. */
  readonly endpoints?: readonly string[];
  readonly monitorCount: number;
  readonly monitorConfig: Partial<MonitorConfig>;
  readonly stepDeadlineMs: number;
  readonly signal?: AbortSignal;
}

export interface Shop {
  readonly supervisor: TrackedProcess;
  readonly supervisorUrl: string;
  /** Base URL of each service by name. */
  readonly serviceUrls: ReadonlyMap<string, string>;
  readonly monitors: ReadonlyMap<string, TrackedProcess>;
}

/** Node arguments that run a TypeScript file of the example. */
export function tsArgs(file: string, args: readonly string[]): string[] {
  return ['--import', TSX_LOADER, file, ...args];
}

export async function startShop(group: ProcessGroup, log: EventLog,
  options: ShopOptions): Promise<Shop> {
  const wait = <K extends EshopEvent['kind']>(kind: K, what: string,
    matches: (e: EshopEventOf<K>) => boolean = () => true): Promise<EshopEventOf<K>> =>
    log.waitFor((e) => e.kind === kind && matches(e as EshopEventOf<K>), what,
      { deadlineMs: options.stepDeadlineMs, ...signalOf(options) }) as Promise<EshopEventOf<K>>;
  const supervisor = group.spawn('supervisor', process.execPath,
    tsArgs(SUPERVISOR_FILE, ['--services', SHOP_SERVICES.join(',')]));
  const ready = await wait('supervisor-ready', 'the supervisor');
  const serviceUrls = new Map<string, string>();
  for (const event of log.events) {
    if (event.kind !== 'service-started') continue;
    serviceUrls.set(event.service, `http://127.0.0.1:${event.port}`);
  }
  const supervisorUrl = `http://127.0.0.1:${ready.port}`;
  const services = [...serviceUrls].map(([name, url]) => `${name}=${url}`).join(',');
  const monitors = new Map<string, TrackedProcess>();
  const startMonitor = (name: string, seeds: string): Promise<EshopEventOf<'monitor-ready'>> => {
    const mode = options.coordination === 'gossip'
      ? ['--bind', '127.0.0.1:0', '--seeds', seeds]
      : ['--endpoints', (options.endpoints ?? []).join(',')];
    monitors.set(name, group.spawn(name, process.execPath, tsArgs(MONITOR_FILE, [
      '--name', name, '--supervisor', supervisorUrl, '--services', services,
      '--coordination', options.coordination, ...mode,
      '--config', JSON.stringify(options.monitorConfig)])));
    return wait('monitor-ready', `${name} ready`, (e) => e.source === name);
  };
  // monitor-1 first and alone: it must be the oldest member, or the first in line.
  const first = await startMonitor('monitor-1', '');
  await wait('registered', 'monitor-1 leading and registered', (e) => e.source === 'monitor-1');
  const others = [];
  for (let i = 2; i <= options.monitorCount; i++) {
    others.push(startMonitor(`monitor-${i}`, first.address ?? ''));
  }
  await Promise.all(others);
  return { supervisor, supervisorUrl, serviceUrls, monitors };
}

function signalOf(options: ShopOptions): { signal?: AbortSignal } {
  return options.signal === undefined ? {} : { signal: options.signal };
}
