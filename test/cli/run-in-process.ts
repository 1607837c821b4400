/**
 * The CLI run in this process, as tests drive it: `runCli` with its lines collected, and an
 * empty, non-terminal stdin whatever the test runner's own stdin is (a never-closed pipe would
 * keep `kv put KEY` waiting for its value).
 */
import { runCli } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';

export interface CliRun {
  readonly code: number;
  readonly out: string[];
  readonly err: string[];
}

export async function runCliInProcess(args: string[]): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (l) => out.push(l), err: (l) => err.push(l), exitCode: 0,
    stdinIsTty: false, readStdin: () => Promise.resolve('') };
  const code = await runCli(args, io);
  return { code, out, err };
}
