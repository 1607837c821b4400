/**
 * Whose a data dir is: the identity a member writes into its data dir when it first starts
 * (`member.id`), and checks on every later start, so that a member never serves another
 * cluster's data nor votes with another member's votes.
 *
 * The cluster id is derived, the same on every member without talking: the first 64 bits of
 * SHA-256 over the cluster name, the initial cluster token and the sorted member names (etcd
 * derives its cluster id from the initial configuration and `--initial-cluster-token` the same
 * way). Names, not addresses: a member that moves keeps its data. Two clusters get different
 * ids when their tokens differ; with the same token (or none) and the same names they collide,
 * which is why `conclave dev` draws a random token per new cluster.
 *
 * The file is one line of JSON, checksummed (CRC-32C of the JSON without the checksum field):
 * `{"format":1,"clusterId":"4f1c…","member":"n1","clusterName":"conclave","members":[…],
 * "checksum":"1a2b3c4d"}`. Readable by an operator; a damaged file is refused, never guessed.
 */
import { createHash } from 'node:crypto';
import { crc32c } from '../core/checksum.js';
import { nodeId, type NodeId } from '../core/ids.js';

export const IDENTITY_FILE = 'member.id';
export const IDENTITY_TEMP_FILE = 'member.id.tmp';
export const IDENTITY_FORMAT = 1;
/** Longest identity file read. Unit: bytes. Far above a real one (members × name length). */
export const IDENTITY_BYTES_MAX = 64 * 1024;

export interface MemberIdentity {
  readonly format: number;
  /** 16 lowercase hex digits. */
  readonly clusterId: string;
  /** This member's name (its Raft id). */
  readonly member: NodeId;
  readonly clusterName: string;
  /** The members the cluster id was derived from, sorted. */
  readonly members: readonly NodeId[];
}

export interface ClusterIdInputs {
  readonly clusterName: string;
  /** `--initial-cluster-token`; empty when none was given. */
  readonly token: string;
  readonly members: readonly NodeId[];
}

export function deriveClusterId(inputs: ClusterIdInputs): string {
  const hash = createHash('sha256');
  // Length-prefixed fields: no two different inputs hash the same bytes.
  const fields = ['conclave-cluster-id/1', inputs.clusterName, inputs.token,
    ...[...inputs.members].sort()];
  for (const field of fields) hash.update(`${Buffer.byteLength(field)}:${field};`);
  return hash.digest('hex').slice(0, 16);
}

/** The identity a member with these settings has (or writes, when its data dir is new). */
export function expectedIdentity(member: NodeId, inputs: ClusterIdInputs): MemberIdentity {
  return {
    format: IDENTITY_FORMAT, clusterId: deriveClusterId(inputs), member,
    clusterName: inputs.clusterName, members: [...inputs.members].sort(),
  };
}

export function encodeIdentity(identity: MemberIdentity): Uint8Array {
  const body = bodyJson(identity);
  const checksum = crc32c(new TextEncoder().encode(body)).toString(16).padStart(8, '0');
  return new TextEncoder().encode(`${body.slice(0, -1)},"checksum":"${checksum}"}\n`);
}

/** The identity in `bytes`, or why they are not one (damaged, or a format we do not read). */
export function decodeIdentity(bytes: Uint8Array): MemberIdentity | string {
  if (bytes.length > IDENTITY_BYTES_MAX) return `${bytes.length} bytes, more than any identity`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return 'not a JSON identity (damaged?)';
  }
  if (typeof parsed !== 'object' || parsed === null) return 'not a JSON object';
  const o = parsed as Record<string, unknown>;
  if (o['format'] !== IDENTITY_FORMAT) {
    return `format ${JSON.stringify(o['format'])}; this build reads format ${IDENTITY_FORMAT}`;
  }
  const members = o['members'];
  if (typeof o['clusterId'] !== 'string' || !/^[0-9a-f]{16}$/.test(o['clusterId']) ||
    typeof o['member'] !== 'string' || o['member'] === '' ||
    typeof o['clusterName'] !== 'string' || !Array.isArray(members) ||
    !members.every((m) => typeof m === 'string') || typeof o['checksum'] !== 'string') {
    return 'fields missing or of the wrong type';
  }
  const identity: MemberIdentity = {
    format: IDENTITY_FORMAT, clusterId: o['clusterId'], member: nodeId(o['member']),
    clusterName: o['clusterName'], members: (members as string[]).map(nodeId),
  };
  const expected = crc32c(new TextEncoder().encode(bodyJson(identity)));
  if (o['checksum'] !== expected.toString(16).padStart(8, '0')) return 'checksum mismatch';
  return identity;
}

/**
 * Why a member set up as `expected` must not use a data dir holding `stored`, as one line
 * naming both (undefined: it is this member's own). The cluster is compared first: another
 * cluster's data is wrong whatever member wrote it.
 */
export function identityMismatch(stored: MemberIdentity,
  expected: MemberIdentity): string | undefined {
  if (stored.clusterId !== expected.clusterId) {
    return `it belongs to member ${stored.member} of cluster ${stored.clusterId} ` +
      `(${describe(stored)}), but this member is ${expected.member} of cluster ` +
      `${expected.clusterId} (${describe(expected)}): another cluster's data (or were ` +
      '--cluster-name, --initial-cluster-token or the --cluster names changed?)';
  }
  if (stored.member !== expected.member) {
    return `it belongs to member ${stored.member} of cluster ${stored.clusterId}, not to ` +
      `${expected.member}: a member must never start on another member's data (it would ` +
      'vote with that member\'s votes)';
  }
  return undefined;
}

function describe(identity: MemberIdentity): string {
  return `name ${JSON.stringify(identity.clusterName)}, members ${identity.members.join(',')}`;
}

/** The JSON the checksum covers: every field but the checksum, in a fixed order. */
function bodyJson(identity: MemberIdentity): string {
  return JSON.stringify({
    format: identity.format, clusterId: identity.clusterId, member: identity.member,
    clusterName: identity.clusterName, members: identity.members,
  });
}
