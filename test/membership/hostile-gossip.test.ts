/**
 * membership: hostile gossip against real processes (issue 13, "Must show", gossip part) —
 * five `conclave gossip --json --metrics` processes on loopback, and a forger: a UDP socket in
 * the test that encodes datagrams with the project's own codec exactly as the UDP adapter does
 * (`[version, cluster, sender, message]` in MessagePack), under ids of its choosing. It sends
 * the attacks of the issue: a `dead` about a live member, incarnations 2^53 − 1, 2^40 + 1 and a
 * jump far beyond any step, an `alive` of a non-member with age 0, generation 2^53 − 1 (in news
 * and in a push-pull claim), a burst of forged joins, and malformed datagrams.
 * Afterwards every member is up, all agree on the same five live members and the same leader at
 * the same generation, no forged member leads, and each member's /metrics shows the rejections
 * by reason. The join flood is answered at the bucket's rate only, no forged joiner enters a
 * view (it never speaks again, so it is never admitted), and the cluster keeps its leader. Then
 * the same attacks against a cluster with `--encrypt-key-file`: every forged datagram is
 * refused by the keyring (counted by reason) and nothing changes.
 * Method: real time, every wait a condition with a deadline (test/support/deadlines.ts); the
 * forger paces its bursts so loopback's socket buffers do not drop them.
 */
import assert from 'node:assert/strict';
import * as dgram from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { MessageCodec } from '../../src/adapters/frame-codec.js';
import { GossipKeyring, generateGossipKey } from '../../src/adapters/gossip-keyring.js';
import { WIRE_VERSION } from '../../src/adapters/tcp-handshake.js';
import { SWIM_DEFAULTS_LOCAL, swimDeathDeclarationBoundMs } from '../../src/core/swim/index.js';
import { DEADLINE_FLOOR_MS, deadlineMs as loadedDeadlineMs } from '../support/deadlines.js';
import {
  MemberProcesses, oldest, views, waitUntil, type MemberProcess,
} from '../support/member-processes.js';
import { BUILT } from '../support/real-cluster.js';

const CLUSTER = 'hostile-gossip-test';
const NAMES = ['m1', 'm2', 'm3', 'm4', 'm5'];
/** A small admission budget, so that a join flood shows the bound with a few hundred joins. */
const BURST_MAX = 10;
const PER_SECOND_MAX = 2;
const FORGED_JOINS = 200;
const MEMBER_ARGS = ['--metrics', '127.0.0.1:0', '--admissions-burst-max', String(BURST_MAX),
  '--admissions-per-second-max', String(PER_SECOND_MAX)];
/** Forged members admitted within the budget must be declared dead like any silent member. */
const DEATH_BOUND_MS = swimDeathDeclarationBoundMs(SWIM_DEFAULTS_LOCAL, NAMES.length + BURST_MAX);

const cluster = new MemberProcesses(CLUSTER);
const keyDir = mkdtempSync(join(tmpdir(), 'conclave-hostile-gossip-'));
after(() => {
  cluster.killAll();
  forger.close();
  rmSync(keyDir, { recursive: true, force: true });
});

/** The forger: one UDP socket, sealing nothing (it holds no key) unless told to. */
class Forger {
  private readonly socket = dgram.createSocket('udp4');
  private readonly codec = new MessageCodec();
  private bound: Promise<void> | undefined;
  /** Datagrams sent to each member port. */
  readonly sent = new Map<number, number>();

  async port(): Promise<number> {
    this.bound ??= new Promise((resolve) => this.socket.bind(0, '127.0.0.1', () => resolve()));
    await this.bound;
    return this.socket.address().port;
  }

  /** The datagram the UDP adapter would send for `message` from `from`. */
  encode(from: string, message: unknown, cluster = CLUSTER): Uint8Array {
    const encoded = this.codec.encodePayload([WIRE_VERSION, cluster, from, message], 65_507);
    assert.ok(encoded.ok);
    return Buffer.from(encoded.bytes);
  }

  async send(to: MemberProcess, bytes: Uint8Array): Promise<void> {
    await this.port();
    const port = udpPort(to);
    this.sent.set(port, (this.sent.get(port) ?? 0) + 1);
    await new Promise<void>((resolve, reject) => this.socket.send(bytes, port, '127.0.0.1',
      (error) => (error === null || error === undefined ? resolve() : reject(error))));
    // Paced: a burst of hundreds on loopback would overflow the receiver's socket buffer.
    if ((this.sent.get(port)! % 20) === 0) await new Promise((r) => setTimeout(r, 5));
  }

  sentTo(member: MemberProcess): number {
    return this.sent.get(udpPort(member)) ?? 0;
  }

  close(): void {
    if (this.bound !== undefined) this.socket.close();
  }
}
const forger = new Forger();

function udpPort(member: MemberProcess): number {
  return Number(member.address!.split(':').at(-1));
}

/** The value of one sample of /metrics, summed over the series that match `labels`. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  let found = false;
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const series = new Map([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)]
      .map((m) => [m[1]!, m[2]!] as const));
    if (Object.entries(labels).every(([k, v]) => series.get(k) === v)) {
      total += Number(match[3]);
      found = true;
    }
  }
  assert.ok(found, `no ${name}${JSON.stringify(labels)} in /metrics:\n${text.slice(0, 2000)}`);
  return total;
}

async function scrape(member: MemberProcess): Promise<string> {
  const response = await fetch(member.metricsUrl!);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
  return response.text();
}

const rejected = (text: string, reason: string): number =>
  sample(text, 'conclave_gossip_updates_rejected_total', { reason });

/** Waits until all five are up, agree on the five live members, and follow the same leader. */
async function settled(members: readonly MemberProcess[], deadlineMs: number): Promise<void> {
  await waitUntil(() => members.every((m) => m.exit === undefined
    && m.liveMembers().join(',') === NAMES.join(',')
    && m.leader !== undefined && m.leader.id === members[0]!.leader?.id
    && m.leader.generation === members[0]!.leader?.generation), deadlineMs,
  () => `all five live and on one leader\n${views(members)}`);
}

/** The member the forger declares dead: neither the leader nor the one it floods with joins. */
function refuter(members: readonly MemberProcess[], leader: string): MemberProcess {
  return members.find((m) => m.name !== leader && m.name !== 'm5')!;
}

/** All five live in every view (whatever the leader). */
async function agreeOnLive(members: readonly MemberProcess[], deadlineMs: number): Promise<void> {
  await waitUntil(() => members.every((m) => m.exit === undefined
    && m.liveMembers().join(',') === NAMES.join(',')), deadlineMs,
  () => `all five live\n${views(members)}`);
}

type Send = (to: MemberProcess, bytes: Uint8Array) => Promise<void>;

/** Every attack of the issue but the join flood, from the forger to each of `members`. */
async function forgeNews(members: readonly MemberProcess[], leader: string,
  send: Send): Promise<void> {
  const forgerAddress = `127.0.0.1:${await forger.port()}`;
  const target = refuter(members, leader);
  const incarnation = sample(await scrape(target), 'conclave_gossip_incarnation');
  const gossip = (updates: unknown[]): unknown => ({ kind: 'gossip', updates });
  for (const to of members) {
    const age = to.ages().get(target.name) ?? 1;
    const leaderAge = to.ages().get(leader) ?? 0;
    const messages: Array<[string, unknown]> = [
      // A dead about a live member, at a plausible incarnation: the member must refute it.
      ['evil', gossip([{ member: target.name, state: 'dead', incarnation, age, by: 'evil' }])],
      // Incarnations out of reach: 2^53 − 1, 2^40 + 1, and a jump far beyond any step.
      ['evil', gossip([{ member: to.name, state: 'suspect', incarnation: 2 ** 53 - 1,
        age: to.ages().get(to.name) ?? 0, by: 'evil' }])],
      ['evil', gossip([{ member: target.name, state: 'alive', incarnation: 2 ** 40 + 1, age,
        address: target.address }])],
      ['evil', gossip([{ member: target.name, state: 'suspect', incarnation: 2 ** 30, age,
        by: 'evil' }])],
      // A non-member claiming age 0: older than everyone, it would lead.
      ['evil', gossip([{ member: 'evil-elder', state: 'alive', incarnation: 1, age: 0,
        address: forgerAddress }])],
      // Generation 2^53 − 1 in news about the leader and in a coordinator claim.
      ['evil', gossip([{ member: leader, state: 'alive', incarnation: 1, age: leaderAge,
        address: members.find((m) => m.name === leader)!.address, generation: 2 ** 53 - 1 }])],
      ['evil', { kind: 'push-pull', reply: true, acting: true,
        claim: { generation: 2 ** 53 - 1, by: 'evil' }, members: [] }],
    ];
    for (const [from, message] of messages) await send(to, forger.encode(from, message));
    await sendMalformed(to, send);
  }
}

/** A burst of joins under fresh ids, all at the forger's own address (it answers nothing). */
async function floodJoins(to: MemberProcess, send: Send): Promise<void> {
  const forgerAddress = `127.0.0.1:${await forger.port()}`;
  for (let i = 0; i < FORGED_JOINS; i++) {
    await send(to, forger.encode(`forged-${i}`, { kind: 'join', address: forgerAddress }));
  }
}

/** Noise, MessagePack that is no envelope, an invalid message, another cluster, too large. */
async function sendMalformed(to: MemberProcess, send: Send): Promise<void> {
  await send(to, Buffer.from([0xc1, 0xff, 0x00, 0x13, 0x37]));
  await send(to, Buffer.from([0x81, 0xa3, 0x6e, 0x6f, 0x74, 0xc0])); // { not: nil }
  await send(to, forger.encode('evil', { kind: 'ping', seq: -1, target: 42, updates: 'x' }));
  await send(to, forger.encode('evil', { kind: 'gossip', updates: [] }, 'another-cluster'));
  await send(to, Buffer.alloc(9000, 0x90));
}

describe('membership: hostile gossip, real processes',
  { skip: BUILT ? false : 'dist/ not built (npm ci builds it)' }, () => {
    /** The plain cluster, shared by the first three tests. */
    let plain: MemberProcess[] = [];
    let leaderBefore: { readonly id: string; readonly generation: number } | undefined;

    test('forged news and malformed datagrams without a keyring: nobody falls, the leader '
      + 'stays, /metrics counts the rejections by reason', async (t) => {
      const members = plain = await cluster.launchCluster(NAMES, MEMBER_ARGS);
      await settled(members, loadedDeadlineMs(DEATH_BOUND_MS));
      const leader = leaderBefore = members[0]!.leader!;
      assert.equal(leader.id, oldest(members[1]!, NAMES));
      const target = refuter(members, leader.id);
      await forgeNews(members, leader.id, (to, bytes) => forger.send(to, bytes));
      // The forged `dead` is refuted: the target is live again in every view.
      await waitUntil(async () => sample(await scrape(target),
        'conclave_gossip_refutations_total') >= 1, loadedDeadlineMs(DEATH_BOUND_MS),
      () => `${target.name} refuted the forged dead\n${views(members)}`);
      await settled(members, loadedDeadlineMs(DEATH_BOUND_MS));
      for (const m of members) {
        assert.deepEqual(m.leader, leader, `${m.name} changed leader\n${views(members)}`);
        assert.ok(!m.lines.some((l) => l.kind === 'joined' && l.member === 'evil-elder'));
        assert.ok(!m.lines.some((l) => l.kind === 'leader-changed'
          && l.leader !== undefined && !NAMES.includes(l.leader.id)),
        `${m.name} followed a forger`);
      }
      const texts = await Promise.all(members.map(scrape));
      for (const [i, text] of texts.entries()) {
        const m = members[i]!;
        assert.ok(rejected(text, 'out-of-range') >= 3, `${m.name} out-of-range`);
        assert.ok(rejected(text, 'incarnation-jump') >= 1, `${m.name} incarnation-jump`);
        assert.ok(rejected(text, 'older-than-leader') >= 1, `${m.name} older-than-leader`);
        assert.ok(sample(text, 'conclave_gossip_claims_rejected_total') >= 1, `${m.name} claims`);
        const dropped = (reason: string): number =>
          sample(text, 'conclave_gossip_datagrams_dropped_total', { reason });
        assert.ok(dropped('malformed') >= 2, `${m.name} malformed`);
        assert.ok(dropped('invalid') >= 1, `${m.name} invalid`);
        assert.ok(dropped('other-cluster') >= 1, `${m.name} other-cluster`);
        assert.ok(dropped('too-large') >= 1, `${m.name} too-large`);
        assert.equal(sample(text, 'conclave_gossip_members', { state: 'alive' })
          + sample(text, 'conclave_gossip_members', { state: 'suspect' }), NAMES.length);
      }
      const refutations = sample(texts[members.indexOf(target)]!,
        'conclave_gossip_refutations_total');
      t.diagnostic(`${target.name} refuted ${refutations} times; leader ${leader.id} `
        + `generation ${leader.generation} kept`);
    });

    test('a burst of forged joins is answered at the bucket\'s rate only; no forged joiner '
      + 'enters a view', async (t) => {
      const members = plain;
      const flooded = members.find((m) => m.name === 'm5')!;
      const floodedAtMs = performance.now();
      await floodJoins(flooded, (to, bytes) => forger.send(to, bytes));
      const floodMs = performance.now() - floodedAtMs;
      const budget = BURST_MAX + Math.ceil((PER_SECOND_MAX * floodMs) / 1000) + 1;
      // The joins answered within the budget are forgotten when their joiners never speak
      // again (two join timeouts): counted in joins_unconfirmed_total.
      const unconfirmed = async (): Promise<number> =>
        sample(await scrape(flooded), 'conclave_gossip_joins_unconfirmed_total');
      await waitUntil(async () => await unconfirmed() >= 1, loadedDeadlineMs(DEATH_BOUND_MS),
        () => `m5 forgot the forged joiners\n${views(members)}`);
      await agreeOnLive(members, loadedDeadlineMs(DEATH_BOUND_MS));
      const admitted = await unconfirmed();
      assert.ok(admitted >= 1 && admitted <= budget,
        `${admitted} forged joins answered in ${floodMs.toFixed(0)} ms (budget ${budget})`);
      for (const m of members) {
        assert.ok(!m.lines.some((l) => l.kind === 'joined' && l.member?.startsWith('forged-')),
          `${m.name} took a forged joiner into its view`);
      }
      const floodText = await scrape(flooded);
      assert.ok(rejected(floodText, 'admission-rate') >= FORGED_JOINS - budget,
        `admission-rate ${rejected(floodText, 'admission-rate')}`);
      t.diagnostic(`${admitted} of ${FORGED_JOINS} forged joins answered in `
        + `${floodMs.toFixed(0)} ms (burst ${BURST_MAX}, ${PER_SECOND_MAX}/s)`);
    });

    // Before the forged joiners were kept out of every view until they spoke again (they never
    // do: swim-member.ts, `answerStranger`), they counted in the stable set at once, and when
    // they died five live of fifteen was no majority: leaderless for good.
    test('after the join flood the cluster keeps its leader', async (t) => {
      try {
        const stable = (text: string, live: string): number =>
          sample(text, 'conclave_gossip_stable_members', { live });
        const texts = await Promise.all(plain.map(scrape));
        t.diagnostic(`stable membership (live/all): ${texts.map((text) =>
          `${stable(text, 'true')}/${stable(text, 'true') + stable(text, 'false')}`).join(' ')}`);
        // The floor deadline: far above the stable-after time (5 s) and a claim round.
        await settled(plain, DEADLINE_FLOOR_MS);
        for (const m of plain) assert.equal(m.leader?.id, leaderBefore?.id);
      } finally {
        cluster.killAll();
      }
    });

    test('with --encrypt-key-file: every forged datagram is refused by the keyring, nothing '
      + 'changes', async () => {
      const keyFile = join(keyDir, 'gossip.key');
      writeFileSync(keyFile, `${generateGossipKey()}\n`, { mode: 0o600 });
      const members = await cluster.launchCluster(NAMES,
        [...MEMBER_ARGS, '--encrypt-key-file', keyFile]);
      await settled(members, loadedDeadlineMs(DEATH_BOUND_MS));
      const leaderBefore = members[0]!.leader!;
      const before = await Promise.all(members.map(scrape));
      const sentBefore = members.map((m) => forger.sentTo(m));
      const otherKey = new GossipKeyring([Buffer.from(generateGossipKey(), 'base64')]);
      const send: Send = async (to, bytes) => {
        await forger.send(to, bytes);
        await forger.send(to, otherKey.seal(bytes, 'udp'));
      };
      await forgeNews(members, leaderBefore.id, send);
      await floodJoins(members.find((m) => m.name === 'm5')!, send);
      // Refused by the keyring, or (the 9,000-byte noise) by size before any opening.
      const failures = (text: string): number =>
        sample(text, 'conclave_gossip_keyring_failures_total', { channel: 'datagram' })
        + sample(text, 'conclave_gossip_datagrams_dropped_total', { reason: 'too-large' });
      await waitUntil(async () => (await Promise.all(members.map(scrape))).every((text, i) =>
        failures(text) - failures(before[i]!) >= forger.sentTo(members[i]!) - sentBefore[i]!),
      loadedDeadlineMs(1000), () => `every forged datagram counted\n${views(members)}`);
      const afterTexts = await Promise.all(members.map(scrape));
      for (const [i, text] of afterTexts.entries()) {
        const m = members[i]!;
        const reason = (r: string): number => sample(text, 'conclave_gossip_keyring_failures_total',
          { channel: 'datagram', reason: r })
          - sample(before[i]!, 'conclave_gossip_keyring_failures_total',
            { channel: 'datagram', reason: r });
        assert.ok(reason('unencrypted') >= 1 && reason('unknown-key') >= 1, m.name);
        for (const name of ['out-of-range', 'incarnation-jump', 'older-than-leader',
          'admission-rate']) {
          assert.equal(rejected(text, name), rejected(before[i]!, name), `${m.name} ${name}`);
        }
        assert.equal(sample(text, 'conclave_gossip_claims_rejected_total'),
          sample(before[i]!, 'conclave_gossip_claims_rejected_total'), `${m.name} claims`);
        assert.ok(!m.lines.some((l) => l.member?.startsWith('forged-')
          || l.member === 'evil-elder'), `${m.name} admitted a forger`);
      }
      await settled(members, loadedDeadlineMs(DEATH_BOUND_MS));
      for (const m of members) assert.deepEqual(m.leader, leaderBefore);
    });
  });
