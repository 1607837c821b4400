/**
 * Progress of a bench run: on a terminal, one bar (cli-progress, on stderr) with the suite in
 * progress, its measured steps done of those it planned, the time spent and an ETA; the
 * harness's lines print above it. Quiet (lines only, no bar) when stderr is not a TTY or with
 * --json, so logs and pipes stay clean. Every step's one-line result is kept, so that Ctrl-C
 * can print the partial summary: the final lines of the suites done, and the steps measured so
 * far of the one in progress.
 */
import { MultiBar, type SingleBar } from 'cli-progress';

export interface BenchProgress {
  /** The suite in progress plans `steps` measured steps (a window, a kill, a level). */
  plan(steps: number): void;
  /** One measured step is done; `result` is its line (printed, and kept for Ctrl-C). */
  step(result: string): void;
}

/** What the harness drives: suites start and end; lines print above the bar. */
export class RunProgress implements BenchProgress {
  private readonly bars: MultiBar | undefined;
  private bar: SingleBar | undefined;
  private suite = '';
  private suitesDone = 0;
  private readonly finalLines: string[] = [];
  private steps: string[] = [];

  constructor(private readonly suiteCount: number, enabled: boolean) {
    this.bars = enabled && process.stderr.isTTY === true ? new MultiBar({
      format: 'bench {suite} ({suiteNumber}/{suites}) [{bar}] {value}/{total} steps · ' +
        '{duration_formatted} · ETA {eta_formatted}',
      stream: process.stderr, hideCursor: true, clearOnComplete: true, etaBuffer: 4, fps: 2,
    }) : undefined;
  }

  /** A progress line: above the bar when it shows, else plainly on stderr. */
  say(line: string): void {
    if (this.bars !== undefined) this.bars.log(`${line}\n`);
    else process.stderr.write(`${line}\n`);
  }

  startSuite(name: string): void {
    this.suite = name;
    this.steps = [];
    this.bar?.stop();
    this.bar = this.bars?.create(1, 0, this.payload());
  }

  plan(steps: number): void {
    this.bar?.setTotal(Math.max(1, steps));
  }

  step(result: string): void {
    this.say(`bench: ${result}`);
    this.steps.push(result);
    // A suite that planned fewer steps than it measures (or none) grows its bar.
    if (this.bar !== undefined && this.steps.length > this.bar.getTotal()) {
      this.bar.setTotal(this.steps.length);
    }
    this.bar?.increment(1, this.payload());
  }

  endSuite(finalLine: string): void {
    this.finalLines.push(finalLine);
    this.suitesDone++;
    this.steps = [];
    if (this.bar !== undefined) this.bars?.remove(this.bar);
    this.bar = undefined;
  }

  stop(): void {
    this.bars?.stop();
  }

  /** What Ctrl-C prints (stdout): the suites done, then what the one in progress measured. */
  partialSummary(): string[] {
    const lines = [`interrupted: ${this.suitesDone} of ${this.suiteCount} suites done`,
      ...this.finalLines];
    if (this.suite !== '' && this.suitesDone < this.suiteCount) {
      lines.push(`${this.suite} (interrupted): ${this.steps.length === 0 ? 'nothing measured yet'
        : `${this.steps.length} steps measured:`}`, ...this.steps.map((s) => `  ${s}`));
    }
    return lines;
  }

  private payload(): Record<string, string | number> {
    return { suite: this.suite, suiteNumber: this.suitesDone + 1, suites: this.suiteCount };
  }
}
