/**
 * One `conclave` CLI process for real-process tests, started from source (conclave-from-source.ts
 * through tsx): its stdout and stderr as timestamped lines, waits for a line or the exit with a
 * deadline, signals. `stopAll()` SIGKILLs every process still running. Not a test file itself.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ENTRY = fileURLToPath(new URL('./conclave-from-source.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Line {
  readonly text: string;
  /** When the test process read it, on its monotonic clock. Unit: ms. */
  readonly atMs: number;
}

const running = new Set<CliProcess>();

export class CliProcess {
  readonly stdout: Line[] = [];
  readonly stderr: Line[] = [];
  readonly child: ChildProcess;
  private readonly exit: Promise<number | null>;

  /** `entry`: the script run through tsx (default: the CLI from source). */
  constructor(args: readonly string[], entry = ENTRY) {
    this.child = spawn(process.execPath, ['--import', 'tsx', entry, ...args],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    collect(this.child.stdout, this.stdout);
    collect(this.child.stderr, this.stderr);
    running.add(this);
    this.exit = new Promise((resolve) => this.child.once('exit', (code, signal) => {
      running.delete(this);
      resolve(signal === null ? code : null);
    }));
  }

  /** The first line on `stream` matching `pattern`, waiting up to `deadlineMs` for it. */
  async line(pattern: RegExp, deadlineMs: number, stream: 'stdout' | 'stderr' = 'stdout'):
    Promise<Line> {
    const lines = this[stream];
    const end = performance.now() + deadlineMs;
    for (;;) {
      const found = lines.find((l) => pattern.test(l.text));
      if (found !== undefined) return found;
      if (performance.now() > end) {
        throw new Error(`no ${stream} line matching ${String(pattern)} within ${deadlineMs} ms; `
          + `stdout: ${this.text('stdout')}; stderr: ${this.text('stderr')}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** The exit code (null when ended by a signal), waiting up to `deadlineMs`. */
  async exited(deadlineMs: number): Promise<number | null> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`still running after ${deadlineMs} ms; stderr: `
        + this.text('stderr'))), deadlineMs);
    });
    try {
      return await Promise.race([this.exit, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  text(stream: 'stdout' | 'stderr'): string {
    return this[stream].map((l) => l.text).join('\n');
  }
}

/** SIGKILLs every CLI process still running (SIGCONT first, for a stopped one). */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map(async (p) => {
    p.signal('SIGCONT');
    p.signal('SIGKILL');
    await p.exited(5000).catch(() => undefined);
  }));
}

function collect(stream: NodeJS.ReadableStream | null, into: Line[]): void {
  let partial = '';
  stream?.setEncoding('utf8');
  stream?.on('data', (chunk: string) => {
    const atMs = performance.now();
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    for (const text of parts) into.push({ text, atMs });
  });
}
