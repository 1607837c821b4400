/**
 * server: live membership — three real `conclave server` processes under a closed-loop
 * workload (every call recorded). `conclave member add n4` adds a learner (a second add is
 * refused on one line), n4 starts with `--initial-cluster-state existing --cluster-id`, is
 * promoted once caught up, `conclave move-leader` hands leadership to another old member, an
 * old follower is removed and stopped, then the leader is killed (kill -9): the two voters
 * left (one of them n4) elect a leader and take writes; a final read of every key, and the
 * whole history is linearizable (WGL), so no acknowledged write was lost. The address that
 * `member add` gave is in the log: an old member restarted with its original `--cluster` (no
 * n4 in it), past a snapshot that compacted the change, still reaches n4 (with the third voter
 * gone, nothing commits unless it does). n4 publishes its client URL through the log: the old
 * members, whose --client-urls lack it, list it, and a client given only their endpoints finds
 * n4 when it leads. A one-member cluster refuses to remove its last voter,
 * to promote a voter and to move leadership to a stranger, each on one line with exit 1.
 * Method: real processes and sockets; every wait is a condition with a deadline.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { connect } from '../../src/client/index.js';
import { cliClientFlags } from '../support/deadlines.js';
import { call } from '../support/kv-http.js';
import { KvWorkload } from '../support/kv-workload.js';
import { freePort } from '../support/ports.js';
import { BIN, BUILT, RealCluster, waitFor, type RealMember } from '../support/real-cluster.js';
import { runCliInProcess } from '../cli/run-in-process.js';

const run = runCliInProcess;

const clusters: RealCluster[] = [];
/** Workloads still writing: a failed assertion must not leave one running (the file hangs). */
const workloads: KvWorkload[] = [];
after(async () => {
  await Promise.all(workloads.map((w) => w.stop().catch(() => undefined)));
  await Promise.all(clusters.map((c) => c.stop()));
});

const timing = { heartbeatMs: 50, electionTimeoutMs: 500 };

/** Starts n4 on its own ports, joining `cluster` (it is stopped with the cluster). */
async function startJoiner(cluster: RealCluster, clusterId: string, peerPort: number):
  Promise<RealMember> {
  const member: RealMember = { name: 'n4', clientPort: await freePort(), peerPort,
    child: undefined, stderr: '' };
  const all = [...cluster.members, member];
  const peers = all.map((m) => `${m.name}=127.0.0.1:${m.peerPort}`).join(',');
  const clients = all.map((m) => `${m.name}=127.0.0.1:${m.clientPort}`).join(',');
  const child = spawn(process.execPath, [BIN, 'server', '--name', 'n4', '--data-dir',
    join(cluster.dataDir, 'n4'), '--peer-addr', `127.0.0.1:${peerPort}`, '--client-addr',
    `127.0.0.1:${member.clientPort}`, '--cluster', peers, '--client-urls', clients,
    '--heartbeat-ms', String(timing.heartbeatMs), '--election-timeout-ms',
    String(timing.electionTimeoutMs), '--log-level', 'warn', '--peer-secret-file',
    join(cluster.dataDir, 'peer-secret'), '--initial-cluster-state', 'existing',
    '--cluster-id', clusterId], { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr.on('data', (chunk: Buffer) => {
    member.stderr = (member.stderr + chunk.toString()).slice(-4000);
  });
  member.child = child;
  cluster.members.push(member);
  return member;
}

/** Runs the CLI until it exits 0; any refusal but `passing` (a line of stderr) fails. */
async function retried(args: string[], deadlineMs: number, passing: RegExp): Promise<void> {
  await waitFor(async () => {
    const r = await run(args);
    if (r.code === 0) return true;
    assert.match(r.err[0] ?? '', passing, args.join(' '));
    return undefined;
  }, deadlineMs, args.slice(0, 3).join(' '));
}

/** A put through whichever running member commits it. */
async function putSomewhere(cluster: RealCluster, key: string, value: string,
  deadlineMs: number): Promise<void> {
  let attempt = 0;
  await waitFor(async () => {
    const running = cluster.members.filter((m) => m.child !== undefined);
    const member = running[attempt++ % running.length]!;
    const outcome = await call(cluster.endpoint(member), '/v1/kv/put',
      { key, value, clientId: 'membership-test', sequence: ++putSequence }, 2000);
    return outcome.kind === 'ok' ? true : undefined;
  }, deadlineMs, `put ${key} committed`);
}
let putSequence = 0;

async function snapshotIndexOf(cluster: RealCluster, member: RealMember): Promise<number> {
  const status = await cluster.status(member) as { snapshotIndex?: number } | undefined;
  return status?.snapshotIndex ?? 0;
}

describe('server: live membership', { skip: !BUILT && 'run npm run build first' }, () => {
  test('add a fourth member under writes, promote it, remove an old one, kill -9 the leader',
    async () => {
    const cluster = await RealCluster.start({ nodes: 3, ...timing });
    clusters.push(cluster);
    const firstLeader = await cluster.waitForLeader();
    const deadlineMs = 40 * timing.electionTimeoutMs;
    const flags = (): string[] => ['--endpoints', cluster.endpoints.join(','),
      ...cliClientFlags()];
    const workload = new KvWorkload(cluster, 4 * timing.electionTimeoutMs);
    workloads.push(workload);
    workload.start(3);
    const list = await run(['member', 'list', '--json', ...flags()]);
    assert.equal(list.code, 0, list.err.join('\n'));
    const { clusterId, members } = JSON.parse(list.out[0] ?? '{}') as { clusterId: string;
      members: { name: string; role: string }[] };
    assert.deepEqual(members.map((m) => m.role), ['voter', 'voter', 'voter']);
    const peerPort = await freePort();
    const added = await run(['member', 'add', 'n4', '--peer-addr', `127.0.0.1:${peerPort}`,
      ...flags()]);
    assert.equal(added.code, 0, added.err.join('\n'));
    assert.match(added.out[0] ?? '', /--initial-cluster-state existing --cluster-id [0-9a-f]{16}/);
    const again = await run(['member', 'add', 'n4', '--peer-addr', `127.0.0.1:${peerPort}`,
      ...flags()]);
    assert.deepEqual([again.code, again.err.length], [1, 1]);
    assert.match(again.err[0] ?? '', /member n4 already exists \(a learner\)/);
    const n4 = await startJoiner(cluster, clusterId, peerPort);
    await waitFor(async () => ((await run(['member', 'promote', 'n4', ...flags()])).code === 0
      ? true : undefined), deadlineMs, 'n4 promoted');

    const [successor, removed] = cluster.members.filter((m) => m !== firstLeader && m !== n4);
    const moved = await run(['move-leader', successor!.name, ...flags()]);
    assert.equal(moved.code, 0, moved.err.join('\n'));
    assert.match(moved.out[0] ?? '', new RegExp(`^leader is ${successor!.name}`));
    // A new leader refuses changes until an entry of its term commits, and n4's published client
    // URL is a membership change too (one at a time): retry those refusals only.
    await waitFor(async () => {
      const gone = await run(['member', 'remove', removed!.name, ...flags()]);
      if (gone.code === 0) return true;
      assert.match(gone.err[0] ?? '',
        /has not committed an entry of its term yet|another membership change is in progress/);
      return undefined;
    }, deadlineMs, `${removed!.name} removed`);
    await cluster.kill9(removed!);
    const ackedBefore = workload.acked.length;
    // Whoever leads now (successor, unless an election moved it) is killed.
    const leader = await cluster.waitForLeader(deadlineMs,
      cluster.members.filter((m) => m.child !== undefined));
    await cluster.kill9(leader);
    // The voters left: two of the first leader, successor and n4; one leads, the other follows.
    const left = [firstLeader, successor!, n4].filter((m) => m !== leader);
    await waitFor(async () => {
      const statuses = await Promise.all(left.map((m) => cluster.status(m)));
      const leader = statuses.find((s) => s?.role === 'leader');
      return leader !== undefined && statuses.every((s) => s?.leaderId === leader.id)
        ? true : undefined;
    }, deadlineMs, 'a leader among the two voters left');
    await waitFor(async () => (workload.acked.length >= ackedBefore + 10 ? true : undefined),
      deadlineMs, 'writes acknowledged after the failover');
    await workload.stop();
    await workload.readEveryKey(deadlineMs);
    assert.equal(workload.checkLinearizable(), 'ok');
  });

  test('a member restarted with its original --cluster reaches n4 through the address in its '
    + 'log', async () => {
    const cluster = await RealCluster.start({ nodes: 3, ...timing,
      serverArgs: ['--snapshot-count', '20', '--snapshot-catchup-entries', '5'] });
    clusters.push(cluster);
    await cluster.waitForLeader();
    const original = [...cluster.members];
    const [n1, n2, n3] = original as [RealMember, RealMember, RealMember];
    const deadlineMs = 40 * timing.electionTimeoutMs;
    const flags = (): string[] => ['--endpoints', cluster.endpoints.join(','),
      ...cliClientFlags()];
    const list = await run(['member', 'list', '--json', ...flags()]);
    const { clusterId } = JSON.parse(list.out[0] ?? '{}') as { clusterId: string };
    const peerPort = await freePort();
    const added = await run(['member', 'add', 'n4', '--peer-addr', `127.0.0.1:${peerPort}`,
      ...flags()]);
    assert.equal(added.code, 0, added.err.join('\n'));
    const n4 = await startJoiner(cluster, clusterId, peerPort);
    await retried(['member', 'promote', 'n4', ...flags()], deadlineMs, /./);
    await retried(['move-leader', 'n4', ...flags()], deadlineMs, /./);
    // n4 published its client URL through the log (the old members' --client-urls lack it):
    // they list it, and a client given only their endpoints finds n4, the leader.
    const n4Url = `http://${cluster.endpoint(n4)}`;
    await waitFor(async () => {
      const r = await run(['member', 'list', '--json', '--endpoints', cluster.endpoint(n1),
        ...cliClientFlags()]);
      const rows = (JSON.parse(r.out[0] ?? '{}') as { members?: { name: string;
        clientUrl: string | null }[] }).members ?? [];
      return rows.find((m) => m.name === 'n4')?.clientUrl === n4Url ? true : undefined;
    }, deadlineMs, 'n4 listed with its client URL by n1');
    const status = await run(['status', '--json', '--endpoints', cluster.endpoint(n2),
      ...cliClientFlags()]);
    assert.equal(status.code, 0, status.err.join('\n'));
    assert.match(status.out.join('\n'), new RegExp(`"clientUrl":"${n4Url}"`));
    for (const transport of ['stream', 'http'] as const) {
      const client = connect({ endpoints: original.map((m) => cluster.endpoint(m)), transport });
      try {
        await client.kv.put(`found-n4-${transport}`, 'yes');
        assert.equal(client.leaderUrl, n4Url, transport);
      } finally {
        client.close();
      }
    }
    await retried(['member', 'remove', 'n2', ...flags()], deadlineMs,
      /has not committed an entry of its term yet|another membership change is in progress/);
    await cluster.kill9(n2);
    // The voters are n1, n3, n4. Writes past a few snapshots: the changes are compacted away.
    const removedAt = (await cluster.status(n4))?.commitIndex ?? 0;
    for (let i = 0; i < 80; i++) await putSomewhere(cluster, `a${i}`, String(i), deadlineMs);
    await waitFor(async () => ((await snapshotIndexOf(cluster, n1)) > removedAt + 20 ? true
      : undefined), deadlineMs, 'n1 snapshotted past the membership changes');
    await cluster.kill9(n1);
    cluster.launch(n1, original); // --cluster n1=...,n2=...,n3=...: no n4
    await cluster.kill9(n3);
    // n1 and n4 are two of the three voters: a write commits only if they reach each other.
    await putSomewhere(cluster, 'after-restart', 'yes', deadlineMs);
    const fromN1 = await run(['member', 'list', '--json', '--endpoints', cluster.endpoint(n1),
      ...cliClientFlags()]);
    const members = (JSON.parse(fromN1.out[0] ?? '{}') as { members?: { name: string;
      role: string; peerAddr: string | null }[] }).members ?? [];
    const listed = members.find((m) => m.name === 'n4');
    assert.deepEqual([listed?.role, listed?.peerAddr], ['voter', `127.0.0.1:${peerPort}`]);
  });

  test('refusals: the last voter, a voter promoted, leadership to a stranger', async () => {
    const cluster = await RealCluster.start({ nodes: 1, ...timing });
    clusters.push(cluster);
    await cluster.waitForLeader();
    const flags = ['--endpoints', cluster.endpoints.join(','), ...cliClientFlags()];
    const cases: [string[], RegExp][] = [
      [['member', 'remove', 'n1'], /refusing to remove n1, the last voter/],
      [['member', 'promote', 'n1'], /member n1 is a voter already/],
      [['member', 'remove', 'n9'], /no member n9/],
      [['move-leader', 'n9'], /n9 is not a voter/],
    ];
    for (const [args, line] of cases) {
      const r = await run([...args, ...flags]);
      assert.deepEqual([r.code, r.err.length], [1, 1], args.join(' '));
      assert.match(r.err[0] ?? '', line);
    }
    const bad = await run(['member', 'add', 'n2', '--peer-addr', 'nowhere', ...flags]);
    assert.deepEqual([bad.code, bad.err.length], [2, 1]);
    assert.match(bad.err[0] ?? '', /--peer-addr: not a host:port address/);
    const help = await run(['member', 'add', '--help']);
    assert.match(help.out.join('\n'), /--peer-addr/);
  });
});
