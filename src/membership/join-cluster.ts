/**
 * `joinCluster`: binds UDP and TCP on one port, starts a SWIM member on the system clock, joins
 * through the seeds (or bootstraps), and resolves once this member has been admitted.
 *
 * Seeds are known only by address. Each is put in the address book under the id
 * `seed:host:port` with "any id" (the TCP handshake does not check who answers), the join goes
 * there, and the admitter's answer arrives under its real name; once admitted, the seed
 * entries are removed. From then on addresses come from gossip (see `address-sync.ts`).
 */
import { NetTransport } from '../adapters/net-transport.js';
import { formatPeerAddress, samePeerAddress, type PeerAddress } from '../adapters/peer-address.js';
import { SWIM_MESSAGE_VALIDATOR } from '../adapters/message-validators.js';
import { SystemClock } from '../adapters/system-clock.js';
import { SystemRandom } from '../adapters/system-random.js';
import { formatConfigProblems } from '../core/config.js';
import { nodeId, type NodeId } from '../core/ids.js';
import type { SwimMessage } from '../core/swim/index.js';
import { ConfigInvalidError, CoordError } from '../errors.js';
import { SwimRuntime } from '../runtime/swim/index.js';
import { AddressSyncTransport } from './address-sync.js';
import { Membership } from './membership.js';
import {
  resolveJoinOptions, SEED_ID_PREFIX, type JoinClusterOptions, type ResolvedJoinOptions,
} from './membership-options.js';

/**
 * Joins (or bootstraps) a gossip membership and resolves once this member is admitted.
 * Rejects with CONCLAVE_CONFIG_INVALID (listing every broken rule), with CONCLAVE_UNAVAILABLE
 * when the port cannot be bound, or when no seed admitted this member within
 * `joinDeadlineMs` (the sockets are then closed).
 */
export async function joinCluster(options: JoinClusterOptions): Promise<Membership> {
  const checked = resolveJoinOptions(options);
  if (!checked.ok) throw new ConfigInvalidError(formatConfigProblems(checked.problems));
  const resolved = checked.resolved;
  const random = new SystemRandom();
  const net = await NetTransport.listen<SwimMessage>({
    localId: resolved.id,
    listen: { host: resolved.bind.host, port: resolved.bind.port },
    ...(resolved.advertise === undefined ? {} : { advertiseAddress: resolved.advertise }),
    validate: SWIM_MESSAGE_VALIDATOR,
    random,
    config: { clusterName: resolved.clusterName },
    ...(resolved.keyring === undefined ? {} : { keyring: resolved.keyring }),
    logger: resolved.logger,
  });
  if (resolved.keyring === undefined) {
    resolved.logger.info({ member: resolved.id }, 'gossip is not encrypted (no keyring)');
  } else {
    resolved.logger.info({ member: resolved.id, keys: resolved.keyring.size,
      primaryKeyId: resolved.keyring.primaryKeyId }, 'gossip encrypted with AES-256-GCM');
  }
  const advertised = resolved.advertise ?? net.address;
  const address = formatPeerAddress(advertised);
  const sync = new AddressSyncTransport(net);
  const clock = new SystemClock();
  const runtime = new SwimRuntime(
    { id: resolved.id, address, config: resolved.config },
    { clock, timer: clock, transport: sync, random, logger: resolved.logger },
  );
  sync.attach((id) => runtime.member(id)?.address);
  const membership = new Membership({
    runtime, address, config: resolved.config, logger: resolved.logger,
    closeTransport: () => net.close(), transportMetrics: () => net.metrics(),
  });
  const seedIds = seedEntries(net, resolved.seeds, [advertised, net.address]);
  const admitted = waitForAdmission(runtime, resolved, seedIds);
  runtime.join(seedIds);
  try {
    await admitted;
  } catch (error) {
    await membership.close();
    throw error;
  }
  for (const id of seedIds) net.setPeerAddress(id, undefined);
  resolved.logger.info({ member: resolved.id, address, seeds: seedIds.length },
    seedIds.length === 0 ? 'bootstrapped a new cluster' : 'admitted to the cluster');
  membership.releaseHeldEvents();
  return membership;
}

/** Book entries for the seeds, skipping this member's own addresses; returns their ids. */
function seedEntries(
  net: NetTransport<SwimMessage>, seeds: readonly PeerAddress[], own: readonly PeerAddress[],
): NodeId[] {
  const ids: NodeId[] = [];
  for (const seed of seeds) {
    if (own.some((address) => samePeerAddress(address, seed))) continue;
    const id = nodeId(`${SEED_ID_PREFIX}${formatPeerAddress(seed)}`);
    if (ids.includes(id)) continue;
    net.setPeerAddress(id, seed, { anyId: true });
    ids.push(id);
  }
  return ids;
}

/** Resolves on this member's own 'joined' event; rejects after `joinDeadlineMs`. */
function waitForAdmission(
  runtime: SwimRuntime, resolved: ResolvedJoinOptions, seedIds: readonly NodeId[],
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const unsubscribe = runtime.subscribe((event) => {
      if (event.kind !== 'joined' || event.member !== runtime.id) return;
      unsubscribe();
      clearTimeout(timer);
      resolve();
    });
    if (!Number.isFinite(resolved.joinDeadlineMs)) return;
    timer = setTimeout(() => {
      unsubscribe();
      const tried = seedIds.map((id) => id.slice(SEED_ID_PREFIX.length)).join(', ');
      reject(new CoordError('CONCLAVE_UNAVAILABLE',
        `no seed admitted ${resolved.id} within ${resolved.joinDeadlineMs} ms (tried ${tried}); `
        + 'check that a seed runs, is reachable, and uses the same cluster name'));
    }, resolved.joinDeadlineMs);
  });
}
