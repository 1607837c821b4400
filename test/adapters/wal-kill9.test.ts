/**
 * wal: kill -9. Goal: on a real disk, a process killed at any moment loses no record it had
 * reported synced, and its log reopens intact. Method: a child process (wal-crash-child.ts)
 * appends through FileStorage and prints each completed sync; the parent kills it with SIGKILL
 * after a seeded random delay, restarts it, and checks that the recovered log reaches every
 * index reported synced, that the hard state is no older, and that every entry holds the data
 * derived from its index and term (the child checks contents; the parent checks again at the
 * end, in-process). Real time is used only for the kill delays; every wait has a deadline.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { FileStorage } from '../../src/adapters/file-storage.js';
import { randomInt } from '../../src/core/random.js';
import { openWal } from '../../src/runtime/wal/wal.js';
import { Prng } from '../../src/sim/prng.js';
import { deadlineMs, PROCESS_START_MS_IDLE } from '../support/deadlines.js';
import { compileForNode } from './compile-for-node.js';
import { CHILD_WAL_CONFIG, firstBadEntry } from './wal-crash-child.js';

const CYCLES = 50;
const SEED = 20_240_917;
/** Kill delay after the child reports its recovery. Unit: ms. */
const KILL_DELAY_MS_MAX = 100;
/** How long a child may take to start and recover before the test fails (deadlines.ts). Unit: ms. */
const START_WAIT_MS_MAX = deadlineMs(PROCESS_START_MS_IDLE);
/** A backstop only: every wait inside has its own deadline, and there are 2 per life. */
const TIMEOUT = { timeout: (CYCLES + 2) * 2 * START_WAIT_MS_MAX };
const CHILD = fileURLToPath(new URL('./wal-crash-child.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Life {
  readonly child: ChildProcess;
  /** Resolves with the recovered line's numbers once it is printed. */
  readonly recovered: Promise<{ lastIndex: number; hardStateTerm: number; commitIndex: number }>;
  /** Resolves when the child is gone and all of its output has been read. */
  readonly closed: Promise<void>;
  /** The highest index the child reported synced so far. */
  syncedIndex: number;
  readonly problems: string[];
}

function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing after ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

function startLife(childScript: string, directory: string, life: number): Life {
  const child = spawn(process.execPath, [childScript, directory, String(life)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let resolveRecovered: (value: Awaited<Life['recovered']>) => void = () => undefined;
  const recovered = new Promise<Awaited<Life['recovered']>>((resolve) => {
    resolveRecovered = resolve;
  });
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const state: Life = { child, recovered, closed, syncedIndex: 0, problems: [] };
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.on('close', (code, signal) => {
    if (signal !== 'SIGKILL') {
      state.problems.push(`child ${life} exited ${code}/${signal}: ${stderr}`);
    }
  });
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const [word, ...rest] = line.split(' ');
    if (word === 'synced') state.syncedIndex = Math.max(state.syncedIndex, Number(rest[0]));
    else if (word === 'recovered') {
      const [lastIndex, hardStateTerm, commitIndex] = rest.map(Number);
      resolveRecovered({
        lastIndex: lastIndex!, hardStateTerm: hardStateTerm!, commitIndex: commitIndex!,
      });
    } else state.problems.push(`child ${life}: ${line}`);
  });
  return state;
}

describe('wal: kill -9 (real files, real processes)', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'conclave-wal-kill9-'));
  const directory = join(scratch, 'wal');
  let childScript = '';
  let current: Life | undefined;
  before(() => {
    childScript = compileForNode(CHILD, ROOT, join(scratch, 'build'));
  });
  after(() => {
    if (current !== undefined && current.child.exitCode === null) current.child.kill('SIGKILL');
    rmSync(scratch, { recursive: true, force: true });
  });

  test(`no synced record is lost over ${CYCLES} kill -9 cycles`, TIMEOUT, async (t) => {
    const prng = new Prng(SEED);
    let syncedIndex = 0;
    let syncedTerm = 0;
    let killedWithSyncs = 0;
    for (let life = 1; life <= CYCLES + 1; life++) {
      current = startLife(childScript, directory, life);
      const recovered = await withDeadline(
        Promise.race([current.recovered, current.closed.then(() => {
          throw new Error(`child ${life} ended before recovering: ${current?.problems.join('; ')}`);
        })]),
        START_WAIT_MS_MAX, `child ${life} recovery`);
      assert.ok(recovered.lastIndex >= syncedIndex,
        `life ${life}: recovered ${recovered.lastIndex} < synced ${syncedIndex}`);
      assert.ok(recovered.hardStateTerm >= syncedTerm,
        `life ${life}: hard state term ${recovered.hardStateTerm} < synced ${syncedTerm}`);
      if (life > CYCLES) break; // the last life only checks what the previous one left
      const killDelayMs = randomInt(prng, 0, KILL_DELAY_MS_MAX + 1);
      await new Promise((resolve) => setTimeout(resolve, killDelayMs));
      current.child.kill('SIGKILL');
      await withDeadline(current.closed, START_WAIT_MS_MAX, `child ${life} exit`);
      assert.deepEqual(current.problems, []);
      if (current.syncedIndex > 0) {
        killedWithSyncs++;
        syncedTerm = life;
      }
      syncedIndex = Math.max(syncedIndex, current.syncedIndex);
    }
    const last = current;
    assert.ok(last !== undefined);
    last.child.kill('SIGKILL');
    await withDeadline(last.closed, START_WAIT_MS_MAX, 'last child exit');
    assert.ok(killedWithSyncs >= CYCLES / 2, `only ${killedWithSyncs} lives synced anything`);
    assert.ok(syncedIndex > 1000, `only ${syncedIndex} entries synced in ${CYCLES} lives`);
    const storage = new FileStorage(directory);
    const opened = openWal(storage, CHILD_WAL_CONFIG);
    assert.ok('wal' in opened, 'error' in opened ? opened.error.message : '');
    assert.ok(opened.wal.lastIndex() >= syncedIndex);
    assert.equal(firstBadEntry(opened.wal.recovered.entries), undefined);
    // The recovery sync (and its manifest claim) finishes before the storage closes.
    await new Promise((resolve) => opened.wal.sync(resolve));
    storage.close();
    t.diagnostic(`${CYCLES} kills; ${killedWithSyncs} lives had reported syncs; ` +
      `${syncedIndex} entries reported synced, ${opened.wal.lastIndex()} recovered`);
  });
});
