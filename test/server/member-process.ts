/**
 * One `conclave server` process (the built bin) for the data-dir and fatal-exit tests: spawned
 * on a data dir with chosen ports, its stderr kept, its first non-log stderr line (the one-line
 * refusal or fatal message; pino's log lines are JSON) timestamped, and its exit awaited with a
 * deadline. `stopAllMembers()` SIGKILLs every process still running. Not a test file itself.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { BIN } from '../support/real-cluster.js';
export { freePort } from '../support/ports.js';

export interface MemberExit {
  /** Exit code; null when ended by a signal. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
  /** The one line the process said why it stopped (the first stderr line that is not JSON). */
  readonly line: string | undefined;
  /** From reading that line to seeing the process gone. Unit: ms. */
  readonly lineToExitMs: number | undefined;
  /** From spawn to exit. Unit: ms. */
  readonly spawnToExitMs: number;
}

export interface MemberSpec {
  readonly name: string;
  readonly dataDir: string;
  readonly peerPort: number;
  readonly clientPort: number;
  /** `--cluster`; default: this member alone. */
  readonly cluster?: string;
  readonly extraArgs?: readonly string[];
  /** Run through this command first (e.g. unshare for a private tmpfs): argv before node. */
  readonly wrapper?: readonly string[];
  readonly spawnOptions?: SpawnOptions;
}

const running = new Set<ChildProcess>();

export class MemberProcess {
  readonly child: ChildProcess;
  stderr = '';
  private line: { text: string; atMs: number } | undefined;
  private readonly startMs = performance.now();
  private readonly exit: Promise<MemberExit>;

  constructor(readonly spec: MemberSpec) {
    const args = [BIN, 'server', '--name', spec.name, '--data-dir', spec.dataDir,
      '--peer-addr', `127.0.0.1:${spec.peerPort}`, '--client-addr', `127.0.0.1:${spec.clientPort}`,
      '--cluster', spec.cluster ?? `${spec.name}=127.0.0.1:${spec.peerPort}`,
      '--heartbeat-ms', '50', '--election-timeout-ms', '500', '--log-level', 'warn',
      ...(spec.extraArgs ?? [])];
    const [command, ...prefix] = [...(spec.wrapper ?? []), process.execPath];
    this.child = spawn(command!, [...prefix, ...args],
      { ...spec.spawnOptions, stdio: ['ignore', 'ignore', 'pipe'] });
    running.add(this.child);
    this.child.stderr!.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString();
      if (this.line === undefined) {
        const text = this.stderr.split('\n').slice(0, -1).find((l) => !l.startsWith('{'));
        if (text !== undefined) this.line = { text, atMs: performance.now() };
      }
    });
    this.exit = new Promise((resolve) => this.child.once('close', (code, signal) => {
      running.delete(this.child);
      const endMs = performance.now();
      resolve({ code, signal, stderr: this.stderr, line: this.line?.text,
        lineToExitMs: this.line === undefined ? undefined : endMs - this.line.atMs,
        spawnToExitMs: endMs - this.startMs });
    }));
  }

  get clientUrl(): string {
    return `http://127.0.0.1:${this.spec.clientPort}`;
  }

  /** The exit, waiting up to `deadlineMs`; fails naming the stderr when it is still running. */
  async exited(deadlineMs: number): Promise<MemberExit> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`still running after ${deadlineMs} ms; ` +
        `stderr: ${this.stderr.slice(-2000)}`)), deadlineMs);
    });
    return Promise.race([this.exit, late]).finally(() => clearTimeout(timer));
  }

  /** Stops it with SIGTERM (a clean stop) and waits for the exit. */
  async stop(deadlineMs: number): Promise<MemberExit> {
    this.child.kill('SIGTERM');
    return this.exited(deadlineMs);
  }

  async kill9(): Promise<void> {
    this.child.kill('SIGKILL');
    await this.exit;
  }
}

export async function stopAllMembers(): Promise<void> {
  await Promise.all([...running].map((child) => new Promise<void>((resolve) => {
    child.once('close', () => resolve());
    child.kill('SIGKILL');
  })));
}

/** The member's own /v1/status answer: the HTTP status and body, or undefined if unreachable. */
export async function statusOf(clientUrl: string):
  Promise<{ httpStatus: number; body: Record<string, unknown> } | undefined> {
  try {
    const response = await fetch(`${clientUrl}/v1/status`, { signal: AbortSignal.timeout(1000) });
    return { httpStatus: response.status,
      body: (await response.json()) as Record<string, unknown> };
  } catch {
    return undefined;
  }
}

/** Waits until the member is leader of its one-member cluster. */
export async function waitForLeader(clientUrl: string, deadlineMs: number): Promise<void> {
  const end = performance.now() + deadlineMs;
  for (;;) {
    const status = await statusOf(clientUrl);
    if (status?.body['role'] === 'leader') return;
    if (performance.now() > end) throw new Error(`no leader at ${clientUrl} in ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Puts `key` = `value` as `clientId` (each client's sequences must grow: one client id per
 * concurrent writer); whether it applied, and the error code when not.
 */
export async function put(clientUrl: string, key: string, value: string,
  clientId: string, sequence: number, timeoutMs = 10_000): Promise<{ ok: boolean; code?: string }> {
  try {
    const response = await fetch(`${clientUrl}/v1/kv/put`, {
      method: 'POST', signal: AbortSignal.timeout(timeoutMs),
      body: JSON.stringify({ key, value, clientId, sequence }),
    });
    const body = (await response.json()) as { error?: { code?: string } };
    return response.ok ? { ok: true } : { ok: false, code: body.error?.code ?? 'HTTP' };
  } catch (error) {
    return { ok: false, code: (error as { cause?: { code?: string } }).cause?.code ?? 'FETCH' };
  }
}
