/**
 * cli: endpoint — `GET /health` and `conclave endpoint health|status` against three real
 * `conclave server` processes: healthy and 200 on every member once a leader is elected; with
 * two members killed (kill -9) the last one answers 503 naming the missing leader, `endpoint
 * health` says which member is unhealthy and why and exits 1, and `endpoint status --json`
 * marks the dead members unreachable with their error. Method: real processes and sockets,
 * every wait a condition with a deadline; the CLI runs in-process (runCli) against them.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { cliClientFlags } from '../support/deadlines.js';
import { BUILT, RealCluster, waitFor } from '../support/real-cluster.js';
import { runCliInProcess } from './run-in-process.js';

const run = runCliInProcess;

async function health(endpoint: string): Promise<{ status: number; body: unknown } | undefined> {
  try {
    const response = await fetch(`http://${endpoint}/health`, { signal: AbortSignal.timeout(2000) });
    return { status: response.status, body: await response.json() };
  } catch {
    return undefined;
  }
}

const clusters: RealCluster[] = [];
after(async () => {
  await Promise.all(clusters.map((c) => c.stop()));
});

describe('cli: endpoint', { skip: !BUILT && 'run npm run build first' }, () => {
  test('health and status per member; a member without a leader is 503 and exit 1',
    async () => {
    const cluster = await RealCluster.start({ nodes: 3, heartbeatMs: 50,
      electionTimeoutMs: 500 });
    clusters.push(cluster);
    await cluster.waitForLeader();
    const flags = ['--endpoints', cluster.endpoints.join(','), ...cliClientFlags()];
    // Every member follows the leader once its first heartbeat arrived.
    await waitFor(async () => {
      const all = await Promise.all(cluster.endpoints.map(health));
      return all.every((h) => h?.status === 200) ? true : undefined;
    }, cluster.deadlines.leaderMs, 'every member healthy');
    assert.deepEqual((await health(cluster.endpoints[0]!))?.body, { health: 'true' });
    const healthy = await run(['endpoint', 'health', ...flags]);
    assert.equal(healthy.code, 0, healthy.err.join('\n'));
    assert.equal(healthy.out.length, 3);
    for (const line of healthy.out) assert.match(line, /^http:\/\/127\.0\.0\.1:\d+ is healthy \(took/);
    const status = await run(['endpoint', 'status', '--json', ...flags]);
    assert.equal(status.code, 0, status.err.join('\n'));
    const rows = status.out.map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(rows.filter((r) => r['isLeader'] === true).length, 1);
    for (const r of rows) {
      assert.equal(r['reachable'], true);
      for (const field of ['term', 'raftIndex', 'appliedIndex', 'dbSizeBytes', 'latencyMs']) {
        assert.equal(typeof r[field], 'number', `${field} in ${JSON.stringify(r)}`);
      }
    }
    const table = await run(['endpoint', 'status', ...flags]);
    assert.match(table.out[0] ?? '', /^ENDPOINT\s+ID\s+LEADER\s+IS LEADER\s+TERM\s+RAFT INDEX/);

    const [survivor, ...killed] = cluster.members;
    await Promise.all(killed.map((m) => cluster.kill9(m)));
    const sick = await waitFor(async () => {
      const h = await health(cluster.endpoint(survivor!));
      return h?.status === 503 ? h : undefined;
    }, cluster.deadlines.failoverMs, 'the survivor unhealthy');
    assert.match(String((sick.body as { reason?: string }).reason), /knows no leader in term/);
    const unhealthy = await run(['endpoint', 'health', ...flags]);
    assert.equal(unhealthy.code, 1);
    assert.match(unhealthy.out[0] ?? '', /is unhealthy: member n1 knows no leader/);
    assert.match(unhealthy.out[1] ?? '', /is unhealthy: .*ECONNREFUSED/);
    const partial = await run(['endpoint', 'status', '--json', ...flags]);
    assert.equal(partial.code, 1);
    const [up, down] = partial.out.map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(up?.['reachable'], true);
    assert.equal(down?.['reachable'], false);
    assert.match(String(down?.['error']), /ECONNREFUSED/);
  });

  test('--help names what each subcommand shows', async () => {
    const h = await run(['endpoint', 'health', '--help']);
    assert.equal(h.code, 0);
    assert.match(h.out.join('\n'), /has a leader and has applied its log/);
    const s = await run(['endpoint', 'status', '--help']);
    assert.match(s.out.join('\n'), /raft index, db size and latency/);
    assert.match(s.out.join('\n'), /--json/);
  });
});
