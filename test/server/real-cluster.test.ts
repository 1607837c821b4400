/**
 * server: real processes — three `conclave server` processes on loopback (the built CLI), peer
 * links through userspace fault proxies. Crash the leader with kill -9 under write load, crash
 * everyone and restart, cut the leader off: acknowledged writes survive, the cluster recovers,
 * the cut-off side acknowledges nothing. Histories are checked for linearizability.
 * Method: real time, but every wait is a condition with a deadline derived from the cluster's
 * own timings (test/support/deadlines.ts), sized for a loaded 2-core machine. The times the
 * protocol promises (failover within a few election timeouts, a cut-off leader answering
 * no-quorum within two) are measured and printed; on real time they are asserted only within
 * those deadlines, since a loaded machine delays every timer. The simulator checks the
 * promised bounds themselves, on virtual time (docs/raft.md: liveness).
 */
import assert from 'node:assert/strict';
import * as net from 'node:net';
import { after, describe, test } from 'node:test';
import { checkLinearizable, formatIllegalReport } from '../../src/sim/checkers/linearizability.js';
import { HistoryRecorder } from '../../src/sim/checkers/history.js';
import { kvModel, type KvInput, type KvOutput } from '../../src/sim/checkers/kv-model.js';
import { deadlineMs, patienceMs } from '../support/deadlines.js';
import { call } from '../support/kv-http.js';
import { KvWorkload as Workload } from '../support/kv-workload.js';
import { BUILT, RealCluster, waitFor, type RealMember } from '../support/real-cluster.js';

const clusters: RealCluster[] = [];
after(async () => {
  await Promise.all(clusters.map((c) => c.stop()));
});

async function startCluster(heartbeatMs: number, electionTimeoutMs: number): Promise<RealCluster> {
  const cluster = await RealCluster.start({ nodes: 3, heartbeatMs, electionTimeoutMs });
  clusters.push(cluster);
  return cluster;
}

describe('server: real processes', { skip: BUILT ? false : 'dist/ not built (npm ci builds it)' }, () => {
  test('kill -9 of the leader under writes: a write succeeds again after the failover, none lost', async (t) => {
    const electionTimeoutMs = 1000;
    const cluster = await startCluster(100, electionTimeoutMs);
    const { deadlines } = cluster;
    const leader = await cluster.waitForLeader();
    const workload = new Workload(cluster, 2 * electionTimeoutMs);
    workload.start(3);
    await waitFor(async () => (workload.acked.length >= 30 ? true : undefined), deadlines.requestMs,
      '30 acknowledged writes');
    const killedAtMs = performance.now();
    await cluster.kill9(leader);
    const recovered = await waitFor(async () => workload.acked.find((w) => w.atMs > killedAtMs),
      deadlines.failoverMs, 'a write acknowledged after the kill');
    const failoverMs = recovered.atMs - killedAtMs;
    await waitFor(async () => (workload.acked.filter((w) => w.atMs > killedAtMs).length >= 20 ? true : undefined),
      deadlines.requestMs, 'more writes');
    await workload.stop();
    // 3 election timeouts on an idle machine; asserted only within the loaded deadline.
    t.diagnostic(`failover: first write acknowledged ${failoverMs.toFixed(0)} ms after the kill `
      + `(${(failoverMs / electionTimeoutMs).toFixed(1)} election timeouts)`);
    // Every acknowledged write must be visible in a linearizable history with final reads.
    const survivors = cluster.members.filter((m) => m.child !== undefined);
    for (const key of ['k0', 'k1', 'k2']) {
      const id = workload.history.invoke('final', { kind: 'get', key }, performance.now());
      const outcome = await call(cluster.endpoint(survivors[0]!), '/v1/kv/range', { key }, deadlines.requestMs);
      assert.equal(outcome.kind, 'ok');
      const kvs = (outcome.kind === 'ok' ? outcome.body['kvs'] : []) as { value: string }[];
      workload.history.complete(id, { value: kvs[0]?.value }, performance.now());
    }
    workload.checkLinearizable();
  });

  test('kill -9 of all three, then restart: every acknowledged write is there', async () => {
    const cluster = await startCluster(50, 300);
    await cluster.waitForLeader();
    const acked: { key: string; value: string }[] = [];
    const history = new HistoryRecorder<KvInput, KvOutput>();
    for (let i = 0; i < 60; i++) {
      const key = `w-${String(i).padStart(3, '0')}`;
      const id = history.invoke('writer', { kind: 'put', key, value: `v${i}` }, performance.now());
      const outcome = await putRetrying(cluster.endpoints[i % 3]!,
        { key, value: `v${i}`, clientId: 'writer', sequence: i + 1 }, cluster.deadlines.failoverMs);
      if (outcome === 'ok') {
        acked.push({ key, value: `v${i}` });
        history.complete(id, {}, performance.now());
      } else if (outcome === 'failed') {
        history.fail(id, performance.now());
      } else {
        history.unknown(id);
      }
    }
    assert.ok(acked.length >= 50, `only ${acked.length} writes acknowledged`);
    await Promise.all(cluster.members.map((m) => cluster.kill9(m)));
    for (const member of cluster.members) cluster.launch(member);
    await cluster.waitForLeader();
    const outcome = await waitFor(async () => {
      const r = await call(cluster.endpoints[0]!, '/v1/kv/range', { key: 'w-', prefix: true }, patienceMs(300));
      return r.kind === 'ok' ? r : undefined;
    }, cluster.deadlines.requestMs, 'a linearizable range after the restart');
    const found = new Map(((outcome.body['kvs'] as { key: string; value: string }[]) ?? []).map((kv) => [kv.key, kv.value]));
    for (const write of acked) assert.equal(found.get(write.key), write.value, `acknowledged write ${write.key} lost`);
    // The reads after the restart, as gets in the history: the whole run must linearize.
    const readAtMs = performance.now();
    for (let i = 0; i < 60; i++) {
      const key = `w-${String(i).padStart(3, '0')}`;
      const id = history.invoke('reader', { kind: 'get', key }, readAtMs);
      history.complete(id, { value: found.get(key) }, readAtMs + 1);
    }
    const verdict = checkLinearizable(kvModel, history.operations());
    assert.equal(verdict.result, 'ok', formatIllegalReport(verdict));
  });

  test('the leader cut off from both peers acknowledges nothing and answers no-quorum', async (t) => {
    const electionTimeoutMs = 300;
    const cluster = await startCluster(50, electionTimeoutMs);
    const leader = await cluster.waitForLeader();
    const cutAtMs = performance.now();
    cluster.isolate(leader);
    const isolatedEndpoint = cluster.endpoint(leader);
    let sequence = 0;
    let noQuorumAtMs: number | undefined;
    // Two election timeouts on an idle machine (check-quorum); up to the loaded deadline here,
    // and on for 4 election timeouts more, to see that nothing is acknowledged meanwhile.
    const untilMs = (): number => (noQuorumAtMs === undefined
      ? cutAtMs + cluster.deadlines.failoverMs : noQuorumAtMs + 4 * electionTimeoutMs);
    while (performance.now() < untilMs()) {
      sequence++;
      const outcome = await call(isolatedEndpoint, '/v1/kv/put', { key: 'x', value: `cut-${sequence}`, clientId: 'isolated', sequence }, 2 * electionTimeoutMs);
      assert.notEqual(outcome.kind, 'ok', 'the isolated leader acknowledged a write');
      if (outcome.kind === 'failed' && (outcome.code === 'CONCLAVE_NO_QUORUM' || outcome.code === 'CONCLAVE_NOT_LEADER')) {
        noQuorumAtMs ??= performance.now();
      }
    }
    assert.ok(noQuorumAtMs !== undefined, 'the cut-off leader never answered no-quorum');
    t.diagnostic(`cut-off leader: no-quorum answer ${(noQuorumAtMs - cutAtMs).toFixed(0)} ms `
      + `after the cut (${((noQuorumAtMs - cutAtMs) / electionTimeoutMs).toFixed(1)} election timeouts)`);
    // The majority side elects a new leader and commits.
    const others = cluster.members.filter((m) => m !== leader);
    await cluster.waitForLeader(cluster.deadlines.failoverMs, others);
    // Retried with its idempotency key: on a loaded machine a 300 ms election timeout can
    // fire again right after the new leader was seen (NO_LEADER while that election runs).
    await putUntilOk(cluster, others[0]!, { key: 'x', value: 'majority', clientId: 'majority',
      sequence: 1 }, 'a put on the majority side');
  });

  test('garbage, an oversized length prefix and an HTTP request on a peer port: refused, and the member keeps serving', async () => {
    const cluster = await startCluster(50, 300);
    await cluster.waitForLeader();
    const target = cluster.members[0]!;
    const replies: string[] = [];
    for (const bytes of [
      Buffer.from('\x00\x01garbage-garbage-garbage\xff\xfe'),
      Buffer.from([0xff, 0xff, 0xff, 0xff, 1, 2, 3]),
      Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'),
    ]) {
      replies.push(await sendRaw(target.peerPort, bytes));
    }
    assert.match(replies[2]!, /400/);
    assert.match(replies[2]!, /peer port/i);
    const status = await cluster.status(target);
    assert.ok(status !== undefined, 'the member stopped answering');
    // A put through the target succeeds: retried with the same idempotency key while an
    // election is under way (on a loaded machine a 300 ms election timeout can fire at any
    // moment, and a member without a leader answers `failed` with NO_LEADER or NO_QUORUM).
    await putUntilOk(cluster, target, { key: 'after', value: 'ok', clientId: 'bad-input',
      sequence: 1 }, 'a put after the bad input');
  });
});

/**
 * A put through `member`, retried with the same idempotency key until it is acknowledged,
 * within the cluster's failover deadline; the last outcomes are in the error if it never is.
 */
async function putUntilOk(cluster: RealCluster, member: RealMember,
  body: Record<string, unknown>, what: string): Promise<void> {
  const outcomes: string[] = [];
  await waitFor<true>(async () => {
    const outcome = await call(cluster.endpoint(member), '/v1/kv/put', body,
      cluster.deadlines.requestMs);
    outcomes.push(JSON.stringify(outcome));
    return outcome.kind === 'ok' ? true : undefined;
  }, cluster.deadlines.failoverMs, what).catch((error: Error) => {
    throw new Error(`${error.message}; outcomes: ${outcomes.slice(-5).join(', ')}`);
  });
}

/** Writes raw bytes to a port and collects what comes back until the server closes it. */
function sendRaw(port: number, bytes: Buffer): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    let reply = '';
    socket.on('data', (chunk) => (reply += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    const finish = (): void => resolve(reply);
    socket.on('close', finish);
    socket.setTimeout(deadlineMs(500), () => socket.destroy());
  });
}

/**
 * A put retried with its idempotency key until it is acknowledged or `deadlineMs` passes:
 * on a loaded machine a 300 ms election timeout fires now and then, and a member between
 * leaders refuses (NO_LEADER) or times out. `unknown` if any attempt may have been applied.
 */
async function putRetrying(endpoint: string, body: Record<string, unknown>,
  deadlineMs: number): Promise<'ok' | 'failed' | 'unknown'> {
  const endMs = performance.now() + deadlineMs;
  let mayHaveApplied = false;
  for (;;) {
    const outcome = await call(endpoint, '/v1/kv/put', body, patienceMs(300));
    if (outcome.kind === 'ok') return 'ok';
    if (outcome.kind !== 'failed') mayHaveApplied = true;
    if (performance.now() > endMs) return mayHaveApplied ? 'unknown' : 'failed';
    await new Promise((resolve) => setTimeout(resolve, 20)); // a back-off, not a wait for state
  }
}
