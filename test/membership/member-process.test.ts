/**
 * membership: real processes — five `conclave gossip --json` processes (the built CLI, as users
 * run it) on loopback over UDP and TCP, LOCAL profile. They agree on the oldest as leader; kill -9
 * of the oldest makes every survivor agree on the next oldest, at a higher generation, without
 * declaring any survivor dead; SIGTERM makes a member leave gracefully and exit 0.
 * Method: real time, but every wait is a condition with a deadline, read from the members'
 * JSON lines on stdout; detection and agreement times are reported as test diagnostics. The
 * deadlines come from SWIM's own bounds, sized for a loaded machine (test/support/deadlines.ts).
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { SWIM_DEFAULTS_LOCAL, swimDeathDeclarationBoundMs } from '../../src/core/swim/index.js';
import { deadlineMs as loadedDeadlineMs } from '../support/deadlines.js';
import {
  MemberProcesses, oldest, views, waitUntil, type MemberLine as Line, type MemberProcess,
} from '../support/member-processes.js';
import { BUILT } from '../support/real-cluster.js';

/** The death-declaration bound of the LOCAL profile for 5 members, with no loss. Unit: ms. */
const DEATH_BOUND_MS = swimDeathDeclarationBoundMs(SWIM_DEFAULTS_LOCAL, 5);

const cluster = new MemberProcesses('member-process-test');
after(() => cluster.killAll());
const launch = (name: string, seeds: readonly string[]): Promise<MemberProcess> =>
  cluster.launch(name, seeds);

const msSince = (wallMs: number, line: Line | undefined): number =>
  line === undefined ? NaN : Date.parse(line.time) - wallMs;

describe('membership: real processes', { skip: BUILT ? false : 'dist/ not built (npm ci builds it)' },
  () => {
    test('kill -9 of the oldest: all four survivors agree on the next oldest, generation up',
      async (t) => {
        const first = await launch('m1', []);
        const seed = first.address!;
        const members = [first];
        for (const name of ['m2', 'm3', 'm4', 'm5']) members.push(await launch(name, [seed]));
        const names = members.map((m) => m.name);
        const leaderBefore = oldest(members[1]!, names);
        await waitUntil(() => members.every((m) => m.leader?.id === leaderBefore),
          loadedDeadlineMs(DEATH_BOUND_MS),
          () => `all five follow ${leaderBefore}\n${views(members)}`);
        const generationBefore = members[0]!.leader!.generation;
        assert.ok(members.every((m) => m.leader?.generation === generationBefore));

        const victim = members.find((m) => m.name === leaderBefore)!;
        const survivors = members.filter((m) => m !== victim);
        const next = oldest(survivors[0]!, survivors.map((m) => m.name));
        const linesBefore = new Map(survivors.map((m) => [m, m.lines.length]));
        const killedAtWallMs = Date.now();
        victim.kill('SIGKILL');
        // Detection bound with no loss (swimDeathDeclarationBoundMs), sized for a loaded machine.
        const deadlineMs = loadedDeadlineMs(DEATH_BOUND_MS);
        await waitUntil(() => survivors.every((m) => m.leader?.id === next
          && m.leader.generation > generationBefore), deadlineMs,
        () => `survivors follow ${next} above generation ${generationBefore}\n${views(survivors)}`);

        const since = (m: MemberProcess): Line[] => m.lines.slice(linesBefore.get(m));
        const generations = new Set(survivors.map((m) => m.leader!.generation));
        assert.equal(generations.size, 1, `survivors disagree: ${views(survivors)}`);
        for (const m of survivors) {
          const changes = since(m).filter((l) => l.kind === 'leader-changed');
          assert.ok(changes.some((l) => l.reason === 'oldest-died'),
            `${m.name} saw ${JSON.stringify(changes)}`);
          const deaths = since(m).filter((l) => l.kind === 'dead').map((l) => l.member);
          assert.deepEqual([...new Set(deaths)], [victim.name], `${m.name} declared ${deaths}`);
        }
        const firstOf = (kind: string): Line | undefined => survivors
          .flatMap((m) => since(m).filter((l) => l.kind === kind && l.member === victim.name))
          .sort((a, b) => Date.parse(a.time) - Date.parse(b.time))[0];
        const agreedMs = Math.max(...survivors.map((m) => msSince(killedAtWallMs,
          since(m).filter((l) => l.kind === 'leader-changed').at(-1))));
        t.diagnostic(`generation ${generationBefore} -> ${[...generations][0]}; `
          + `first suspect after ${msSince(killedAtWallMs, firstOf('suspect'))} ms, first dead `
          + `after ${msSince(killedAtWallMs, firstOf('dead'))} ms, all four agree on ${next} `
          + `after ${agreedMs} ms (bound ${deadlineMs} ms)`);

        // SIGTERM: a graceful leave, exit 0; the others see 'left', never 'dead'.
        const leaver = survivors.at(-1)!;
        const stayers = survivors.filter((m) => m !== leaver);
        leaver.kill('SIGTERM');
        await waitUntil(() => leaver.exit !== undefined && stayers.every((m) => m.lines.some(
          (l) => l.kind === 'left' && l.member === leaver.name)), loadedDeadlineMs(DEATH_BOUND_MS),
        () => `${leaver.name} left\n${views(survivors)}`);
        assert.deepEqual(leaver.exit, { code: 0, signal: null });
        for (const m of stayers) {
          assert.ok(!m.lines.some((l) => l.kind === 'dead' && l.member === leaver.name));
          assert.equal(m.leader?.id, next);
        }
      });
  });
