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
import { join } from 'node:path';
import { FileStorage } from '../adapters/file-storage.js';
import { RAFT_MESSAGE_VALIDATOR } from '../adapters/message-validators.js';
import { parsePeerAddress, type PeerAddress } from '../adapters/peer-address.js';
import { SystemClock } from '../adapters/system-clock.js';
import { SystemRandom } from '../adapters/system-random.js';
import { TcpTransport } from '../adapters/tcp-transport.js';
import { nodeId, type NodeId } from '../core/ids.js';
import { RAFT_DEFAULTS_LAN, type RaftEvent, type RaftMessage, type RaftStatus, type RaftTuning } from '../core/raft/index.js';
import { ConfigInvalidError, CoordError } from '../errors.js';
import { SILENT_LOGGER, type Logger } from '../ports/logger.js';
import { RaftRuntime, type ProposalOutcome, type StateMachine } from '../runtime/raft/raft-runtime.js';
import { openWal } from '../runtime/wal/index.js';

export interface StartNodeOptions<R> {
  readonly id: NodeId;
  /** Directory of the write-ahead log (created if missing). */
  readonly dataDir: string;
  /** host:port this node listens on for its peers. */
  readonly listen: string;
  /** Every member (this one included): id → host:port. */
  readonly peers: Readonly<Record<string, string>>;
  readonly stateMachine: StateMachine<R>;
  /** Raft timings and limits. Default: RAFT_DEFAULTS_LAN (heartbeat 100 ms, election 1–2 s). */
  readonly raft?: Partial<RaftTuning>;
  /** Checked in every peer handshake, so two clusters never mix. Default: 'conclave-embedded'. */
  readonly clusterName?: string;
  readonly logger?: Logger;
  readonly onEvent?: (event: RaftEvent) => void;
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
  const clock = new SystemClock();
  const random = new SystemRandom();
  const logger = options.logger ?? SILENT_LOGGER;
  const transport = await TcpTransport.listen<RaftMessage>({
    localId: options.id, listen, validate: RAFT_MESSAGE_VALIDATOR, random, logger,
    peers: new Map([...peers].filter(([id]) => id !== options.id)),
    config: { clusterName: options.clusterName ?? 'conclave-embedded', frameBytesMax: 4 * 1024 * 1024 },
  });
  const opened = openWal(new FileStorage(join(options.dataDir, 'wal')));
  if ('error' in opened) {
    transport.close();
    throw new CoordError('CONCLAVE_STORAGE_CORRUPT', opened.error.message);
  }
  const runtime = new RaftRuntime<R>({ ...RAFT_DEFAULTS_LAN, ...options.raft, id: options.id, voters: [...peers.keys()] }, {
    clock, timer: clock, transport, random, storage: opened.wal, stateMachine: options.stateMachine,
    ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent }),
  });
  return {
    id: options.id,
    status: () => runtime.status(),
    propose: (data) => new Promise((resolve) => runtime.propose(data, resolve)),
    stop: async () => {
      runtime.stop();
      transport.close();
    },
  };
}

function address(field: string, text: string): PeerAddress {
  const parsed = parsePeerAddress(text);
  if ('error' in parsed) throw new ConfigInvalidError(`${field}: ${parsed.error}`);
  return parsed;
}
