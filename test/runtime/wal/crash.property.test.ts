/**
 * wal: crash recovery, as a property. Goal: whatever the sequence of appends (with suffix
 * replacements), hard states, syncs, partial progress of the disk and crashes, the WAL reopens
 * to a state that (1) some prefix of the staged writes produced, (2) is no older than the last
 * completed sync, so every synced entry and hard state survives, and (3) is a Raft log
 * (consecutive indexes, commit index within it).
 * Method: fast-check generates the operations; a model records every state the staged writes
 * pass through (after each truncate and each entry, so every record boundary is among them),
 * and where the last completed sync stood. SimStorage loses or tears unsynced bytes at random
 * (the manifest's claims too: they are never synced on their own).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { logIndex, nodeId, term } from '../../../src/core/ids.js';
import type { Entry, HardState } from '../../../src/core/raft/types.js';
import { openWal, type Wal } from '../../../src/runtime/wal/wal.js';
import type { RecoveredRaftState } from '../../../src/runtime/raft-storage.js';
import { SMALL_WAL, dataFor, describeLog, simDisk, type SimDisk } from './wal-harness.js';

type Op =
  | { kind: 'append'; back: number; count: number; size: number }
  | { kind: 'hard-state'; newTerm: boolean; vote: number; commitAdvance: number }
  | { kind: 'sync' }
  | { kind: 'step'; events: number }
  /**
   * `inFlight`: sync first, so the crash hits a batch the disk has not finished. `settle`: let
   * the recovery sync finish after reopening (else later syncs queue behind it).
   */
  | { kind: 'crash'; inFlight: boolean; settle: boolean };

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('append' as const),
    back: fc.oneof(
      { weight: 3, arbitrary: fc.constant(0) },
      { weight: 1, arbitrary: fc.nat({ max: 4 }) },
    ),
    count: fc.integer({ min: 1, max: 4 }), size: fc.nat({ max: 150 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('hard-state' as const),
    newTerm: fc.boolean(), vote: fc.nat({ max: 2 }), commitAdvance: fc.nat({ max: 3 }) }) },
  { weight: 3, arbitrary: fc.constant({ kind: 'sync' as const }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('step' as const),
    events: fc.integer({ min: 1, max: 6 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('crash' as const),
    inFlight: fc.boolean(), settle: fc.boolean() }) },
);

const stateKey = (log: readonly Entry[], { term: t, vote, commitIndex }: HardState): string =>
  `${describeLog(log).join(',')}#${t}/${vote ?? '-'}/${commitIndex}`;

/** Runs `ops` against the WAL and the model; throws on the first broken property. */
class CrashRun {
  private readonly disk: SimDisk;
  private wal: Wal;
  private generation = 0;
  private log: Entry[] = [];
  private hardState: HardState;
  /** Keys of every state the staged writes passed through, oldest first. */
  private history: string[];
  /** Position in `history` covered by the latest completed sync. */
  private floor = 0;
  private salt = 0;

  constructor(seed: number) {
    this.disk = simDisk(seed, { syncLatencyMs: 0.15, unsyncedSurvivalRate: 0.8 });
    this.wal = this.open(false);
    // The first open creates the manifest; once that is durable, every reopen requires it (as
    // the server's data dir does), so a false "records lost" refusal fails the property.
    let created = false;
    this.wal.sync(() => (created = true));
    while (!created && this.disk.scheduler.step()) { /* virtual time passes */ }
    assert.ok(created, 'the first open never synced');
    this.hardState = this.wal.recovered.hardState;
    this.history = [stateKey(this.log, this.hardState)];
  }

  apply(op: Op): void {
    switch (op.kind) {
      case 'append': return this.append(op.back, op.count, op.size);
      case 'hard-state': return this.saveHardState(op.newTerm, op.vote, op.commitAdvance);
      case 'sync': return this.sync();
      case 'step':
        for (let i = 0; i < op.events; i++) this.disk.scheduler.step();
        return;
      case 'crash':
        if (op.inFlight) this.sync();
        this.crash();
        if (op.settle) while (this.disk.scheduler.step()) { /* recovery sync completes */ }
        return;
    }
  }

  /** Syncs everything, checks the WAL agrees, crashes, and expects the exact last state. */
  finish(): void {
    this.sync();
    while (this.disk.scheduler.step()) { /* run every event */ }
    assert.equal(this.floor, this.history.length - 1, 'the final sync did not complete');
    assert.equal(this.wal.lastIndex(), this.log.length);
    this.crash();
    assert.equal(this.history.length - 1, this.floor);
  }

  private append(back: number, count: number, size: number): void {
    const lastIndex = this.log.length;
    const first = Math.max(lastIndex + 1 - back, this.hardState.commitIndex + 1);
    const entryTerm = Math.max(this.hardState.term, 1);
    const batch: Entry[] = [];
    for (let i = 0; i < count; i++) {
      const index = first + i;
      batch.push({ index: logIndex(index), term: term(entryTerm), kind: 'normal',
        data: dataFor(index, entryTerm, size, this.salt++) });
    }
    this.wal.append(batch);
    if (first <= lastIndex) {
      this.log = this.log.slice(0, first - 1);
      this.record();
    }
    for (const e of batch) {
      this.log.push(e);
      this.record();
    }
  }

  private saveHardState(newTerm: boolean, vote: number, commitAdvance: number): void {
    const candidate = vote === 0 ? undefined : nodeId(`n${vote}`);
    const next: HardState = {
      term: term(this.hardState.term + (newTerm ? 1 : 0)),
      vote: newTerm ? candidate : this.hardState.vote ?? candidate,
      commitIndex: logIndex(Math.min(this.log.length, this.hardState.commitIndex + commitAdvance)),
    };
    this.wal.saveHardState(next);
    this.hardState = next;
    this.record();
  }

  private sync(): void {
    const position = this.history.length - 1;
    const generation = this.generation;
    this.wal.sync((error) => {
      assert.equal(generation, this.generation, 'a sync called back across a crash');
      assert.equal(error, undefined);
      this.floor = Math.max(this.floor, position);
    });
  }

  private crash(): void {
    this.disk.storage.crash();
    this.generation++;
    this.wal = this.open();
    const recovered = this.wal.recovered;
    checkRaftLog(recovered);
    const key = stateKey(recovered.entries, recovered.hardState);
    // The same state can recur (a replacement by equal entries); the disk may be at any of them,
    // so keep the history up to the latest, and every earlier candidate stays allowed.
    const at = this.history.lastIndexOf(key);
    assert.ok(at >= this.floor, 'recovered a state older than the last sync, or never ' +
      `staged:\n${key}\nlast synced:\n${this.history[this.floor]}`);
    this.history = this.history.slice(0, at + 1);
    this.log = [...recovered.entries];
    this.hardState = recovered.hardState;
    assert.equal(this.wal.lastIndex(), this.log.length);
  }

  private open(requireManifest = true): Wal {
    const opened = openWal(this.disk.storage, SMALL_WAL, { requireManifest });
    if ('error' in opened) assert.fail(`recovery refused after a crash: ${opened.error.message}`);
    return opened.wal;
  }

  private record(): void {
    this.history.push(stateKey(this.log, this.hardState));
  }
}

function checkRaftLog(state: RecoveredRaftState): void {
  state.entries.forEach((e, i) => assert.equal(e.index, i + 1, 'indexes are not consecutive'));
  assert.ok(state.hardState.commitIndex <= state.entries.length, 'commit index past the log');
}

describe('wal: crash recovery (property)', () => {
  test('after any crash the log holds every synced write and a prefix of the staged ones', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 0xffff_ffff }),
        fc.array(opArbitrary, { minLength: 20, maxLength: 120 }),
        (seed, ops) => {
          const run = new CrashRun(seed);
          for (const op of ops) run.apply(op);
          run.finish();
        },
      ),
      { numRuns: 300, includeErrorInReport: true },
    );
  });
});
