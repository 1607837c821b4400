/**
 * Total validation of untrusted SWIM messages (what a UDP or TCP adapter decoded from the
 * wire): it never throws, and on success returns a value holding only the known fields. A
 * plain object that holds nothing else is returned as it is (no copy); anything else (extra
 * fields, another prototype) is copied field by field, so nothing a peer sent beyond the schema
 * reaches the member. Copying every update of every message was about a tenth of a
 * 1,000-member simulation, and the field names of error messages are built only on failure.
 *
 * Extending it (signatures, keyring ids, rate limits on hostile input): add the field to the
 * parse function of its kind and to `KNOWN_*` counts below; `plainWithOnly` keeps the
 * no-copy path honest.
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
    case 'ping-req': {
      const seq = uint(record['seq'], 'seq');
      const target = id(record['target'], 'target');
      const list = updates(record['updates'], SWIM_UPDATES_MAX, 'updates');
      if (plainWithOnly(record, 4) && list === record['updates']) return value as SwimMessage;
      return { kind: kind as 'ping' | 'ping-req', seq, target, updates: list };
    }
    case 'ack':
    case 'nack': {
      const seq = uint(record['seq'], 'seq');
      const list = updates(record['updates'], SWIM_UPDATES_MAX, 'updates');
      if (plainWithOnly(record, 3) && list === record['updates']) return value as SwimMessage;
      return { kind: kind as 'ack' | 'nack', seq, updates: list };
    }
    case 'gossip': {
      const list = updates(record['updates'], SWIM_UPDATES_MAX, 'updates');
      if (plainWithOnly(record, 2) && list === record['updates']) return value as SwimMessage;
      return { kind: 'gossip', updates: list };
    }
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
    case 'push-pull': {
      const message = {
        kind: 'push-pull' as const,
        reply: bool(record['reply'], 'reply'),
        acting: bool(record['acting'], 'acting'),
        claim: claim(record['claim']),
        members: updates(record['members'], SWIM_MEMBERS_MAX, 'members'),
      };
      const nonce = record['nonce'];
      return nonce === undefined ? message : { ...message, nonce: uint(nonce, 'nonce') };
    }
    default:
      throw new Invalid(`unknown kind: ${describe(kind)}`);
  }
}

/** The array itself when every entry came back as it was; otherwise a copy. */
function updates(value: unknown, max: number, field: string): readonly GossipUpdate[] {
  if (!Array.isArray(value)) throw new Invalid(`${field} must be an array`);
  if (value.length > max) throw new Invalid(`${field} has ${value.length} entries (max ${max})`);
  let copy: GossipUpdate[] | undefined;
  for (let i = 0; i < value.length; i++) {
    const entry: unknown = value[i];
    const checked = update(entry, field, i);
    if (copy === undefined && checked !== entry) copy = (value as GossipUpdate[]).slice(0, i);
    copy?.push(checked);
  }
  return copy ?? (value as GossipUpdate[]);
}

function ids(value: unknown, max: number, field: string): readonly NodeId[] {
  if (!Array.isArray(value)) throw new Invalid(`${field} must be an array`);
  if (value.length > max) throw new Invalid(`${field} has ${value.length} entries (max ${max})`);
  const out: NodeId[] = [];
  for (let i = 0; i < value.length; i++) out.push(id(value[i], `${field}[${i}]`));
  return out;
}

/** Checks one update; returns `value` itself when it is a plain object with nothing else. */
function update(value: unknown, list: string, index: number): GossipUpdate {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Invalid(`${list}[${index}] must be an object`);
  }
  const record = value as Record<string, unknown>;
  const state = record['state'];
  if (!MEMBER_STATES.includes(state as MemberState)) {
    throw new Invalid(`${list}[${index}].state must be one of ${MEMBER_STATES.join(', ')}`);
  }
  const member = updateId(record['member'], list, index, 'member');
  const incarnation = updateUint(record['incarnation'], list, index, 'incarnation');
  const age = updateUint(record['age'], list, index, 'age');
  let known = 4;
  const address = record['address'];
  if (address !== undefined) {
    known++;
    if (typeof address !== 'string' || address.length > SWIM_ADDRESS_LENGTH_MAX) {
      text(address, SWIM_ADDRESS_LENGTH_MAX, `${list}[${index}].address`);
    }
  }
  const generation = record['generation'];
  if (generation !== undefined) {
    known++;
    updateUint(generation, list, index, 'generation');
  }
  const by = record['by'];
  if (by !== undefined) {
    known++;
    updateId(by, list, index, 'by');
  }
  const readmit = record['readmit'];
  if (readmit !== undefined) {
    known++;
    bool(readmit, `${list}[${index}].readmit`);
  }
  if (plainWithOnly(record, known)) return value as GossipUpdate;
  const out: {
    member: NodeId; state: MemberState; incarnation: Incarnation; age: MemberAge;
    address?: string; generation?: Generation; by?: NodeId; readmit?: boolean;
  } = {
    member, state: state as MemberState, incarnation: incarnation as Incarnation,
    age: age as MemberAge,
  };
  if (address !== undefined) out.address = address as string;
  if (generation !== undefined) out.generation = generation as Generation;
  if (by !== undefined) out.by = by as NodeId;
  if (readmit !== undefined) out.readmit = readmit as boolean;
  return out;
}

function updateUint(value: unknown, list: string, index: number, name: string): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  return uint(value, `${list}[${index}].${name}`);
}

function updateId(value: unknown, list: string, index: number, name: string): NodeId {
  if (typeof value === 'string' && value.length > 0 && value.length <= SWIM_ID_LENGTH_MAX) {
    return value as NodeId;
  }
  return id(value, `${list}[${index}].${name}`);
}

/**
 * Whether `record` is a plain object (the prototype every decoder gives) whose enumerable
 * keys are exactly the `known` ones already read: then it holds nothing beyond the schema and
 * needs no copy. `for…in` counts without allocating; an inherited enumerable key only makes
 * the count larger, which falls back to the copy.
 */
function plainWithOnly(record: Record<string, unknown>, known: number): boolean {
  if (Object.getPrototypeOf(record) !== Object.prototype) return false;
  let keys = 0;
  for (const key in record) {
    if (++keys > known || record[key] === undefined) return false;
  }
  return keys === known;
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
