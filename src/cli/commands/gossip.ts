/**
 * `conclave gossip`: runs one gossip member (SWIM with Lifeguard and the emergent leader) until
 * SIGTERM or SIGINT, printing one line per membership change on stdout (`--json`: one JSON
 * object per line). A signal makes it leave gracefully (the others see 'left', not 'dead'),
 * then exit 0; a second signal closes at once. Logs go to stderr.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { createPinoLogger, type LogLevel } from '../../adapters/pino-logger.js';
import { SPLIT_BRAIN_STRATEGIES, type SplitBrainStrategy } from '../../core/swim/index.js';
import type { MembershipEvent, SwimConfig, SwimLeader } from '../../core/swim/index.js';
import { assertNever } from '../../core/assert.js';
import {
  generateGossipKey, joinCluster, loadGossipKeyFile, MEMBERSHIP_PORT_DEFAULT, SWIM_PROFILES,
  type Membership, type SwimProfile,
} from '../../membership/index.js';
import { gossipMetricsRegistry } from '../../membership/gossip-metrics.js';
import { startMetricsServer, type MetricsServer } from '../../membership/metrics-server.js';
import { GossipFeed } from '../../dashboard/gossip-feed.js';
import { parseListenAddress, startPageServer } from '../../dashboard/page-server.js';
import type { CliIo } from '../io.js';
import { integerIn } from '../parse.js';

export function gossipCommand(io: CliIo): Command {
  return new Command('gossip')
    .description('run one gossip member (SWIM + Lifeguard, oldest member leads) and print '
      + 'membership changes until Ctrl-C')
    .requiredOption('--name <name>', 'this member\'s name, unique in the cluster')
    .option('--bind <host:port>', 'where to listen, UDP and TCP (port 0: the OS picks)',
      `127.0.0.1:${MEMBERSHIP_PORT_DEFAULT}`)
    .option('--advertise <host:port>', 'the address other members reach this one at '
      + '(default: the bound address; needed with a wildcard --bind)')
    .option('--seeds <list>', 'members to join through: HOST:PORT,HOST:PORT,... (none, or only '
      + 'this member\'s own address: bootstrap a new cluster)', '')
    .addOption(new Option('--profile <profile>', 'timing profile (lan: 1 s probes; local: '
      + '200 ms probes, for loopback)').choices([...SWIM_PROFILES]).default('lan'))
    .addOption(new Option('--strategy <strategy>', 'which side of a partition may have a leader')
      .choices([...SPLIT_BRAIN_STRATEGIES]).default('keep-majority'))
    .option('--static-quorum-size <n>', 'live members needed to act with --strategy '
      + 'static-quorum (choose more than half of the largest cluster)', integerIn(1, 1_000_000))
    .option('--cluster-name <name>', 'checked in every handshake and datagram', 'conclave')
    .option('--join-timeout-ms <ms>', 'give up (exit 1) when no seed admits this member within '
      + 'this time (default: two rounds over the seeds)', integerIn(1, 86_400_000))
    .option('--encrypt-key-file <file>', 'gossip keyring: base64 keys, one a line, the first '
      + 'seals what this member sends, all are accepted (mode 0600; make one with conclave '
      + 'keygen)')
    .option('--insecure', 'allow a --bind beyond loopback without --encrypt-key-file '
      + '(unauthenticated gossip)', false)
    .option('--metrics <host:port>', 'serve Prometheus metrics at http://HOST:PORT/metrics '
      + '(port 0: the OS picks; the URL is printed)', listenAddress)
    .option('--admissions-per-second-max <n>', 'strangers admitted per second once the burst '
      + 'is spent (default: the profile\'s)', integerIn(1, 1_000_000))
    .option('--admissions-burst-max <n>', 'strangers admitted at once before the rate applies '
      + '(default: the profile\'s)', integerIn(1, 1_000_000))
    .option('--ui <host:port>', 'serve the dashboard\'s membership tab here (port 0: the OS ' +
      'picks; the URL is printed)', listenAddress)
    .option('--json', 'print one JSON object per line', false)
    .addOption(new Option('--log-level <level>', 'log level (JSON lines on stderr)')
      .choices(['debug', 'info', 'warn', 'error', 'silent']).default('warn'))
    .action(async (opts: Record<string, unknown>) => {
      await runMember(io, opts);
    });
}

async function runMember(io: CliIo, opts: Record<string, unknown>): Promise<void> {
  const name = String(opts['name']);
  const json = opts['json'] === true;
  const logger = createPinoLogger({ member: name }, opts['logLevel'] as LogLevel);
  const seeds = String(opts['seeds']).split(',').map((s) => s.trim()).filter((s) => s !== '');
  const print = (self: string, event: MembershipEvent): void => {
    io.out(json ? formatJson(self, event)
      : `${new Date().toISOString()} ${self} ${describeMembershipEvent(event)}`);
  };
  const keyFile = opts['encryptKeyFile'];
  const keyring = keyFile === undefined ? undefined : loadGossipKeyFile(String(keyFile));
  const membership = await joinCluster({
    name, bind: String(opts['bind']), seeds,
    ...(opts['advertise'] === undefined ? {} : { advertise: String(opts['advertise']) }),
    profile: opts['profile'] as SwimProfile,
    splitBrainStrategy: opts['strategy'] as SplitBrainStrategy,
    ...(opts['staticQuorumSize'] === undefined
      ? {} : { staticQuorumSize: opts['staticQuorumSize'] as number }),
    clusterName: String(opts['clusterName']),
    ...(opts['joinTimeoutMs'] === undefined
      ? {} : { joinDeadlineMs: opts['joinTimeoutMs'] as number }),
    insecure: opts['insecure'] === true,
    config: admissionOverrides(opts),
    ...(keyring === undefined ? {} : { keyring }),
    logger,
  });
  membership.on('event', (event) => print(membership.id, event));
  const address = opts['ui'] as { host: string; port: number } | undefined;
  const ui = address === undefined ? undefined
    : await serveMembershipTab(io, membership, address, json).catch(async (error: unknown) => {
      await membership.close();
      throw error;
    });
  const metricsAt = opts['metrics'] as { host: string; port: number } | undefined;
  const metrics = metricsAt === undefined ? undefined
    : await serveMetrics(io, membership, metricsAt, json).catch(async (error: unknown) => {
      await ui?.close();
      await membership.close();
      throw error;
    });
  io.out(json
    ? JSON.stringify({ kind: 'listening', time: new Date().toISOString(), self: membership.id,
      address: membership.address, seeds })
    : `${new Date().toISOString()} ${membership.id} listening on ${membership.address} `
      + `(udp+tcp), ${seeds.length === 0 ? 'bootstrapped' : `seeds ${seeds.join(',')}`}`);
  await untilSignal(membership, logger.info.bind(logger));
  await ui?.close();
  await metrics?.close();
}

/** `--admissions-*`: overrides of the admission budget on top of the profile. */
function admissionOverrides(opts: Record<string, unknown>): Partial<SwimConfig> {
  const perSecond = opts['admissionsPerSecondMax'] as number | undefined;
  const burst = opts['admissionsBurstMax'] as number | undefined;
  return {
    ...(perSecond === undefined ? {} : { admissionsPerSecondMax: perSecond }),
    ...(burst === undefined ? {} : { admissionsBurstMax: burst }),
  };
}

/** `--metrics ADDR`: the member's counters as Prometheus text (membership/gossip-metrics.ts). */
async function serveMetrics(io: CliIo, membership: Membership,
  address: { host: string; port: number }, json: boolean): Promise<MetricsServer> {
  const server = await startMetricsServer(address.host, address.port,
    gossipMetricsRegistry(membership));
  io.out(json ? JSON.stringify({ kind: 'metrics', url: server.url })
    : `${new Date().toISOString()} ${membership.id} metrics ${server.url}`);
  return server;
}

/** `--ui ADDR`: the membership tab on its own small server (src/dashboard/gossip-feed.ts). */
async function serveMembershipTab(io: CliIo, membership: Membership,
  address: { host: string; port: number }, json: boolean): Promise<{ close(): Promise<void> }> {
  const feed = new GossipFeed(membership, describeMembershipEvent);
  const server = await startPageServer(address.host, address.port, (ws) => feed.addPage(ws))
    .catch((error: unknown) => {
      feed.close();
      throw error;
    });
  io.out(json ? JSON.stringify({ kind: 'ui', url: server.url })
    : `${new Date().toISOString()} ${membership.id} dashboard ${server.url}`);
  return { close: async () => {
    feed.close();
    await server.close();
  } };
}

/** `--ui HOST:PORT`, checked before the member joins (a bad one exits 2 naming the flag). */
function listenAddress(text: string): { host: string; port: number } {
  const parsed = parseListenAddress(text);
  if ('error' in parsed) throw new InvalidArgumentError(parsed.error);
  return parsed;
}

/** Leaves gracefully on the first SIGTERM or SIGINT; a second one closes at once. */
function untilSignal(
  membership: Membership, log: (fields: Record<string, unknown>, message: string) => void,
): Promise<void> {
  return new Promise<void>((resolve) => {
    let signals = 0;
    const onSignal = (signal: NodeJS.Signals): void => {
      signals++;
      log({ signal }, signals === 1 ? 'leaving' : 'closing');
      const done = signals === 1 ? membership.leave() : membership.close();
      done.then(() => {
        process.off('SIGTERM', onSignal);
        process.off('SIGINT', onSignal);
        resolve();
      }, resolve);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

/** One JSON object: the event as the library emits it, plus the wall time and this member. */
function formatJson(self: string, event: MembershipEvent): string {
  return JSON.stringify({ time: new Date().toISOString(), self, ...event });
}

/** One human line about `event` (without the time and member prefix). */
export function describeMembershipEvent(event: MembershipEvent): string {
  switch (event.kind) {
    case 'joined':
      return `joined ${event.member} at ${event.address} (age ${event.age}, `
        + `incarnation ${event.incarnation})`;
    case 'suspect':
      return `suspect ${event.member} (incarnation ${event.incarnation}, by ${event.by})`;
    case 'alive':
      return `alive ${event.member} (refuted, incarnation ${event.incarnation})`;
    case 'dead': {
      const evidence = event.confirmations.length === 0
        ? '' : `; accusers ${event.confirmations.join(',')}`;
      return `dead ${event.member} (incarnation ${event.incarnation}, declared by `
        + `${event.declaredBy}${evidence})`;
    }
    case 'left':
      return `left ${event.member} (incarnation ${event.incarnation})`;
    case 'refuted':
      return `refuted ${event.accusation} by ${event.by} (incarnation now ${event.incarnation})`;
    case 'rejoined':
      return `rejoined via ${event.via} as a younger member (age ${event.age})`;
    case 'join-failed':
      return `join-failed: no answer from ${event.seeds.map(seedText).join(',')}; retrying`;
    case 'leader-changed':
      return `leader-changed ${leaderText(event.leader)} (was ${leaderText(event.previous)}): `
        + event.reason;
    default:
      return assertNever(event, 'membership event');
  }
}

/** `conclave keygen`: prints a fresh gossip key (32 random bytes, base64). */
export function keygenCommand(io: CliIo): Command {
  return new Command('keygen')
    .description('print a fresh gossip encryption key (AES-256, base64) for --encrypt-key-file')
    .option('--json', 'print {"key": "..."}', false)
    .action((opts: Record<string, unknown>) => {
      const key = generateGossipKey();
      io.out(opts['json'] === true ? JSON.stringify({ key }) : key);
    });
}

function leaderText(leader: SwimLeader | undefined): string {
  return leader === undefined ? 'none' : `${leader.id} generation ${leader.generation}`;
}

function seedText(id: string): string {
  return id.startsWith('seed:') ? id.slice('seed:'.length) : id;
}
