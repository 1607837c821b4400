/**
 * Embedding: `startNode()` runs a Raft node with YOUR state machine inside your own process,
 * over real TCP peer links and a write-ahead log in `dataDir`. Conclave's own server is this
 * plus the key-value store and the HTTP API.
 *
 * @example
 * ```ts
 * import { startNode, nodeId } from 'conclave';
 *
 * let counter = 0;
 * const node = await startNode({
 *   id: nodeId('n1'),
 *   dataDir: '/var/lib/myapp/raft',
 *   listen: '127.0.0.1:7001',
 *   peers: { n1: '127.0.0.1:7001', n2: '127.0.0.1:7002', n3: '127.0.0.1:7003' },
 *   stateMachine: { apply: (entry) => (counter += entry.data[0] ?? 0) },
 * });
 * const outcome = await node.propose(new Uint8Array([5]));   // { kind: 'applied', result: 5, ... }
 * await node.stop();
 * ```
 */
import { RAFT_MESSAGE_VALIDATOR } from '../adapters/message-validators.js';
import { parsePeerAddress, type PeerAddress } from '../adapters/peer-address.js';
import { SystemClock } from '../adapters/system-clock.js';
import { SystemRandom } from '../adapters/system-random.js';
import { TcpTransport } from '../adapters/tcp-transport.js';
import { NO_PEER_AUTHENTICATION, type PeerAuthentication } from '../adapters/tcp-transport-auth.js';
import { nodeId, type NodeId } from '../core/ids.js';
import { RAFT_DEFAULTS_LAN, type RaftEvent, type RaftMessage, type RaftStatus, type RaftTuning } from '../core/raft/index.js';
import { ConfigInvalidError } from '../errors.js';
import { SILENT_LOGGER, type Logger } from '../ports/logger.js';
import { RaftRuntime, type ProposalOutcome, type StateMachine } from '../runtime/raft/raft-runtime.js';
import { openMemberData } from './member-data.js';
import { isLoopback } from './server-config.js';

export interface StartNodeOptions<R> {
  readonly id: NodeId;
  /**
   * This node's data dir (created 0700 if missing; refused when group or others can enter it,
   * unless `dataDirInsecure`). It holds the node's identity (cluster id and node id, checked
   * at every start: another cluster's or another node's data dir is refused) and its
   * write-ahead log, as `conclave server`'s does (docs/security.md).
   */
  readonly dataDir: string;
  /** Accept a data dir more open than 0700. Default: false. */
  readonly dataDirInsecure?: boolean;
  /**
   * Makes the cluster id unique (derived from `clusterName`, this token and the peer ids): the
   * same on every node and every start, another for every cluster. Default: ''.
   */
  readonly clusterToken?: string;
  /** host:port this node listens on for its peers. */
  readonly listen: string;
  /** Every member (this one included): id → host:port. */
  readonly peers: Readonly<Record<string, string>>;
  readonly stateMachine: StateMachine<R>;
  /** Raft timings and limits. Default: RAFT_DEFAULTS_LAN (heartbeat 100 ms, election 1–2 s). */
  readonly raft?: Partial<RaftTuning>;
  /** Checked in every peer handshake, so two clusters never mix. Default: 'conclave-embedded'. */
  readonly clusterName?: string;
  /**
   * How peers prove they belong, as `conclave server`'s peer port does (docs/security.md):
   * `{ kind: 'secret', secret }` (an HMAC challenge with a secret every node shares, at least
   * 32 bytes: `readOrCreatePeerSecret(file)` makes one), or `{ kind: 'tls', cert, key, ca }`
   * (mutual TLS, each certificate naming its node id), or `{ kind: 'none' }`. Every node of a
   * cluster must use the same kind. Default: none, which is refused for a `listen` beyond
   * loopback unless `insecure`, and logged at warn for a cluster of more than one node.
   */
  readonly authentication?: PeerAuthentication;
  /** Allow a `listen` beyond loopback without mutual TLS. Default: false. */
  readonly insecure?: boolean;
  readonly logger?: Logger;
  readonly onEvent?: (event: RaftEvent) => void;
  /**
   * Called once if the node stops on a storage failure (ENOSPC, EIO: it cannot know what
   * reached the disk). The node is dead from then on (proposals fail): stop it and exit, or
   * alert, as `conclave server` does (it exits 1).
   */
  readonly onFatal?: (error: Error) => void;
}

export interface EmbeddedNode<R> {
  readonly id: NodeId;
  status(): RaftStatus;
  /** Resolves with the outcome: applied (with your state machine's result), failed or unknown. */
  propose(data: Uint8Array): Promise<ProposalOutcome<R>>;
  stop(): Promise<void>;
}

export async function startNode<R>(options: StartNodeOptions<R>): Promise<EmbeddedNode<R>> {
  const listen = address('listen', options.listen);
  const peers = new Map<NodeId, PeerAddress>();
  for (const [id, text] of Object.entries(options.peers)) peers.set(nodeId(id), address(`peers.${id}`, text));
  if (!peers.has(options.id)) throw new ConfigInvalidError(`peers must include this node's id ${options.id}`);
  const authentication = options.authentication ?? NO_PEER_AUTHENTICATION;
  if (authentication.kind !== 'tls' && options.insecure !== true && !isLoopback(listen.host)) {
    throw new ConfigInvalidError(`listen: ${listen.host} is beyond loopback: give authentication `
      + "{ kind: 'tls', cert, key, ca } (mutual TLS, docs/security.md), or insecure: true");
  }
  const clock = new SystemClock();
  const random = new SystemRandom();
  const logger = options.logger ?? SILENT_LOGGER;
  if (authentication.kind === 'none' && peers.size > 1) {
    logger.warn({}, 'peer authentication is off: anyone who can reach the peer port can join '
      + 'this cluster and forge messages (pass authentication; docs/security.md)');
  }
  const clusterName = options.clusterName ?? 'conclave-embedded';
  // The data dir and its log first: a refused one costs no listener.
  const data = await openMemberData({ dataDir: options.dataDir, name: options.id, clusterName,
    initialClusterToken: options.clusterToken ?? '', members: [...peers.keys()],
    insecure: options.dataDirInsecure ?? false });
  const transport = await TcpTransport.listen<RaftMessage>({
    localId: options.id, listen, validate: RAFT_MESSAGE_VALIDATOR, random, logger,
    peers: new Map([...peers].filter(([id]) => id !== options.id)),
    config: { clusterName: `${clusterName}/${data.identity.clusterId}`, frameBytesMax: 4 * 1024 * 1024 },
    authentication,
  }).catch(async (error: unknown) => {
    await data.close();
    throw error;
  });
  const runtime = new RaftRuntime<R>({ ...RAFT_DEFAULTS_LAN, ...options.raft, id: options.id, voters: [...peers.keys()] }, {
    clock, timer: clock, transport, random, storage: data.wal, stateMachine: options.stateMachine,
    ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent }),
    ...(options.onFatal === undefined ? {} : { onFatal: options.onFatal }),
  });
  return {
    id: options.id,
    status: () => runtime.status(),
    propose: (data) => new Promise((resolve) => runtime.propose(data, resolve)),
    stop: async () => {
      runtime.stop();
      transport.close();
      await data.close();
    },
  };
}

function address(field: string, text: string): PeerAddress {
  const parsed = parsePeerAddress(text);
  if ('error' in parsed) throw new ConfigInvalidError(`${field}: ${parsed.error}`);
  return parsed;
}
