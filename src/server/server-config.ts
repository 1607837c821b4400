/**
 * What `conclave server` needs to run one member, checked all at once: every broken rule is
 * listed in one CONCLAVE_CONFIG_INVALID error.
 */
import type { ConfigProblem } from '../core/config.js';
import { nodeId, type NodeId } from '../core/ids.js';
import { parsePeerAddress, type PeerAddress } from '../adapters/peer-address.js';

export interface ServerConfig {
  /** This member's name, one of the cluster's. */
  readonly name: NodeId;
  /** Where the write-ahead log lives (created if missing). */
  readonly dataDir: string;
  /** Where peers reach this member. Default host: loopback. */
  readonly peerAddress: PeerAddress;
  /** Where clients reach this member (HTTP). Default host: loopback. */
  readonly clientAddress: PeerAddress;
  /** Every member's peer address, this one included. */
  readonly cluster: ReadonlyMap<NodeId, PeerAddress>;
  /** Every member's client address, when known (lets followers redirect to the leader). */
  readonly clientAddresses: ReadonlyMap<NodeId, PeerAddress>;
  /**
   * Leader heartbeat interval. Unit: ms. Default: 100 (etcd's; about the round trip between
   * members, and well under the election timeout).
   */
  readonly heartbeatMs: number;
  /**
   * Election timeout; each member draws its timeout in [this, 2 × this) as etcd does.
   * Unit: ms. Default: 1000 (etcd's: about 10 × the heartbeat).
   */
  readonly electionTimeoutMs: number;
  /** Allow listening on non-loopback addresses without TLS (there is no TLS yet). Default: false. */
  readonly insecure: boolean;
  /** Cluster name checked in every peer handshake. Default: 'conclave'. */
  readonly clusterName: string;
}

export const SERVER_DEFAULTS = Object.freeze({ heartbeatMs: 100, electionTimeoutMs: 1000, insecure: false, clusterName: 'conclave' });

/** Parses `n1=127.0.0.1:2380,n2=...` into a map; problems go to `problems`. */
export function parseMemberList(text: string, field: string, problems: ConfigProblem[]): Map<NodeId, PeerAddress> {
  const members = new Map<NodeId, PeerAddress>();
  for (const item of text.split(',').map((s) => s.trim()).filter((s) => s.length > 0)) {
    const at = item.indexOf('=');
    if (at <= 0) {
      problems.push({ field, value: item, rule: 'each member is NAME=HOST:PORT' });
      continue;
    }
    const name = item.slice(0, at);
    const address = parsePeerAddress(item.slice(at + 1));
    if ('error' in address) {
      problems.push({ field, value: item, rule: `bad address: ${address.error}` });
      continue;
    }
    if (members.has(nodeId(name))) problems.push({ field, value: name, rule: 'a member is listed twice' });
    members.set(nodeId(name), address);
  }
  if (members.size === 0 && text.trim() !== '') problems.push({ field, value: text, rule: 'no member given' });
  return members;
}

export function validateServerConfig(config: ServerConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (!config.cluster.has(config.name)) {
    problems.push({ field: 'name,cluster', value: config.name, rule: `--name must be one of the --cluster members (${[...config.cluster.keys()].join(', ')})` });
  }
  if (config.dataDir.trim() === '') problems.push({ field: 'dataDir', value: config.dataDir, rule: 'must be a directory path' });
  if (!(config.heartbeatMs >= 1)) problems.push({ field: 'heartbeatMs', value: config.heartbeatMs, rule: 'must be at least 1 ms' });
  if (!(config.electionTimeoutMs >= 2 * config.heartbeatMs)) {
    problems.push({ field: 'electionTimeoutMs', value: config.electionTimeoutMs, rule: `must be at least 2 × heartbeatMs (${2 * config.heartbeatMs}); about 10 × is usual` });
  }
  for (const [what, address] of [['peerAddress', config.peerAddress], ['clientAddress', config.clientAddress]] as const) {
    if (!config.insecure && !isLoopback(address.host)) {
      problems.push({ field: what, value: address.host, rule: 'listening beyond loopback needs --insecure (there is no TLS or auth yet)' });
    }
  }
  return problems;
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}
