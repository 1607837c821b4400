/**
 * Progress of a long `conclave sim` run on a terminal: seeds done of all, violations so far,
 * and an ETA, as one bar (cli-progress) on stderr. Silent when stderr is not a TTY, and with
 * --json (the caller decides), so logs and pipes stay clean.
 */
import { SingleBar } from 'cli-progress';

export interface SimProgress {
  /** True while the bar shows (per-seed ok lines are then left out: the bar counts them). */
  readonly active: boolean;
  seedDone(failed: boolean): void;
  stop(): void;
}

const SILENT: SimProgress = { active: false, seedDone: () => undefined, stop: () => undefined };

export function simProgress(total: number, enabled: boolean): SimProgress {
  if (!enabled || total < 2 || process.stderr.isTTY !== true) return SILENT;
  const bar = new SingleBar({
    format: 'seeds {value}/{total} [{bar}] {percentage}% · violations {violations} · ' +
      'ETA {eta_formatted}',
    stream: process.stderr, hideCursor: true, clearOnComplete: true, etaBuffer: 50,
    fps: 5,
  });
  let violations = 0;
  bar.start(total, 0, { violations });
  return {
    active: true,
    seedDone: (failed) => {
      if (failed) violations++;
      bar.increment(1, { violations });
    },
    stop: () => bar.stop(),
  };
}
