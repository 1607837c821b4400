/**
 * cli: what an etcdctl user reaches for (issue 18 item 5): `kv put --lease` and a value from
 * stdin, `get --prefix`/`--keys-only`, `-w table|json|fields`, `kv txn` from stdin,
 * `version`, `status --json` fields, client flags from the environment, `lock --list` and
 * `locks`, the waiting line of a lock that someone else holds, and `elect --listen`.
 * Method: runCli in-process (stdin given through CliIo) against the lease fake cluster (the
 * real HTTP API, leases and watches on loopback); `elect --listen` as a process from source,
 * followed as candidate keys come and go; every wait a condition with a deadline.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connect, type ConclaveClient } from '../../src/client/index.js';
import type { CliIo } from '../../src/cli/io.js';
import { runCli } from '../../src/cli/main.js';
import { parseTxnText } from '../../src/cli/txn-text.js';
import { candidateKey, recipeKeys } from '../../src/core/election/index.js';
import { CONCLAVE_VERSION } from '../../src/core/version.js';
import { LeaseFakeCluster } from '../client/lease-fake-cluster.js';
import { until } from '../support/conditions.js';
import { cliClientFlags, deadlineMs, PROCESS_START_MS_IDLE } from '../support/deadlines.js';
import { CliProcess, stopAll } from './cli-process.js';

interface Run {
  readonly code: number;
  readonly out: string[];
  readonly err: string[];
}

let cluster: LeaseFakeCluster;
let client: ConclaveClient;

/** Runs the CLI against the fake cluster; `stdin` is what standard input holds. */
function start(args: string[], stdin?: string):
  { err: readonly string[]; done: Promise<Run> } {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (l) => out.push(l), err: (l) => err.push(l), exitCode: 0,
    stdinIsTty: false, readStdin: () => Promise.resolve(stdin ?? '') };
  // The client flags go before a lock's "--" (after it, they would be CMD's arguments).
  const cut = args.includes('--') ? args.indexOf('--') : args.length;
  const withFlags = args[0] === 'version' ? args : [...args.slice(0, cut), '--endpoints',
    cluster.endpoints.join(','), ...cliClientFlags(), ...args.slice(cut)];
  return { err, done: runCli(withFlags, io).then((code) => ({ code, out, err })) };
}

const run = (args: string[], stdin?: string): Promise<Run> => start(args, stdin).done;

describe('cli: etcdctl parity', () => {
  before(async () => {
    cluster = await LeaseFakeCluster.start(3);
    client = connect({ endpoints: cluster.endpoints });
  });
  after(async () => {
    await stopAll();
    client.close();
    await cluster.stop();
  });

  test('put --lease attaches the key; a value left out is read from stdin as it is', async () => {
    const lease = await client.grantLease({ ttlMs: 30_000 });
    const put = await run(['kv', 'put', 'p/leased', 'v', '--lease', String(lease.id)]);
    assert.equal(put.code, 0, put.err.join('\n'));
    assert.equal((await client.kv.get('p/leased')).kv?.lease, lease.id);
    const piped = await run(['kv', 'put', 'p/stdin'], 'line 1\nline 2\n');
    assert.equal(piped.code, 0, piped.err.join('\n'));
    assert.equal((await client.kv.get('p/stdin')).kv?.value, 'line 1\nline 2\n');
    // In a table a value's line breaks are shown escaped: a row stays one line.
    const table = (await run(['kv', 'get', 'p/stdin', '-w', 'table'])).out;
    assert.equal(table.length, 5, table.join('\n'));
    assert.match(table[3] ?? '', /^\| p\/stdin \| line 1\\nline 2\\n \|/);
    await lease.revoke();
    assert.equal((await client.kv.get('p/leased')).kv, undefined);
  });

  test('get --prefix, --keys-only, and -w table|fields|json', async () => {
    await client.kv.put('g/a', '1');
    await client.kv.put('g/b', 'two words');
    assert.deepEqual((await run(['kv', 'get', 'g/', '--prefix'])).out, ['g/a\t1', 'g/b\ttwo words']);
    assert.deepEqual((await run(['kv', 'get', 'g/', '--prefix', '--keys-only'])).out, ['g/a', 'g/b']);
    assert.deepEqual((await run(['kv', 'get', 'g/a', '--keys-only'])).out, ['g/a']);
    const tableOut = (await run(['kv', 'get', 'g/', '--prefix', '-w', 'table'])).out;
    assert.match(tableOut[1] ?? '', /^\| KEY +\| VALUE +\| VERSION \| CREATE REV \| MOD REV \| LEASE \|$/);
    assert.match(tableOut[4] ?? '', /^\| g\/b +\| two words \| 1 +\| \d+ +\| \d+ +\| - +\|$/);
    const fields = (await run(['kv', 'get', 'g/b', '-w', 'fields'])).out;
    assert.ok(fields.includes('"key" : "g/b"') && fields.includes('"value" : "two words"'),
      fields.join('\n'));
    const json = JSON.parse((await run(['kv', 'get', 'g/', '--prefix', '-w', 'json'])).out[0]
      ?? '') as { count: number };
    assert.equal(json.count, 2);
    const bad = await run(['kv', 'get', 'g/a', '-w', 'yaml']);
    assert.equal(bad.code, 2);
    assert.match(bad.err.join('\n'), /simple, json, table, fields/);
  });

  test('txn from stdin: the success branch when the compares hold, else the failure branch',
    async () => {
      await client.kv.put('t/mode', 'blue');
      const text = 'value("t/mode") = "blue"\n\nput t/mode green\nget t/mode\n\nget t/mode\n';
      const first = await run(['kv', 'txn'], text);
      assert.equal(first.code, 0, first.err.join('\n'));
      assert.deepEqual(first.out.slice(0, 5), ['SUCCESS', '', 'OK', '', 't/mode\tgreen']);
      const second = await run(['kv', 'txn'], text);
      assert.deepEqual(second.out.slice(0, 3), ['FAILURE', '', 't/mode\tgreen']);
      const bad = await run(['kv', 'txn'], 'value(t/mode) = "blue"\n');
      assert.equal(bad.code, 2);
      assert.match(bad.err.join('\n'), /txn line 1/);
    });

  test('the txn text: compares of each target, quoted words, no-compare form', () => {
    const parsed = parseTxnText('version("k") > "2"\nmod("k") < 9\ncreate("k") != "0"\n\n' +
      'put "a b" "c d" --lease=5\ndel p/ --prefix\nget p/ --prefix --limit=3\n');
    assert.deepEqual(parsed.compare.map((c) => [c.target, c.result]), [['version', 'greater'],
      ['modRevision', 'less'], ['createRevision', 'not-equal']]);
    assert.deepEqual(parsed.success, [{ kind: 'put', key: 'a b', value: 'c d', lease: 5 },
      { kind: 'delete', key: 'p/', prefix: true }, { kind: 'range', key: 'p/', prefix: true,
        limit: 3 }]);
    assert.deepEqual(parseTxnText('\nput k v\n'), { compare: [],
      success: [{ kind: 'put', key: 'k', value: 'v' }], failure: [] });
    assert.throws(() => parseTxnText('version("k") > "x"'), /whole number/);
    assert.throws(() => parseTxnText('\nput k\n'), /txn line 2/);
    assert.throws(() => parseTxnText('\nget k --bogus\n'), /get has no --bogus/);
  });

  test('version prints this package\'s version and Node\'s', async () => {
    const text = await run(['version']);
    assert.deepEqual(text.out, [`conclave version: ${CONCLAVE_VERSION}`,
      `node version: ${process.versions.node}`]);
    const json = JSON.parse((await run(['version', '--json'])).out[0] ?? '') as
      { conclave: string };
    assert.equal(json.conclave, CONCLAVE_VERSION);
    assert.deepEqual((await run(['--version'])).out, [CONCLAVE_VERSION]);
  });

  test('client flags come from the environment; a flag wins over its variable', async () => {
    const saved = process.env['CONCLAVE_TIMEOUT_MS'];
    process.env['CONCLAVE_TIMEOUT_MS'] = 'soon';
    const direct = async (args: string[]): Promise<Run> => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCli([...args, '--endpoints', cluster.endpoints.join(',')],
        { out: (l) => out.push(l), err: (l) => err.push(l), exitCode: 0 });
      return { code, out, err };
    };
    try {
      const bad = await direct(['kv', 'get', 'g/a']);
      assert.equal(bad.code, 2);
      assert.match(bad.err.join('\n'), /--timeout-ms/);
      const flagWins = await direct(['kv', 'get', 'g/a', ...cliClientFlags()]);
      assert.equal(flagWins.code, 0, flagWins.err.join('\n'));
    } finally {
      if (saved === undefined) delete process.env['CONCLAVE_TIMEOUT_MS'];
      else process.env['CONCLAVE_TIMEOUT_MS'] = saved;
    }
  });

  test('lock --list and locks show the holder and the queue in order', async () => {
    const keys = recipeKeys('lock', 'listed');
    await client.kv.put(candidateKey(keys, 1), JSON.stringify({ id: 'first', value: '' }));
    await client.kv.put(candidateKey(keys, 2), JSON.stringify({ id: 'second', value: '' }));
    await client.kv.put(candidateKey(keys, 3), JSON.stringify({ id: 'third', value: '' }));
    const list = await run(['lock', 'listed', '--list']);
    assert.equal(list.code, 0, list.err.join('\n'));
    assert.match(list.out[3] ?? '', /^\| listed \| first +\| \d+ +\| - +\| 0 +\| second, third \|$/);
    const json = (await run(['locks', '--json'])).out.map((l) => JSON.parse(l) as
      { name: string; holder: { id: string }; queue: { id: string }[] });
    const listed = json.find((l) => l.name === 'listed');
    assert.deepEqual([listed?.holder.id, listed?.queue.map((c) => c.id)], ['first',
      ['second', 'third']]);
    await client.kv.delete(keys.candidatePrefix, { prefix: true });
    assert.deepEqual((await run(['lock', 'listed', '--list'])).out, ['lock listed is free']);
    assert.equal((await run(['lock', 'listed'])).code, 2);
  });

  test('a lock held by another: one waiting line naming the holder, then acquired', async () => {
    const held = await client.lock('busy', { ttlMs: 30_000, id: 'holder-a' });
    const waiter = start(['lock', 'busy', '--ttl', '30', '--', process.execPath, '-e', '']);
    const lines = waiter.err;
    await until(() => lines.some((l) => l.startsWith('waiting ')), deadlineMs(5000));
    assert.match(lines.find((l) => l.startsWith('waiting ')) ?? '',
      /^waiting lock=busy holder=holder-a fencingToken=\d+ ahead=1$/);
    await held.unlock();
    const result = await waiter.done;
    assert.equal(result.code, 0, result.err.join('\n'));
    assert.equal(result.err.filter((l) => l.startsWith('waiting ')).length, 1);
    assert.ok(result.err.some((l) => l.startsWith('acquired lock=busy')));
  });

  test('elect --listen prints the leader now and at each change, exits 0 on SIGTERM',
    async () => {
      const keys = recipeKeys('election', 'followed');
      await client.kv.put(candidateKey(keys, 7), JSON.stringify({ id: 'a', value: 'addr-a' }));
      const listener = new CliProcess(['elect', 'followed', '--listen', '--endpoints',
        cluster.endpoints.join(','), ...cliClientFlags()]);
      const patience = deadlineMs(PROCESS_START_MS_IDLE);
      await listener.line(/^leader name=followed id=a value=addr-a fencingToken=\d+$/, patience);
      await client.kv.put(candidateKey(keys, 8), JSON.stringify({ id: 'b', value: 'addr-b' }));
      await client.kv.delete(candidateKey(keys, 7));
      await listener.line(/^leader name=followed id=b value=addr-b/, deadlineMs(5000));
      await client.kv.delete(candidateKey(keys, 8));
      await listener.line(/^no-leader name=followed$/, deadlineMs(5000));
      listener.signal('SIGTERM');
      assert.equal(await listener.exited(deadlineMs(5000)), 0);
    });
});
