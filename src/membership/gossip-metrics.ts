/**
 * A gossip member's counters as Prometheus metrics (docs/gossip.md, "Metrics"), in a prom-client
 * registry of the member's own: nothing is registered in prom-client's global registry, so two
 * members in one process (tests, an embedding application) never collide.
 *
 * The values are read from `membership.status()` when the registry is scraped; nothing is
 * counted twice and nothing here runs between scrapes. Counters are rebuilt from the member's
 * totals at each scrape (reset, then set to the total), so they only ever rise while the
 * member runs.
 */
import { Counter, Gauge, Registry } from 'prom-client';
import type { OpenFailure } from '../adapters/gossip-keyring.js';
import type { StreamSealMetrics } from '../adapters/net-transport.js';
import type { UdpTransportMetrics } from '../adapters/udp-transport.js';
import { SWIM_REJECTIONS, type SwimCounters, type SwimRejection } from '../core/swim/index.js';
import type { Membership, MembershipStatus } from './membership.js';

/** What the registry reads: a membership, or anything with its `status()`. */
export type GossipMetricsSource = Pick<Membership, 'status'>;

const REJECTION_COUNTER: Readonly<Record<SwimRejection, keyof SwimCounters>> = {
  'out-of-range': 'rejectedOutOfRange',
  'incarnation-jump': 'rejectedIncarnationJump',
  'age-jump': 'rejectedAgeJump',
  'age-decrease': 'rejectedAgeDecrease',
  'generation-jump': 'rejectedGenerationJump',
  'older-than-leader': 'rejectedOlderThanLeader',
  'admission-rate': 'rejectedAdmissionRate',
};

/** Datagrams dropped before they reached the protocol, by the label of their reason. */
const DATAGRAM_DROP_COUNTER: Readonly<Record<string, keyof UdpTransportMetrics>> = {
  'too-large': 'receivedTooLarge',
  'malformed': 'decodeErrors',
  'other-cluster': 'droppedOtherCluster',
  'other-version': 'droppedOtherVersion',
  'invalid': 'invalidMessages',
};

const UDP_KEYRING_COUNTER: Readonly<Record<OpenFailure, keyof UdpTransportMetrics>> = {
  'unencrypted': 'droppedDecryptUnencrypted',
  'truncated': 'droppedDecryptTruncated',
  'unknown-key': 'droppedDecryptUnknownKey',
  'auth-failed': 'droppedDecryptAuthFailed',
};

const STREAM_KEYRING_COUNTER: Readonly<Record<OpenFailure, keyof StreamSealMetrics>> = {
  'unencrypted': 'droppedDecryptUnencrypted',
  'truncated': 'droppedDecryptTruncated',
  'unknown-key': 'droppedDecryptUnknownKey',
  'auth-failed': 'droppedDecryptAuthFailed',
};

const KEYRING_REASONS: readonly OpenFailure[] = ['unencrypted', 'truncated', 'unknown-key',
  'auth-failed'];

type Labels = Record<string, string>;
type Sample = readonly [labels: Labels, value: number];

/** A counter whose value is the member's total, read at each scrape. */
function totalCounter(registry: Registry, name: string, help: string, labelNames: string[],
  read: (status: MembershipStatus) => readonly Sample[], source: GossipMetricsSource): void {
  new Counter({
    name, help, labelNames, registers: [registry],
    collect(this: Counter) {
      this.reset();
      for (const [labels, value] of read(source.status())) this.inc(labels, value);
    },
  });
}

function gauge(registry: Registry, name: string, help: string, labelNames: string[],
  read: (status: MembershipStatus) => readonly Sample[], source: GossipMetricsSource): void {
  new Gauge({
    name, help, labelNames, registers: [registry],
    collect(this: Gauge) {
      this.reset();
      for (const [labels, value] of read(source.status())) this.set(labels, value);
    },
  });
}

/** A registry of its own holding the member's gossip metrics (names in docs/gossip.md). */
export function gossipMetricsRegistry(source: GossipMetricsSource): Registry {
  const registry = new Registry();
  addTrafficMetrics(registry, source);
  addRejectionMetrics(registry, source);
  addViewMetrics(registry, source);
  return registry;
}

function addTrafficMetrics(registry: Registry, source: GossipMetricsSource): void {
  totalCounter(registry, 'conclave_gossip_messages_sent_total',
    'SWIM messages this member sent, datagrams and stream messages', [],
    (s) => [[{}, s.counters.messagesSent]], source);
  totalCounter(registry, 'conclave_gossip_datagrams_total',
    'UDP datagrams sent, and valid datagrams received', ['direction'],
    (s) => [[{ direction: 'sent' }, s.transport.udp.datagramsSent],
      [{ direction: 'received' }, s.transport.udp.datagramsReceived]], source);
  totalCounter(registry, 'conclave_gossip_datagram_bytes_total',
    'bytes of UDP datagrams sent, and of valid datagrams received', ['direction'],
    (s) => [[{ direction: 'sent' }, s.transport.udp.bytesSent],
      [{ direction: 'received' }, s.transport.udp.bytesReceived]], source);
  totalCounter(registry, 'conclave_gossip_stream_messages_total',
    'TCP stream messages (join, push-pull) sent, and valid ones received', ['direction'],
    (s) => [[{ direction: 'sent' }, s.transport.tcp.messagesSent],
      [{ direction: 'received' }, s.transport.tcp.messagesReceived]], source);
  totalCounter(registry, 'conclave_gossip_probes_total',
    'probes this member sent, by outcome', ['result'],
    (s) => [[{ result: 'acked-direct' }, s.counters.probesAckedDirect],
      [{ result: 'acked-indirect' }, s.counters.probesAckedIndirect],
      [{ result: 'failed' }, s.counters.probesFailed]], source);
  totalCounter(registry, 'conclave_gossip_refutations_total',
    'accusations about this member that it refuted by raising its incarnation', [],
    (s) => [[{}, s.counters.refutations]], source);
}

function addRejectionMetrics(registry: Registry, source: GossipMetricsSource): void {
  totalCounter(registry, 'conclave_gossip_datagrams_dropped_total',
    'received datagrams dropped before the protocol saw them, by reason', ['reason'],
    (s) => Object.entries(DATAGRAM_DROP_COUNTER)
      .map(([reason, key]) => [{ reason }, s.transport.udp[key]] as const), source);
  totalCounter(registry, 'conclave_gossip_invalid_messages_total',
    'messages that failed the SWIM message validator, by channel', ['channel'],
    (s) => [[{ channel: 'datagram' }, s.transport.udp.invalidMessages],
      [{ channel: 'stream' }, s.transport.tcp.invalidMessages + s.transport.stream.invalidMessages],
      [{ channel: 'runtime' }, s.invalidMessagesDropped]], source);
  totalCounter(registry, 'conclave_gossip_updates_rejected_total',
    'membership news dropped as implausible or beyond the admission rate, by reason',
    ['reason'],
    (s) => SWIM_REJECTIONS.map((reason) => [{ reason },
      s.counters[REJECTION_COUNTER[reason]]] as const), source);
  totalCounter(registry, 'conclave_gossip_claims_rejected_total',
    'coordinator claims (push-pull, join-ack) ignored beyond the generation bound', [],
    (s) => [[{}, s.counters.rejectedClaims]], source);
  totalCounter(registry, 'conclave_gossip_joins_unconfirmed_total',
    'joins answered whose joiner never spoke again, so it never entered the view', [],
    (s) => [[{}, s.counters.joinsUnconfirmed]], source);
  totalCounter(registry, 'conclave_gossip_claims_caught_up_total',
    'claims taken beyond the generation bound from the candidate\'s answer to a request', [],
    (s) => [[{}, s.counters.claimsCaughtUp]], source);
  totalCounter(registry, 'conclave_gossip_keyring_failures_total',
    'messages refused by the keyring (not sealed, truncated, unknown key, bad tag)',
    ['channel', 'reason'],
    (s) => KEYRING_REASONS.flatMap((reason) => [
      [{ channel: 'datagram', reason }, s.transport.udp[UDP_KEYRING_COUNTER[reason]]] as const,
      [{ channel: 'stream', reason },
        s.transport.stream[STREAM_KEYRING_COUNTER[reason]]] as const]), source);
  totalCounter(registry, 'conclave_gossip_stream_sender_mismatch_total',
    'sealed stream messages whose sealed sender is not the connection\'s', [],
    (s) => [[{}, s.transport.stream.droppedSenderMismatch]], source);
  totalCounter(registry, 'conclave_gossip_handshakes_refused_total',
    'inbound TCP handshakes refused (another cluster, malformed, timed out, ...)', [],
    (s) => [[{}, s.transport.tcp.handshakesRefused]], source);
}

function addViewMetrics(registry: Registry, source: GossipMetricsSource): void {
  gauge(registry, 'conclave_gossip_members', 'members in this member\'s view, by state',
    ['state'],
    (s) => [[{ state: 'alive' }, s.membersAlive], [{ state: 'suspect' }, s.membersSuspect],
      [{ state: 'dead' }, s.membersDead], [{ state: 'left' }, s.membersLeft]], source);
  gauge(registry, 'conclave_gossip_stable_members',
    'the last stable membership that keep-majority and keep-oldest count against, and how '
      + 'many of it are live now', ['live'],
    (s) => [[{ live: 'true' }, s.stableMembersLive],
      [{ live: 'false' }, s.stableMembers - s.stableMembersLive]], source);
  gauge(registry, 'conclave_gossip_incarnation', 'this member\'s incarnation', [],
    (s) => [[{}, s.incarnation]], source);
  gauge(registry, 'conclave_gossip_awareness_score',
    'Lifeguard\'s local health score (0 is healthy)', [],
    (s) => [[{}, s.awarenessScore]], source);
  gauge(registry, 'conclave_gossip_leader_generation',
    'the generation of the leader in this member\'s view (absent: no leader)', ['leader'],
    (s) => s.leader === undefined ? []
      : [[{ leader: s.leader.id }, s.leader.generation]], source);
}
