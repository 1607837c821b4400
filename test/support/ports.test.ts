/**
 * support: freePort draws ports the kernel never hands out by itself (below the ephemeral
 * range), and two processes drawing at once never get the same port (the reservation files).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { ephemeralPortMin, freePorts } from './ports.js';

const PORTS = fileURLToPath(new URL('./ports.ts', import.meta.url));

test('freePort draws below the ephemeral range, and never a port another process holds', async () => {
  const ephemeralMin = ephemeralPortMin();
  const mine = await freePorts(100);
  for (const port of mine) assert.ok(port >= 10_000 && port < ephemeralMin, `port ${port}`);
  const script = `const { freePorts } = await import(${JSON.stringify(PORTS)});`
    + 'process.stdout.write(JSON.stringify(await freePorts(100)));';
  const theirs = JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module',
    '-e', script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })) as number[];
  assert.equal(theirs.length, 100);
  const shared = theirs.filter((port) => mine.includes(port));
  assert.deepEqual(shared, [], 'two processes drew the same port');
});
