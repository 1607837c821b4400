/**
 * Peer addresses learned from the log: `member add NAME --peer-addr ...` records the address
 * in the config entry that adds NAME (and snapshots keep it in their membership), so every
 * member, whether it appended that entry, replayed it at a restart or installed a snapshot
 * past it, tells its transport where NAME is, whatever its own `--cluster` says.
 *
 * Rules: an address recorded in the membership in force wins over the `--cluster` flag (a
 * flag on an old member's command line may predate the member, or its replacement at a new
 * address); it is applied when the recorded address first appears or changes, so an address
 * set by hand afterwards (`POST /v1/members/peer-address`) holds until the log records another
 * one for that member. A member with no recorded address (bootstrapped from the flags, or
 * added before addresses were recorded) keeps its flag's address. Every address was validated
 * as untrusted text by the Raft codec and the snapshot decoder; it is parsed once more here.
 */
import { parsePeerAddress, samePeerAddress, type PeerAddress } from '../adapters/peer-address.js';
import type { NodeId } from '../core/ids.js';
import type { Membership, RaftMessage } from '../core/raft/index.js';
import type { Logger } from '../ports/logger.js';
import type { Transport } from '../ports/transport.js';

/** The transport's address book. */
export interface PeerAddressBook {
  peerAddress(id: NodeId): PeerAddress | undefined;
  setPeerAddress(id: NodeId, address: PeerAddress): void;
}

export class LoggedPeerAddresses {
  /** The membership synced last (memberships are replaced, never changed in place). */
  private synced: Membership | undefined;
  /** The address the log recorded for each member when last synced. */
  private readonly recorded = new Map<NodeId, string>();

  constructor(private readonly selfId: NodeId, private readonly book: PeerAddressBook,
    private readonly logger: Logger) {}

  /** Tells the book every recorded address that is new or changed since the last sync. */
  sync(membership: Membership): void {
    if (membership === this.synced) return;
    this.synced = membership;
    for (const { id, addr } of membership.peerAddrs ?? []) {
      if (id === this.selfId || this.recorded.get(id) === addr) continue;
      this.recorded.set(id, addr);
      const address = parsePeerAddress(addr);
      if ('error' in address) {
        this.logger.warn({ peer: id, reason: address.error }, 'recorded peer address ignored');
        continue;
      }
      if (samePeerAddress(this.book.peerAddress(id), address)) continue;
      this.book.setPeerAddress(id, address);
      this.logger.info({ peer: id, peerAddr: addr }, 'peer address learned from the log');
    }
  }
}

/**
 * `inner`, whose sends first sync the addresses of the membership in force: a leader that
 * just appended the entry adding a member sends to it in the same turn, and any member that
 * leads later finds the addresses of its log or snapshot in place. One identity comparison per
 * send when nothing changed. `membershipOf` answers undefined until the Raft node exists.
 */
export function learningPeerAddresses(inner: Transport<RaftMessage>,
  addresses: LoggedPeerAddresses,
  membershipOf: () => Membership | undefined): Transport<RaftMessage> {
  return {
    localId: inner.localId,
    send: (to, message) => {
      const membership = membershipOf();
      if (membership !== undefined) addresses.sync(membership);
      inner.send(to, message);
    },
    sendDatagram: (to, message) => {
      const membership = membershipOf();
      if (membership !== undefined) addresses.sync(membership);
      inner.sendDatagram(to, message);
    },
    setHandler: (handler) => inner.setHandler(handler),
    close: () => inner.close(),
  };
}
