/**
 * The options of `joinCluster`, their defaults, and the check that turns them into what the
 * member runs with. Every broken rule is reported at once (one `ConfigInvalidError` listing
 * them all), including the SWIM config's own rules.
 */
import type { GossipKeyring } from '../adapters/gossip-keyring.js';
import { LOOPBACK_HOST, parsePeerAddress, type PeerAddress } from '../adapters/peer-address.js';
import type { ConfigProblem } from '../core/config.js';
import { nodeId, type NodeId } from '../core/ids.js';
import {
  SWIM_DEFAULTS_LAN, SWIM_DEFAULTS_LOCAL, SWIM_ID_LENGTH_MAX,
  validateSwimConfig, type SplitBrainStrategy, type SwimConfig,
} from '../core/swim/index.js';
import { SILENT_LOGGER, type Logger } from '../ports/logger.js';

/** The named SWIM profiles: `lan` (memberlist's LAN values) and `local` (loopback, tests). */
export type SwimProfile = 'lan' | 'local';

export const SWIM_PROFILES: readonly SwimProfile[] = Object.freeze(['lan', 'local']);

/** The port gossip listens on when `bind` is not given (memberlist's and Serf's port). */
export const MEMBERSHIP_PORT_DEFAULT = 7946;

/** Prefix of the ids under which seeds known only by address are reached (never a name). */
export const SEED_ID_PREFIX = 'seed:';

export interface JoinClusterOptions {
  /**
   * This member's name: unique in the cluster and the id everyone knows it by. A process that
   * restarts under the same name is admitted again as a new, younger member.
   * 1..255 characters, not starting with `seed:`.
   */
  readonly name: string;
  /**
   * Where to listen, `host:port`: UDP (probes, gossip) and TCP (join, push-pull) on the same
   * port. Port 0 lets the OS pick one (read it back from `membership.address`).
   * Default: `127.0.0.1:7946` (loopback: nothing outside this machine can reach it).
   */
  readonly bind?: string;
  /**
   * The address other members reach this one at, gossiped to everyone. Default: the bound
   * address. Required when `bind` is a wildcard host (`0.0.0.0`, `::`).
   */
  readonly advertise?: string;
  /**
   * Addresses (`host:port`) of members to join through, tried one at a time, each for
   * `config.joinTimeoutMs`, round after round. Empty, or only this member's own address:
   * bootstrap a new cluster, with this member as its first and oldest member.
   */
  readonly seeds: readonly string[];
  /** The base timing profile. Default: `lan`. `local` is about five times faster (loopback). */
  readonly profile?: SwimProfile;
  /** Overrides of single SWIM fields on top of the profile (see `src/core/swim/config.ts`). */
  readonly config?: Partial<SwimConfig>;
  /** Shorthand for `config.splitBrainStrategy`. Default: `keep-majority`. */
  readonly splitBrainStrategy?: SplitBrainStrategy;
  /** Shorthand for `config.staticQuorumSize` (needed with `static-quorum`). */
  readonly staticQuorumSize?: number;
  /**
   * Checked in every TCP handshake and every datagram: members of another cluster are ignored.
   * Default: `conclave`.
   */
  readonly clusterName?: string;
  /**
   * How long `joinCluster` waits for a seed to admit this member before it gives up (rejects
   * with CONCLAVE_UNAVAILABLE and closes the sockets). `Infinity` waits for ever.
   * Unit: ms. Default: two rounds over the seeds, 2 × seeds × `config.joinTimeoutMs` (LAN:
   * 20 s with one seed, enough for a seed that is restarting).
   */
  readonly joinDeadlineMs?: number;
  /**
   * The gossip keyring: every datagram and stream message is sealed with AES-256-GCM under its
   * first key, and accepted under any of its keys (docs/security.md, "Gossip"). Every member
   * of a cluster needs a key in common. Build it with `new GossipKeyring([key, ...])` or
   * `loadGossipKeyFile(file)`. Default: none (plain text, anyone may speak as any member).
   */
  readonly keyring?: GossipKeyring;
  /**
   * Allow `bind` beyond loopback without a `keyring`: anyone who can send to the port can then
   * lie about membership. Default: false.
   */
  readonly insecure?: boolean;
  /** Lifecycle, join progress and dropped messages are logged here. Default: silent. */
  readonly logger?: Logger;
}

/** The options with every default applied and every text parsed. */
export interface ResolvedJoinOptions {
  readonly id: NodeId;
  /** Port 0 means "let the OS pick". */
  readonly bind: PeerAddress;
  readonly advertise: PeerAddress | undefined;
  readonly seeds: readonly PeerAddress[];
  readonly config: SwimConfig;
  readonly clusterName: string;
  readonly joinDeadlineMs: number;
  readonly keyring: GossipKeyring | undefined;
  readonly logger: Logger;
}

/** Hosts that mean "every interface": fine to bind, useless as an address to reach. */
const WILDCARD_HOSTS: ReadonlySet<string> = new Set(['0.0.0.0', '::']);

/** The resolved options, or every rule the options break. */
export function resolveJoinOptions(
  options: JoinClusterOptions,
): { readonly ok: true; readonly resolved: ResolvedJoinOptions }
  | { readonly ok: false; readonly problems: readonly ConfigProblem[] } {
  const problems: ConfigProblem[] = [];
  checkName(problems, options.name);
  const bind = parseBind(problems, options.bind ?? `${LOOPBACK_HOST}:${MEMBERSHIP_PORT_DEFAULT}`);
  const advertise = options.advertise === undefined
    ? undefined : parseAddress(problems, 'advertise', options.advertise);
  checkReach(problems, options, bind, advertise);
  const seeds = parseSeeds(problems, options.seeds);
  const config = swimConfigOf(problems, options);
  const clusterName = options.clusterName ?? 'conclave';
  if (typeof clusterName !== 'string' || clusterName.length === 0 || clusterName.length > 255) {
    problems.push({ field: 'clusterName', value: clusterName, rule: 'must be 1..255 characters' });
  }
  const joinDeadlineMs = options.joinDeadlineMs
    ?? 2 * Math.max(1, seeds.length) * config.joinTimeoutMs;
  if (typeof joinDeadlineMs !== 'number' || !(joinDeadlineMs > 0)) {
    problems.push({
      field: 'joinDeadlineMs', value: joinDeadlineMs, rule: 'must be a number > 0 (or Infinity)',
    });
  }
  if (problems.length > 0 || bind === undefined) return { ok: false, problems };
  return {
    ok: true,
    resolved: {
      id: nodeId(options.name), bind, advertise, seeds, config, clusterName, joinDeadlineMs,
      keyring: options.keyring, logger: options.logger ?? SILENT_LOGGER,
    },
  };
}

/** The profile, then `config`, then the strategy shorthands; validated as a whole. */
function swimConfigOf(problems: ConfigProblem[], options: JoinClusterOptions): SwimConfig {
  const profile = options.profile ?? 'lan';
  if (!SWIM_PROFILES.includes(profile)) {
    problems.push({ field: 'profile', value: profile, rule: `must be one of ${SWIM_PROFILES}` });
  }
  const base = profile === 'local' ? SWIM_DEFAULTS_LOCAL : SWIM_DEFAULTS_LAN;
  const config: SwimConfig = Object.freeze({
    ...base,
    ...options.config,
    ...(options.splitBrainStrategy === undefined
      ? {} : { splitBrainStrategy: options.splitBrainStrategy }),
    ...(options.staticQuorumSize === undefined
      ? {} : { staticQuorumSize: options.staticQuorumSize }),
  });
  // Includes the strategy and static-quorum rules (`staticQuorumSize` ≥ 1 with static-quorum).
  for (const problem of validateSwimConfig(config)) {
    problems.push({ ...problem, field: `config.${problem.field}` });
  }
  return config;
}

function checkName(problems: ConfigProblem[], name: unknown): void {
  if (typeof name !== 'string' || name.length === 0 || name.length > SWIM_ID_LENGTH_MAX) {
    problems.push({
      field: 'name', value: name, rule: `must be 1..${SWIM_ID_LENGTH_MAX} characters`,
    });
  } else if (name.startsWith(SEED_ID_PREFIX)) {
    problems.push({ field: 'name', value: name, rule: `must not start with "${SEED_ID_PREFIX}"` });
  } else if (/\s/.test(name)) {
    problems.push({ field: 'name', value: name, rule: 'must not contain white space' });
  }
}

/** `host:port` where port 0 is allowed (the OS picks), unlike an address to reach. */
function parseBind(problems: ConfigProblem[], text: string): PeerAddress | undefined {
  const anyPort = /^(.*):0$/.exec(String(text));
  const parsed = parsePeerAddress(anyPort === null ? String(text) : `${anyPort[1]}:1`);
  if ('error' in parsed) {
    problems.push({ field: 'bind', value: text, rule: parsed.error });
    return undefined;
  }
  return anyPort === null ? parsed : { host: parsed.host, port: 0 };
}

function parseAddress(
  problems: ConfigProblem[], field: string, text: string,
): PeerAddress | undefined {
  const parsed = parsePeerAddress(String(text));
  if ('error' in parsed) {
    problems.push({ field, value: text, rule: parsed.error });
    return undefined;
  }
  return parsed;
}

function parseSeeds(problems: ConfigProblem[], seeds: unknown): PeerAddress[] {
  if (!Array.isArray(seeds)) {
    problems.push({
      field: 'seeds', value: seeds, rule: 'must be a list of host:port ([] bootstraps a cluster)',
    });
    return [];
  }
  const out: PeerAddress[] = [];
  seeds.forEach((text: unknown, i) => {
    const parsed = parseAddress(problems, `seeds[${i}]`, String(text));
    if (parsed !== undefined) out.push(parsed);
  });
  return out;
}

/** The advertised address must be reachable; beyond loopback needs a keyring or `insecure`. */
function checkReach(
  problems: ConfigProblem[], options: JoinClusterOptions, bind: PeerAddress | undefined,
  advertise: PeerAddress | undefined,
): void {
  if (bind !== undefined && WILDCARD_HOSTS.has(bind.host) && options.advertise === undefined) {
    problems.push({
      field: 'bind,advertise', value: options.bind,
      rule: 'a wildcard bind needs advertise (the address other members reach this one at)',
    });
  }
  if (advertise !== undefined && WILDCARD_HOSTS.has(advertise.host)) {
    problems.push({ field: 'advertise', value: options.advertise, rule: 'must not be a wildcard' });
  }
  if (options.insecure !== true && options.keyring === undefined && bind !== undefined
    && !isLoopback(bind.host)) {
    problems.push({
      field: 'bind', value: options.bind,
      rule: 'listening beyond loopback needs a keyring (--encrypt-key-file; make a key with '
        + '`conclave keygen`), or insecure: true to run unauthenticated',
    });
  }
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}
