/**
 * The recipes under real faults, on a backend (recipe-faults-conclave.test.ts,
 * recipe-faults-etcd.test.ts): holder processes (fault-holder.ts) campaign in one election and,
 * while leading, write to a fenced resource in this process. Faults, in turn: kill -9 of the
 * holder, SIGSTOP of the holder (SIGCONT after its successor was elected), kill -9 of the
 * backing cluster's leader. Then the history is checked:
 * - leaderships' fencing tokens strictly grow in the order they were won;
 * - no holder acted (stamped a write) after a holder with a higher token was elected, except
 *   one that was frozen, and every such write was refused by the Fence;
 * - the Fence accepted tokens in non-decreasing order only.
 * Waits are conditions with deadlines (test/support/deadlines.ts).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { Fence } from '../../src/client/index.js';
import { deadlineMs } from '../support/deadlines.js';
import { waitFor } from '../support/real-cluster.js';

const HOLDER = fileURLToPath(new URL('./fault-holder.ts', import.meta.url));
/** The holders' TTL is 4 s: a hand-over takes about that, on a loaded machine more. */
const HANDOVER_MS = deadlineMs(6_000);

export interface FaultBackend {
  readonly name: 'conclave' | 'etcd';
  readonly endpoints: readonly string[];
  /** Kills the backing cluster's current leader with SIGKILL. */
  killLeader(): Promise<void>;
  stop(): Promise<void>;
}

interface HolderEvent {
  readonly id: string;
  readonly at: number;
  readonly e: string;
  readonly token?: number;
}

interface Write {
  readonly id: string;
  readonly token: number;
  readonly sentAt: number;
  readonly accepted: boolean;
}

interface Holder {
  readonly id: string;
  readonly child: ChildProcess;
}

export function runRecipeFaults(label: string, start: () => Promise<FaultBackend>): void {
  describe(`recipe faults: ${label}`, () => {
    let backend: FaultBackend;
    let server: Server;
    let url = '';
    const fence = new Fence();
    const events: HolderEvent[] = [];
    const writes: Write[] = [];
    const holders: Holder[] = [];
    const frozen = new Set<string>();
    before(async () => {
      backend = await start();
      server = createServer((req, res) => {
        let text = '';
        req.on('data', (chunk: Buffer) => (text += chunk.toString()));
        req.on('end', () => void record(text).then((ok) => res.writeHead(ok ? 200 : 409).end()));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    });
    after(async () => {
      for (const h of holders) h.child.kill('SIGKILL');
      server?.close();
      await backend?.stop();
    });

    const record = async (text: string): Promise<boolean> => {
      const { id, token, sentAt } = JSON.parse(text) as Write;
      const accepted = await fence.accept(token).then(() => true, () => false);
      writes.push({ id, token, sentAt, accepted });
      return accepted;
    };
    const launch = (id: string): Holder => {
      const child = spawn(process.execPath, ['--import', 'tsx', HOLDER, backend.name,
        backend.endpoints.join(','), url, id], { stdio: ['ignore', 'pipe', 'inherit'] });
      let buffered = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        for (const line of lines) events.push(JSON.parse(line) as HolderEvent);
      });
      const holder = { id, child };
      holders.push(holder);
      return holder;
    };
    const leaderNow = (): Promise<Holder> => waitFor(async () => {
      const elected = events.filter((e) => e.e === 'elected');
      const last = elected[elected.length - 1];
      const lost = last !== undefined && events.some((e) => e.e === 'lost' && e.id === last.id
        && e.token === last.token);
      return last === undefined || lost ? undefined : holders.find((h) => h.id === last.id);
    }, HANDOVER_MS, 'a holder elected');
    const electedAfter = (token: number): Promise<HolderEvent> => waitFor(async () =>
      events.find((e) => e.e === 'elected' && (e.token ?? 0) > token), HANDOVER_MS,
    `a holder elected with a token above ${token}`);
    const tokenOf = (holder: Holder): number => [...events].reverse()
      .find((e) => e.e === 'elected' && e.id === holder.id)!.token!;

    test('kill -9 of the holder, SIGSTOP of the holder, kill -9 of the backing leader: one '
      + 'holder acts at a time, tokens grow, the Fence accepts no stale write', async () => {
      launch('a');
      launch('b');
      const first = await leaderNow();
      first.child.kill('SIGKILL');
      await electedAfter(tokenOf(first));
      launch('c');
      const second = await leaderNow();
      second.child.kill('SIGSTOP');
      frozen.add(second.id);
      await electedAfter(tokenOf(second));
      second.child.kill('SIGCONT');
      await waitFor(async () => events.some((e) => e.e === 'lost' && e.id === second.id)
        || undefined, HANDOVER_MS, 'the frozen holder noticing its loss');
      await backend.killLeader();
      const writesBefore = writes.filter((w) => w.accepted).length;
      await waitFor(async () => writes.filter((w) => w.accepted).length >= writesBefore + 20
        || undefined, HANDOVER_MS, 'writes going on after the backing leader was killed');
      checkHistory(events, writes, frozen);
    });
  });
}

function checkHistory(events: readonly HolderEvent[], writes: readonly Write[],
  frozen: ReadonlySet<string>): void {
  const elected = events.filter((e) => e.e === 'elected').sort((x, y) => x.at - y.at);
  for (let i = 1; i < elected.length; i++) {
    assert.ok(elected[i]!.token! > elected[i - 1]!.token!,
      `tokens must grow: ${elected.map((e) => `${e.id}:${e.token}`).join(' ')}`);
  }
  let late = 0;
  for (const w of writes) {
    const successor = elected.find((e) => e.token! > w.token && e.at < w.sentAt);
    if (successor === undefined) continue;
    late += 1;
    assert.ok(frozen.has(w.id), `${w.id} (token ${w.token}) acted at ${w.sentAt}, after `
      + `${successor.id} was elected with token ${successor.token} at ${successor.at}`);
    assert.equal(w.accepted, false, `a stale write of ${w.id} (token ${w.token}) was accepted`);
  }
  let highest = 0;
  for (const w of writes.filter((x) => x.accepted)) {
    assert.ok(w.token >= highest, `the Fence accepted ${w.token} after ${highest}`);
    highest = w.token;
  }
  assert.ok(writes.some((w) => w.accepted), 'no holder ever wrote');
  process.stdout.write(`# ${elected.length} leaderships, ${writes.length} writes, `
    + `${late} late writes of a frozen holder (all refused)\n`);
}
