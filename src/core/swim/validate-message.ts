/**
 * Total validation of untrusted SWIM messages (what a UDP or TCP adapter decoded from the
 * wire): it never throws, and on success returns a fresh copy holding only the known fields,
 * so nothing a peer sent beyond the schema reaches the member.
 */
import type { Generation, Incarnation, NodeId } from '../ids.js';
import type {
  CoordinatorClaim, GossipUpdate, SwimMessage, SwimMessageKind,
} from './messages.js';
import type { MemberAge, MemberState } from './types.js';

/** Longest member id accepted. */
export const SWIM_ID_LENGTH_MAX = 255;
/** Longest advertised address accepted (host:port, DNS names included). */
export const SWIM_ADDRESS_LENGTH_MAX = 255;
/** Most updates accepted on one datagram (far above any sane `piggybackMax`). */
export const SWIM_UPDATES_MAX = 256;
/** Most member records accepted in one full-state message. */
export const SWIM_MEMBERS_MAX = 100_000;

export type SwimMessageValidation =
  | { readonly ok: true; readonly message: SwimMessage }
  | { readonly ok: false; readonly problem: string };

const MEMBER_STATES: readonly MemberState[] = ['alive', 'suspect', 'dead', 'left'];

/** Thrown only inside this module, to unwind a failed check; never escapes. */
class Invalid {
  constructor(readonly problem: string) {}
}

/** Checks `value` against the `SwimMessage` schema and bounds. Never throws. */
export function validateSwimMessage(value: unknown): SwimMessageValidation {
  try {
    return { ok: true, message: parseMessage(value) };
  } catch (error) {
    if (error instanceof Invalid) return { ok: false, problem: error.problem };
    // A hostile object (a throwing getter or proxy) must not crash the node either.
    return { ok: false, problem: 'message could not be read' };
  }
}

function parseMessage(value: unknown): SwimMessage {
  const record = asRecord(value, 'message');
  const kind = record['kind'];
  switch (kind as SwimMessageKind) {
    case 'ping':
    case 'ping-req':
      return {
        kind: kind as 'ping' | 'ping-req',
        seq: uint(record['seq'], 'seq'),
        target: id(record['target'], 'target'),
        updates: updates(record['updates'], SWIM_UPDATES_MAX, 'updates'),
      };
    case 'ack':
    case 'nack':
      return {
        kind: kind as 'ack' | 'nack',
        seq: uint(record['seq'], 'seq'),
        updates: updates(record['updates'], SWIM_UPDATES_MAX, 'updates'),
      };
    case 'gossip':
      return { kind: 'gossip', updates: updates(record['updates'], SWIM_UPDATES_MAX, 'updates') };
    case 'join':
      return { kind: 'join', address: text(record['address'], SWIM_ADDRESS_LENGTH_MAX, 'address') };
    case 'join-ack':
      return {
        kind: 'join-ack',
        age: uint(record['age'], 'age') as MemberAge,
        incarnation: uint(record['incarnation'], 'incarnation') as Incarnation,
        claim: claim(record['claim']),
        members: updates(record['members'], SWIM_MEMBERS_MAX, 'members'),
        stable: ids(record['stable'], SWIM_MEMBERS_MAX, 'stable'),
      };
    case 'push-pull':
      return {
        kind: 'push-pull',
        reply: bool(record['reply'], 'reply'),
        acting: bool(record['acting'], 'acting'),
        claim: claim(record['claim']),
        members: updates(record['members'], SWIM_MEMBERS_MAX, 'members'),
      };
    default:
      throw new Invalid(`unknown kind: ${describe(kind)}`);
  }
}

function updates(value: unknown, max: number, field: string): readonly GossipUpdate[] {
  if (!Array.isArray(value)) throw new Invalid(`${field} must be an array`);
  if (value.length > max) throw new Invalid(`${field} has ${value.length} entries (max ${max})`);
  const out: GossipUpdate[] = [];
  for (let i = 0; i < value.length; i++) out.push(update(value[i], `${field}[${i}]`));
  return out;
}

function ids(value: unknown, max: number, field: string): readonly NodeId[] {
  if (!Array.isArray(value)) throw new Invalid(`${field} must be an array`);
  if (value.length > max) throw new Invalid(`${field} has ${value.length} entries (max ${max})`);
  const out: NodeId[] = [];
  for (let i = 0; i < value.length; i++) out.push(id(value[i], `${field}[${i}]`));
  return out;
}

function update(value: unknown, field: string): GossipUpdate {
  const record = asRecord(value, field);
  const state = record['state'];
  if (!MEMBER_STATES.includes(state as MemberState)) {
    throw new Invalid(`${field}.state must be one of ${MEMBER_STATES.join(', ')}`);
  }
  const out: {
    member: NodeId; state: MemberState; incarnation: Incarnation; age: MemberAge;
    address?: string; generation?: Generation; by?: NodeId; readmit?: boolean;
  } = {
    member: id(record['member'], `${field}.member`),
    state: state as MemberState,
    incarnation: uint(record['incarnation'], `${field}.incarnation`) as Incarnation,
    age: uint(record['age'], `${field}.age`) as MemberAge,
  };
  if (record['address'] !== undefined) {
    out.address = text(record['address'], SWIM_ADDRESS_LENGTH_MAX, `${field}.address`);
  }
  if (record['generation'] !== undefined) {
    out.generation = uint(record['generation'], `${field}.generation`) as Generation;
  }
  if (record['by'] !== undefined) out.by = id(record['by'], `${field}.by`);
  if (record['readmit'] !== undefined) out.readmit = bool(record['readmit'], `${field}.readmit`);
  return out;
}

function claim(value: unknown): CoordinatorClaim {
  const record = asRecord(value, 'claim');
  const generation = uint(record['generation'], 'claim.generation') as Generation;
  if (record['by'] === undefined) return { generation };
  return { generation, by: id(record['by'], 'claim.by') };
}

function asRecord(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Invalid(`${field} must be an object`);
  }
  return value as Record<string, unknown>;
}

function uint(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new Invalid(`${field} must be a non-negative safe integer, got ${describe(value)}`);
  }
  return value;
}

function bool(value: unknown, field: string): boolean {
  if (typeof value !== 'boolean') throw new Invalid(`${field} must be a boolean`);
  return value;
}

function text(value: unknown, max: number, field: string): string {
  if (typeof value !== 'string') throw new Invalid(`${field} must be a string`);
  if (value.length > max) throw new Invalid(`${field} is ${value.length} chars long (max ${max})`);
  return value;
}

function id(value: unknown, field: string): NodeId {
  const s = text(value, SWIM_ID_LENGTH_MAX, field);
  if (s.length === 0) throw new Invalid(`${field} must not be empty`);
  return s as NodeId;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 40));
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return typeof value;
}
