/**
 * Keeps the transport's address book in step with gossip. SWIM addresses members by id; the
 * UDP and TCP adapters need an address for each id. Members learn each other's addresses from
 * the membership itself (every alive update and every full state carries the member's
 * advertised address), so this transport sits between the real one and the SWIM runtime and,
 * for every message that arrives:
 *  1. before the member sees it: a joiner's own `address` is taken at once (the admitter
 *     answers it within the same step), and ids the book does not know yet are filled from the
 *     updates (so a reply to a member heard of for the first time is not dropped);
 *  2. after the member has applied it: each member the message mentions gets the address of
 *     the member's record, which the member only changes on news that wins by SWIM's rules
 *     (a higher incarnation, a re-admission). A stale update never moves an address.
 * Ids the member has forgotten (after `deadRetainMs`) are swept from the book now and then.
 */
import type { NodeId } from '../core/ids.js';
import type { GossipUpdate, SwimMessage } from '../core/swim/index.js';
import { assertNever } from '../core/assert.js';
import type { Transport, TransportHandler } from '../ports/transport.js';
import { parsePeerAddress, samePeerAddress, type PeerAddress } from '../adapters/peer-address.js';
import { SEED_ID_PREFIX } from './membership-options.js';

/** A transport with a writable address book (NetTransport, or a test double). */
export interface AddressBookTransport extends Transport<SwimMessage> {
  peerAddress(id: NodeId): PeerAddress | undefined;
  setPeerAddress(id: NodeId, address: PeerAddress | undefined): void;
}

/** The advertised address the member's own record holds for `id`, if it knows `id`. */
export type MemberAddressLookup = (id: NodeId) => string | undefined;

/** Messages between two sweeps of forgotten ids. */
const SWEEP_EVERY_MESSAGES = 4096;

export class AddressSyncTransport implements Transport<SwimMessage> {
  readonly localId: NodeId;
  private lookup: MemberAddressLookup | undefined;
  /** The address text each id was last set from (saves parsing the same text again). */
  private readonly known = new Map<NodeId, string>();
  private messagesSinceSweep = 0;

  constructor(private readonly inner: AddressBookTransport) {
    this.localId = inner.localId;
  }

  /** Where the member's records are read after each message (set once the member exists). */
  attach(lookup: MemberAddressLookup): void {
    this.lookup = lookup;
  }

  /** How many ids the book holds through this sync (for status and tests). */
  get size(): number {
    return this.known.size;
  }

  send(to: NodeId, message: SwimMessage): void {
    this.inner.send(to, message);
  }

  sendDatagram(to: NodeId, message: SwimMessage): void {
    this.inner.sendDatagram(to, message);
  }

  setHandler(handler: TransportHandler<SwimMessage>): void {
    const wrapped: TransportHandler<SwimMessage> = {
      onMessage: (from, message) => {
        this.before(from, message);
        handler.onMessage(from, message);
        this.after(from, message);
      },
    };
    const onPeerReset = handler.onPeerReset?.bind(handler);
    this.inner.setHandler(onPeerReset === undefined ? wrapped : { ...wrapped, onPeerReset });
  }

  close(): void {
    this.inner.close();
  }

  private before(from: NodeId, message: SwimMessage): void {
    if (message.kind === 'join') {
      // The joiner says where it is; the admitter's join-ack goes there within this step.
      this.learn(from, message.address, true);
      return;
    }
    for (const update of updatesOf(message)) {
      if (update.address !== undefined) this.learn(update.member, update.address, false);
    }
  }

  private after(from: NodeId, message: SwimMessage): void {
    const lookup = this.lookup;
    if (lookup === undefined) return;
    this.follow(from, lookup);
    for (const update of updatesOf(message)) this.follow(update.member, lookup);
    if (++this.messagesSinceSweep >= SWEEP_EVERY_MESSAGES) this.sweep(lookup);
  }

  /** The member's record is the truth about where `id` is. */
  private follow(id: NodeId, lookup: MemberAddressLookup): void {
    const address = lookup(id);
    if (address !== undefined && address.length > 0) this.learn(id, address, true);
  }

  private learn(id: NodeId, text: string, overwrite: boolean): void {
    if (id === this.localId || id.startsWith(SEED_ID_PREFIX) || this.known.get(id) === text) {
      return;
    }
    if (!overwrite && this.inner.peerAddress(id) !== undefined) return;
    const address = parsePeerAddress(text);
    if ('error' in address) return; // the member's record keeps it; we cannot reach it
    this.known.set(id, text);
    if (!samePeerAddress(this.inner.peerAddress(id), address)) {
      this.inner.setPeerAddress(id, address);
    }
  }

  /** Drops ids the member no longer has a record of (forgotten after `deadRetainMs`). */
  private sweep(lookup: MemberAddressLookup): void {
    this.messagesSinceSweep = 0;
    for (const id of [...this.known.keys()]) {
      if (lookup(id) === undefined) {
        this.known.delete(id);
        this.inner.setPeerAddress(id, undefined);
      }
    }
  }
}

/** The membership updates a message carries (piggybacked or full state). */
function updatesOf(message: SwimMessage): readonly GossipUpdate[] {
  switch (message.kind) {
    case 'ping':
    case 'ack':
    case 'ping-req':
    case 'nack':
    case 'gossip':
      return message.updates;
    case 'join-ack':
    case 'push-pull':
      return message.members;
    case 'join':
      return [];
    default:
      return assertNever(message, 'swim message');
  }
}
