/**
 * docs: the code in README.md and docs/ works — the TypeScript blocks compile against the
 * package's own types (tsc, no emit), and the curl lines run against a real `conclave dev`
 * cluster and get 2xx answers. Conventions for writing such blocks: test/docs/snippets.ts.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { clusterDeadlines, deadlineMs, PROCESS_START_MS_IDLE } from '../support/deadlines.js';
import { BIN, BUILT, waitFor } from '../support/real-cluster.js';
import { curlLines, documentationFiles, snippetsOf, type Snippet } from './snippets.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** `conclave dev` at its default timings (heartbeat 100 ms, election timeout 1 s). */
const DEV_DEADLINES = clusterDeadlines({ heartbeatMs: 100, electionTimeoutMs: 1000 });
const all: readonly Snippet[] = documentationFiles(ROOT).flatMap((f) => snippetsOf(ROOT, f));

describe('docs: code blocks', () => {
  test('the conventions find the blocks (the test is not vacuous)', () => {
    assert.ok(all.filter((s) => s.info === 'ts').length >= 10, 'ts blocks found');
    assert.ok(all.flatMap((s) => s.info === 'sh' ? curlLines(s.code) : []).length >= 5,
      'curl lines found');
  });

  test('every ```ts block compiles against the package', () => {
    const blocks = all.filter((s) => s.info === 'ts');
    const dir = mkdtempSync(join(tmpdir(), 'conclave-snippets-'));
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n');
    try {
      const files = blocks.map((s, i) => {
        const file = join(dir, `snippet-${i}.ts`);
        writeFileSync(file, `${s.prelude}\n${s.code}\nexport {};\n`);
        return { file, snippet: s };
      });
      const program = ts.createProgram(files.map((f) => f.file), {
        target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext, strict: true, noEmit: true,
        skipLibCheck: true, types: ['node'], typeRoots: [join(ROOT, 'node_modules/@types')],
        // What a user compiles against: the built declarations (faster than src/, and the same
        // types); src/ when dist/ is not built.
        baseUrl: ROOT, paths: { conclave: [BUILT ? join(ROOT, 'dist/src/index.d.ts')
          : join(ROOT, 'src/index.ts')] },
        allowImportingTsExtensions: true,
      });
      const problems = ts.getPreEmitDiagnostics(program)
        .filter((d) => d.file !== undefined && d.file.fileName.startsWith(dir))
        .map((d) => {
          const at = files.find((f) => f.file === d.file!.fileName)!.snippet.where;
          const { line } = d.file!.getLineAndCharacterOfPosition(d.start ?? 0);
          return `${at} (+${line}): ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
        });
      assert.deepEqual(problems, []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('docs: curl lines against a dev cluster', {
  skip: !BUILT ? 'dist/ not built (npm ci builds it)'
    : spawnSync('curl', ['--version']).status !== 0 ? 'curl is not installed' : false,
}, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'conclave-docs-'));
  let dev: ChildProcess | undefined;
  after(async () => {
    // Ctrl-C, so `conclave dev` stops its members; SIGKILL would leave them running.
    if (dev !== undefined && dev.exitCode === null && dev.signalCode === null) {
      const exited = new Promise((resolve) => dev!.once('exit', resolve));
      dev.kill('SIGINT');
      const timer = setTimeout(() => dev!.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('every curl line of README.md and docs/ answers 2xx, in order', async () => {
    const basePort = await freePortRun(6);
    dev = spawn(process.execPath, [BIN, 'dev', '--base-port', String(basePort),
      '--data-dir', dataDir, '--ready-deadline-ms', String(DEV_DEADLINES.leaderMs), '--json'],
    { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    dev.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    await waitFor(async () => stdout.includes('"ready"') || undefined,
      deadlineMs(PROCESS_START_MS_IDLE) + DEV_DEADLINES.leaderMs, 'the ready line');
    const lines = all.filter((s) => s.info === 'sh').flatMap((s) =>
      curlLines(s.code).map((line) => ({ where: s.where, line })));
    const script = lines.map(({ where, line }) => shellStep(where, line, basePort)).join('\n');
    const run = spawnSync('bash', ['-c', `set -u\n${script}`], { encoding: 'utf8',
      timeout: 120_000 });
    assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
  });
});

/** One doc line as a checked shell step: the real port, a failing HTTP status fails the step. */
function shellStep(where: string, line: string, basePort: number): string {
  const streaming = /\scurl\s.*-\w*N|^curl\s.*-\w*N/.test(line);
  const checked = line.replaceAll('localhost:2379', `127.0.0.1:${basePort}`)
    .replace(/curl\s/, streaming ? 'curl --fail-with-body --max-time 1 ' : 'curl --fail-with-body ');
  const quoted = JSON.stringify(`${where}: ${line}`);
  // A stream (curl -N) never ends by itself: stopping it at --max-time (exit 28) is success.
  const ok = streaming ? '[ "$rc" = 0 ] || [ "$rc" = 28 ]' : '[ "$rc" = 0 ]';
  return `${checked}\nrc=$?; if ! { ${ok}; }; then echo "failed ($rc): "${quoted} >&2; exit 1; fi`;
}

/** A port P such that P..P+count-1 are all free on loopback now. */
async function freePortRun(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 20_000) * 2;
    const servers: net.Server[] = [];
    try {
      for (let p = base; p < base + count; p++) {
        const server = net.createServer();
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(p, '127.0.0.1', () => resolve());
        });
        servers.push(server);
      }
      return base;
    } catch {
      // taken: try another run
    } finally {
      await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    }
  }
  throw new Error(`no run of ${count} free ports found`);
}
