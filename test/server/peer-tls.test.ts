/**
 * server: peer TLS, real processes. Goal: `conclave dev --tls` runs three members with mutual
 * TLS between them and HTTPS for clients: it elects a leader, serves a put and a linearizable
 * get over HTTPS, and keeps a lease alive over the keep-alive WebSocket (wss); a member started
 * with a certificate from another CA is refused by the cluster, counted in /metrics, with one
 * clear log line naming the reason, and the cluster keeps serving. The shipped client does the
 * same over HTTPS and wss (`connect({ endpoints, tls: { ca } })`), and the CLI with --cacert.
 * Method: the built CLI as child processes (`conclave dev --tls --json`, `conclave server` with
 * a foreign CA's certificate from test/support/test-certs.ts); node:https and ws trusting the
 * dev CA; waits are conditions with deadlines derived from the cluster's timings.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import WebSocket from 'ws';
import { connect } from '../../src/client/index.js';
import {
  clusterDeadlines, deadlineMs, patienceMs, PROCESS_START_MS_IDLE,
} from '../support/deadlines.js';
import { BIN, BUILT, waitFor } from '../support/real-cluster.js';
import { testCerts } from '../support/test-certs.js';
import { freePort } from '../support/ports.js';

const dataDir = mkdtempSync(join(tmpdir(), 'conclave-dev-tls-'));
const children: ChildProcess[] = [];
after(async () => {
  // SIGTERM first: `dev` then stops the members it started (a SIGKILL would orphan them).
  await Promise.all(children.map((child) => new Promise<void>((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done();
    const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(force);
      done();
    });
    child.kill('SIGTERM');
  })));
  rmSync(dataDir, { recursive: true, force: true });
});

interface Answer { readonly status: number; readonly body: Record<string, unknown> }

/** A JSON request over HTTPS trusting `ca`, following 307s to the leader. */
function httpsJson(url: string, ca: Buffer, body?: unknown, hops = 3): Promise<Answer> {
  return new Promise((resolve, reject) => {
    // agent: false: a fresh connection each time, never a kept-alive one the server just closed.
    const req = request(url, { method: body === undefined ? 'GET' : 'POST', ca, agent: false,
      headers: { 'content-type': 'application/json' }, timeout: patienceMs(500) }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        if (res.statusCode === 307 && hops > 0 && res.headers.location !== undefined) {
          httpsJson(res.headers.location, ca, body, hops - 1).then(resolve, reject);
          return;
        }
        try {
          const parsed = JSON.parse(text) as Record<string, unknown>;
          resolve({ status: res.statusCode ?? 0, body: parsed });
        } catch {
          resolve({ status: res.statusCode ?? 0, body: { text } });
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** A base port whose six ports (three members × client, peer) are free now. */
async function freeBasePort(): Promise<number> {
  for (let base = 30_000 + (process.pid % 15_000); ; base += 7) {
    const free = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => new Promise<boolean>((ok) => {
      const server = net.createServer();
      server.once('error', () => ok(false));
      server.listen(base + i, '127.0.0.1', () => server.close(() => ok(true)));
    })));
    if (free.every(Boolean)) return base;
  }
}

function spawnCli(args: string[]): { child: ChildProcess; out: () => string } {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return { child, out: () => out };
}

const HEARTBEAT_MS = 50;
const ELECTION_MS = 300;
const DEADLINES = clusterDeadlines({ heartbeatMs: HEARTBEAT_MS, electionTimeoutMs: ELECTION_MS });
/** What openssl takes, idle, to make the 8 certificates of `dev --tls`. Unit: ms. */
const CERTS_MS_IDLE = 8 * 250;
/** `dev --tls` to its ready line: certificates, then members to a leader (deadlines.ts). */
const READY_MS = deadlineMs(CERTS_MS_IDLE + PROCESS_START_MS_IDLE) + DEADLINES.leaderMs;

describe('server: peer TLS', { skip: BUILT ? false : 'dist/ not built (npm ci builds it)' }, () => {
  test('conclave dev --tls: a leader, HTTPS put/get, wss keep-alive; a foreign CA is refused',
    async () => {
      const base = await freeBasePort();
      const dev = spawnCli(['dev', '--tls', '--base-port', String(base), '--data-dir', dataDir,
        '--heartbeat-ms', String(HEARTBEAT_MS), '--election-timeout-ms', String(ELECTION_MS),
        '--ready-deadline-ms', String(DEADLINES.leaderMs), '--json']);
      const ready = await waitFor(async () => {
        const line = dev.out().split('\n').find((l) => l.includes('"ready"'));
        return line === undefined ? undefined
          : JSON.parse(line) as { endpoints: string[]; caFile: string; tls: boolean };
      }, READY_MS, `the ready line (output so far: ${dev.out()})`);
      assert.equal(ready.tls, true);
      assert.deepEqual(ready.endpoints.map((e) => e.slice(0, 8)), ['https://', 'https://',
        'https://']);
      const ca = readFileSync(ready.caFile);
      const [first] = ready.endpoints as [string];

      const put = await httpsJson(`${first}/v1/kv/put`, ca,
        { key: 'tls/a', value: 'secure', clientId: 'peer-tls-test', sequence: 1 });
      assert.equal(put.status, 200, JSON.stringify(put.body));
      const got = await httpsJson(`${ready.endpoints[2]}/v1/kv/range`, ca, { key: 'tls/a' });
      assert.equal(got.status, 200, JSON.stringify(got.body));
      assert.equal((got.body['kvs'] as { value: string }[])[0]?.value, 'secure');

      const grant = await httpsJson(`${first}/v1/lease/grant`, ca,
        { ttlMs: 5000, clientId: 'peer-tls-test', sequence: 2 });
      assert.equal(grant.status, 200, JSON.stringify(grant.body));
      const leaseId = grant.body['leaseId'] as number;
      const answer = await keepAliveOverWss(`${first.replace('https', 'wss')}/v1/lease/stream`,
        ca, leaseId);
      assert.equal(answer['leaseId'], leaseId);
      assert.ok((answer['remainingMs'] as number) > 0, JSON.stringify(answer));

      // The shipped client and the CLI, trusting the dev CA (endpoints as dev printed them).
      const client = connect({ endpoints: ready.endpoints, tls: { ca } });
      try {
        await client.kv.put('tls/client', 'shipped');
        assert.equal((await client.kv.get('tls/client')).kv?.value, 'shipped');
        const lease = await client.grantLease({ ttlMs: 10_000, autoKeepAlive: false });
        assert.equal((await lease.keepAlive()).leaseId, lease.id); // over wss, to the leader
        await lease.revoke();
      } finally {
        client.close();
      }
      const status = spawnCli(['status', '--json', '--cacert', ready.caFile, '--endpoints',
        ready.endpoints.join(',')]);
      const statusExit = await new Promise<number | null>((done) => status.child.once('exit',
        done));
      assert.equal(statusExit, 0, status.out());
      assert.ok(String((JSON.parse(status.out()) as { leaderId?: unknown }).leaderId)
        .startsWith('n'), status.out());

      // A member with a certificate from another CA tries to join as n2.
      const foreign = testCerts().foreignDir;
      const ownPeerPort = await freePort();
      const intruder = spawnCli(['server', '--name', 'n2', '--data-dir', join(dataDir, 'intruder'),
        '--peer-addr', `127.0.0.1:${ownPeerPort}`, '--client-addr', `127.0.0.1:${await freePort()}`,
        '--cluster',
        `n1=127.0.0.1:${base + 1},n2=127.0.0.1:${ownPeerPort},n3=127.0.0.1:${base + 5}`,
        '--heartbeat-ms', String(HEARTBEAT_MS), '--election-timeout-ms', String(ELECTION_MS),
        '--peer-cert', join(foreign, 'n2.crt'), '--peer-key', join(foreign, 'n2.key'),
        '--peer-ca', join(foreign, 'ca.crt')]);
      const refusals = /conclave_peer_handshakes_refused_total\{reason="tls-untrusted"\} (\d+)/;
      await waitFor(async () => {
        const metrics = await metricsText(first, ca);
        return Number(refusals.exec(metrics)?.[1] ?? 0) >= 3 ? true : undefined;
      }, deadlineMs(PROCESS_START_MS_IDLE) + DEADLINES.requestMs, `three refusals at n1 (intruder output: ${intruder.out()})`);
      const n1Log = readFileSync(join(dataDir, 'n1.log'), 'utf8').split('\n');
      const lines = n1Log.filter((l) => /peer certificate from an unknown CA/.test(l));
      assert.equal(lines.length, 1, lines.join('\n'));
      assert.match(lines[0]!, /peer handshake refused/);
      intruder.child.kill('SIGKILL');

      // The cluster kept serving.
      const after = await httpsJson(`${ready.endpoints[1]}/v1/kv/put`, ca,
        { key: 'tls/b', value: 'still', clientId: 'peer-tls-test', sequence: 3 });
      assert.equal(after.status, 200, JSON.stringify(after.body));
      const exited = new Promise<number | null>((resolve) => dev.child.once('exit', resolve));
      dev.child.kill('SIGINT');
      assert.equal(await exited, 0);
    });
});

async function metricsText(endpoint: string, ca: Buffer): Promise<string> {
  const answer = await httpsJson(`${endpoint}/metrics`, ca);
  return String(answer.body['text'] ?? '');
}

/** One keep-alive on the lease stream over TLS (following the redirect to the leader). */
function keepAliveOverWss(url: string, ca: Buffer, leaseId: number):
  Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { ca, followRedirects: true });
    const timeoutMs = patienceMs(500);
    const timer = setTimeout(
      () => reject(new Error(`no keep-alive answer in ${timeoutMs} ms`)), timeoutMs);
    ws.once('open', () => ws.send(JSON.stringify({ id: 1, leaseId })));
    ws.once('message', (data) => {
      clearTimeout(timer);
      ws.close();
      resolve(JSON.parse(String(data)) as Record<string, unknown>);
    });
    ws.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}
