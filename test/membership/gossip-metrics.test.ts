/**
 * membership: gossip metrics — one member in this process (real UDP and TCP sockets on
 * loopback) with its registry served by `startMetricsServer`: /metrics answers in Prometheus
 * text with every documented metric, the view's gauges, and counters that rise when malformed
 * and invalid datagrams arrive; any other path is 404; two registries in one process coexist.
 * Method: real sockets, every wait a condition with a deadline; everything closed in `after`.
 */
import assert from 'node:assert/strict';
import * as dgram from 'node:dgram';
import { after, describe, test } from 'node:test';
import {
  gossipMetricsRegistry, joinCluster, startMetricsServer, type Membership, type MetricsServer,
} from '../../src/membership/index.js';
import { deadlineMs } from '../support/deadlines.js';
import { waitUntil } from '../support/member-processes.js';

const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

const DOCUMENTED = ['messages_sent_total', 'datagrams_total', 'datagram_bytes_total',
  'stream_messages_total', 'probes_total', 'refutations_total', 'datagrams_dropped_total',
  'invalid_messages_total', 'updates_rejected_total', 'claims_rejected_total',
  'keyring_failures_total', 'stream_sender_mismatch_total', 'handshakes_refused_total',
  'members', 'stable_members', 'incarnation', 'awareness_score', 'leader_generation'];

async function solo(name: string): Promise<{ membership: Membership; server: MetricsServer }> {
  const membership = await joinCluster({ name, bind: '127.0.0.1:0', seeds: [],
    profile: 'local', clusterName: 'gossip-metrics-test' });
  closers.push(() => membership.close());
  const server = await startMetricsServer('127.0.0.1', 0, gossipMetricsRegistry(membership));
  closers.push(() => server.close());
  return { membership, server };
}

const line = (text: string, series: string): string | undefined =>
  text.split('\n').find((l) => l.startsWith(`${series} `));

describe('membership: gossip metrics', () => {
  test('/metrics shows every metric, the view, and drops as they happen', async () => {
    const { membership, server } = await solo('solo');
    const other = await solo('other');
    const first = await (await fetch(server.url)).text();
    for (const name of DOCUMENTED) {
      assert.match(first, new RegExp(`^# TYPE conclave_gossip_${name} `, 'm'), name);
    }
    assert.equal(line(first, 'conclave_gossip_members{state="alive"}'),
      'conclave_gossip_members{state="alive"} 1');
    assert.equal(line(first, 'conclave_gossip_stable_members{live="true"}'),
      'conclave_gossip_stable_members{live="true"} 1');
    assert.equal(line(first, 'conclave_gossip_leader_generation{leader="solo"}')?.split(' ')[1],
      String(membership.leader()?.generation));
    const socket = dgram.createSocket('udp4');
    closers.push(() => new Promise((resolve) => socket.close(() => resolve())));
    const port = Number(membership.address.split(':').at(-1));
    for (const bytes of [Buffer.from([0xc1]), Buffer.from([0x94, 0x01, 0xa1, 0x78, 0xa1, 0x79,
      0xc0])]) {
      await new Promise((resolve) => socket.send(bytes, port, '127.0.0.1', resolve));
    }
    await waitUntil(async () => {
      const text = await (await fetch(server.url)).text();
      return line(text, 'conclave_gossip_datagrams_dropped_total{reason="malformed"}')
        === 'conclave_gossip_datagrams_dropped_total{reason="malformed"} 1'
        && line(text, 'conclave_gossip_datagrams_dropped_total{reason="other-cluster"}')
        === 'conclave_gossip_datagrams_dropped_total{reason="other-cluster"} 1';
    }, deadlineMs(100), () => 'malformed and other-cluster counted once each');
    const otherText = await (await fetch(other.server.url)).text();
    assert.ok(line(otherText, 'conclave_gossip_leader_generation{leader="other"}') !== undefined);
    assert.equal((await fetch(server.url.replace('/metrics', '/other'))).status, 404);
  });
});
