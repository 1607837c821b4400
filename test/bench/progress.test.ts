/**
 * bench: the run's progress keeps what Ctrl-C must print (the final lines of the suites done,
 * then the steps measured so far of the one in progress), and the dashboard suite reads the
 * longest main-thread task of the page's renderer out of a Chromium trace.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RunProgress } from '../../bench/lib/progress.js';
import { mainThreadTasks } from '../../bench/suites/dashboard-page.js';

describe('bench: progress and partial summary', () => {
  test('Ctrl-C\'s partial summary: suites done, then the steps of the one in progress', () => {
    // Not a terminal here (stderr is a pipe under the test runner): lines only, no bar.
    const progress = new RunProgress(3, true);
    progress.startSuite('put');
    progress.plan(2);
    progress.step('put: conclave 1 in flight: 900 ops/s');
    progress.step('put: conclave 64 in flight: 9000 ops/s');
    progress.endSuite('put (1/64 in flight): ops/s conclave 900/9000');
    progress.startSuite('read');
    progress.step('read: conclave linearizable 1 in flight: 2000 ops/s');
    progress.stop();
    assert.deepEqual(progress.partialSummary(), [
      'interrupted: 1 of 3 suites done',
      'put (1/64 in flight): ops/s conclave 900/9000',
      'read (interrupted): 1 steps measured:',
      '  read: conclave linearizable 1 in flight: 2000 ops/s',
    ]);
  });

  test('a suite interrupted before its first step says so', () => {
    const progress = new RunProgress(1, false);
    progress.startSuite('idle');
    assert.deepEqual(progress.partialSummary(),
      ['interrupted: 0 of 1 suites done', 'idle (interrupted): nothing measured yet']);
  });
});

describe('bench: dashboard: the page\'s tasks from a Chromium trace', () => {
  test('only the renderer main thread\'s RunTask events count, by wall and by CPU time', () => {
    const trace = { traceEvents: [
      { name: 'thread_name', ph: 'M', pid: 7, tid: 1, ts: 0, args: { name: 'CrRendererMain' } },
      { name: 'thread_name', ph: 'M', pid: 7, tid: 2, ts: 0, args: { name: 'Compositor' } },
      { name: 'RunTask', ph: 'X', pid: 7, tid: 1, ts: 0, dur: 12_000, tdur: 11_000 },
      // 130 ms of wall time, of which the renderer ran 40 ms (descheduled the rest).
      { name: 'RunTask', ph: 'X', pid: 7, tid: 1, ts: 100_000, dur: 130_400, tdur: 40_000 },
      { name: 'Layout', ph: 'X', pid: 7, tid: 1, ts: 110_000, dur: 30_000 },
      { name: 'FunctionCall', ph: 'X', pid: 7, tid: 1, ts: 150_000, dur: 70_000 },
      { name: 'RunTask', ph: 'X', pid: 7, tid: 1, ts: 300_000, dur: 60_000, tdur: 59_000 },
      // Another thread's long task is not the page's.
      { name: 'RunTask', ph: 'X', pid: 7, tid: 2, ts: 0, dur: 900_000, tdur: 900_000 },
    ] };
    assert.deepEqual(mainThreadTasks(trace), {
      tasks: 3, tasksOver50Ms: 2, tasksOverStallMs: 1, tasksOverStallMsByCpu: 0,
      longestTaskMs: 130, longestTaskCpuMs: 59,
      insideLongTasksMs: { FunctionCall: 70, Layout: 30 },
    });
  });
});
