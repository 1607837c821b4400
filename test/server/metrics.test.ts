/**
 * server: /metrics through prom-client (issue 18 item 6): the default process and Node.js
 * metrics (event-loop lag, GC) are there; every metric name that existed before stays; each
 * histogram has its own buckets (peer RTT does not reuse the WAL's); every help text says more
 * than the name; totals counted elsewhere are exposed as counters without double counting;
 * docs/metrics.md lists every metric the server exposes.
 * Method: ServerMetrics rendered in-process from a fixed Raft status and the server's gauges.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { RaftStatus } from '../../src/core/raft/index.js';
import {
  EXTRA_GAUGE_HELP, PEER_RTT_BUCKETS_S, ServerMetrics, WAL_SYNC_BUCKETS_S,
} from '../../src/server/metrics.js';

const STATUS = { id: 'n1', role: 'leader', term: 3, leaderId: 'n1', commitIndex: 10,
  appliedIndex: 9, lastIndex: 11, snapshotIndex: 4, progress: [] } as unknown as RaftStatus;
const EXTRA = Object.fromEntries(Object.keys(EXTRA_GAUGE_HELP).map((k, i) => [k, i]));
const HANDSHAKES = (n: number): { name: string; help: string; label: string;
  values: Record<string, number> }[] => [{ name: 'conclave_peer_handshakes_refused_total',
  help: 'Peer connections refused before they became links, by reason.', label: 'reason',
  values: { 'tls-untrusted': n } }];

/** The names metrics had before prom-client (dashboards and tests read them). */
const HISTORICAL = ['conclave_is_leader', 'conclave_term', 'conclave_commit_index',
  'conclave_applied_index', 'conclave_last_index', 'conclave_revision', 'conclave_watchers',
  'conclave_client_connections', 'conclave_request_body_bytes_inflight',
  'conclave_client_requests_refused_at_limits', 'conclave_watch_queued_bytes',
  'conclave_watchers_canceled_slow', 'conclave_keyspace_bytes', 'conclave_quota_bytes',
  'conclave_alarm_nospace', 'conclave_idempotency_records', 'conclave_idempotency_records_bytes',
  'conclave_elections_total', 'conclave_proposals_total', 'conclave_peer_handshakes_refused_total',
  'conclave_peer_messages_rejected_total', 'conclave_snapshots_total', 'conclave_snapshot_bytes',
  'conclave_snapshot_index', 'conclave_wal_sync_seconds', 'conclave_peer_round_trip_seconds'];

function helpLines(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^# HELP (\S+) (.*)$/gm)].map((m) => [m[1]!, m[2]!]));
}

describe('server: metrics', () => {
  test('default Node.js metrics, every historical name, and help that says something',
    async () => {
      const metrics = new ServerMetrics();
      metrics.countElection('timeout');
      metrics.countProposal('committed');
      metrics.walSync.observe(0.002);
      metrics.peerRoundTrip.observe(0.0003);
      const text = await metrics.render(STATUS, EXTRA, HANDSHAKES(2), 1);
      const help = helpLines(text);
      for (const name of ['nodejs_eventloop_lag_seconds', 'nodejs_eventloop_lag_p99_seconds',
        'nodejs_gc_duration_seconds', 'process_cpu_seconds_total',
        'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes']) {
        assert.ok(help.has(name), `missing ${name}`);
      }
      for (const name of HISTORICAL) assert.ok(help.has(name), `missing ${name}`);
      for (const [name, line] of help) {
        if (!name.startsWith('conclave_')) continue;
        const echo = name.replace(/^conclave_/, '').replace(/_/g, ' ');
        assert.ok(line.length > echo.length + 12 && !line.startsWith(`${echo}.`),
          `${name}: help "${line}" only repeats the name`);
      }
      assert.match(text, /^conclave_term 3$/m);
      assert.match(text, /^conclave_elections_total\{reason="timeout"\} 1$/m);
      assert.match(text, /^conclave_peer_messages_rejected_total\{reason="malformed"\} 1$/m);
    });

  test('each histogram has its own buckets', async () => {
    assert.notDeepEqual(PEER_RTT_BUCKETS_S, WAL_SYNC_BUCKETS_S);
    const text = await new ServerMetrics().render(STATUS, EXTRA);
    const buckets = (name: string): string[] => [...text.matchAll(
      new RegExp(`^${name}_bucket\\{le="([^"]+)"\\}`, 'gm'))].map((m) => m[1]!);
    assert.deepEqual(buckets('conclave_wal_sync_seconds'),
      [...WAL_SYNC_BUCKETS_S.map(String), '+Inf']);
    assert.deepEqual(buckets('conclave_peer_round_trip_seconds'),
      [...PEER_RTT_BUCKETS_S.map(String), '+Inf']);
  });

  test('totals counted elsewhere become counters that are not counted twice', async () => {
    const metrics = new ServerMetrics();
    await metrics.render(STATUS, EXTRA, HANDSHAKES(2), 3);
    const text = await metrics.render(STATUS, EXTRA, HANDSHAKES(5), 3);
    assert.match(text, /^# TYPE conclave_peer_handshakes_refused_total counter$/m);
    assert.match(text, /^conclave_peer_handshakes_refused_total\{reason="tls-untrusted"\} 5$/m);
    assert.match(text, /^conclave_peer_messages_rejected_total\{reason="malformed"\} 3$/m);
  });

  test('a gauge without a help text is refused', async () => {
    await assert.rejects(new ServerMetrics().render(STATUS, { made_up: 1 }), /no help text/);
  });

  test('docs/metrics.md lists every conclave metric', async () => {
    const doc = readFileSync(fileURLToPath(new URL('../../docs/metrics.md', import.meta.url)),
      'utf8');
    const metrics = new ServerMetrics();
    metrics.clientRequest.observe({ path: '/v1/kv/put', code: '200' }, 0.001);
    const text = await metrics.render(STATUS, EXTRA, HANDSHAKES(1));
    for (const name of helpLines(text).keys()) {
      if (!name.startsWith('conclave_')) continue;
      assert.ok(doc.includes(`\`${name}\``) || doc.includes(`\`${name}{`), `${name} not in docs`);
    }
  });

  test('the Grafana dashboard reads only metrics that exist', async () => {
    const dashboard = readFileSync(fileURLToPath(new URL('../../docs/grafana-dashboard.json',
      import.meta.url)), 'utf8');
    const exprs = (JSON.parse(dashboard) as { panels: { targets: { expr: string }[] }[] })
      .panels.flatMap((p) => p.targets.map((t) => t.expr));
    const metrics = new ServerMetrics();
    metrics.clientRequest.observe({ path: '/v1/kv/put', code: '200' }, 0.001);
    metrics.leaseKeepAlive.observe(0.001);
    const names = new Set(helpLines(await metrics.render(STATUS, EXTRA, HANDSHAKES(1))).keys());
    for (const expr of exprs) {
      for (const [used] of expr.matchAll(/\b(?:conclave|nodejs|process)_[a-z0-9_]+/g)) {
        const base = used.replace(/_(bucket|sum|count)$/, '');
        assert.ok(names.has(base) || names.has(used), `${used} in the dashboard does not exist`);
      }
    }
  });
});
