// Ad-hoc throughput of the file WAL (not a test, not a benchmark against a reference): entries/s
// and fdatasync batches/s for a few batch sizes and writer counts, CRC-32C speed and recovery
// time. Numbers depend on the disk and on the machine's load; run it twice.
// Usage: node --import tsx scripts/wal-throughput.ts [durationMs per case, default 2000]
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStorage } from '../src/adapters/file-storage.js';
import { crc32c } from '../src/core/checksum.js';
import { logIndex, nodeId, term } from '../src/core/ids.js';
import type { Entry } from '../src/core/raft/types.js';
import { WAL_DEFAULTS } from '../src/runtime/wal/config.js';
import { MANIFEST_FILE, encodeClaim } from '../src/runtime/wal/manifest.js';
import { openWal, type Wal } from '../src/runtime/wal/wal.js';

const durationMs = Number(process.argv[2] ?? 2000);
const DATA = new Uint8Array(100).fill(7);

function openFresh(): { wal: Wal; storage: FileStorage; directory: string } {
  const directory = mkdtempSync(join(tmpdir(), 'conclave-wal-throughput-'));
  const storage = new FileStorage(directory);
  const opened = openWal(storage, WAL_DEFAULTS);
  if ('error' in opened) throw new Error(opened.error.message);
  return { wal: opened.wal, storage, directory };
}

const sync = (wal: Wal): Promise<void> =>
  new Promise((resolve, reject) => wal.sync((e) => (e === undefined ? resolve() : reject(e))));

function batchFrom(first: number, count: number): Entry[] {
  return Array.from({ length: count }, (_, i) =>
    ({ index: logIndex(first + i), term: term(1), kind: 'normal', data: DATA }));
}

async function measure(label: string, entriesPerSync: number, writers: number): Promise<void> {
  const { wal, storage, directory } = openFresh();
  await sync(wal);
  const before = wal.stats();
  const startMs = performance.now();
  let entries = 0;
  const writer = async (): Promise<void> => {
    while (performance.now() - startMs < durationMs) {
      const first = wal.lastIndex() + 1;
      wal.append(batchFrom(first, entriesPerSync));
      wal.saveHardState({ term: term(1), vote: nodeId('n1'), commitIndex: logIndex(first - 1) });
      entries += entriesPerSync;
      await sync(wal);
    }
  };
  await Promise.all(Array.from({ length: writers }, writer));
  const seconds = (performance.now() - startMs) / 1000;
  const after = wal.stats();
  const batches = after.batches - before.batches;
  console.log(`${label}: ${Math.round(entries / seconds)} entries/s, ` +
    `${Math.round(batches / seconds)} batches (fdatasync)/s, ` +
    `${(entries / batches).toFixed(1)} entries per batch, ` +
    `${((after.manifestClaims - before.manifestClaims) / batches).toFixed(2)} manifest claims ` +
    `per batch, ${after.manifestRewrites - before.manifestRewrites} manifest rewrites`);
  storage.close();
  rmSync(directory, { recursive: true, force: true });
}

async function recovery(entries: number): Promise<void> {
  const { wal, storage, directory } = openFresh();
  for (let first = 1; first <= entries; first += 1000) {
    wal.append(batchFrom(first, 1000));
    await sync(wal);
  }
  storage.close();
  const startMs = performance.now();
  const reopened = new FileStorage(directory);
  const opened = openWal(reopened, WAL_DEFAULTS);
  const elapsedMs = Math.round(performance.now() - startMs);
  const mib = (wal.stats().bytesWritten / 1048576).toFixed(1);
  if ('wal' in opened) {
    console.log(`recovery: ${opened.wal.lastIndex()} entries (${mib} MiB) in ${elapsedMs} ms`);
    await sync(opened.wal); // The WAL writes its manifest claim from the sync's callback.
  }
  reopened.close();
  rmSync(directory, { recursive: true, force: true });
}

const block = new Uint8Array(16 * 1024 * 1024).fill(3);
const crcStartMs = performance.now();
crc32c(block);
console.log(`crc32c: ${Math.round(16 / ((performance.now() - crcStartMs) / 1000))} MiB/s`);
{
  // What the manifest adds to each batch: one 24-byte append (no sync) after the fdatasync.
  const directory = mkdtempSync(join(tmpdir(), 'conclave-wal-throughput-'));
  const storage = new FileStorage(directory);
  const claim = encodeClaim({ sequence: 1, syncedBytes: 1 });
  const appends = 100_000;
  const claimStartMs = performance.now();
  for (let i = 0; i < appends; i++) storage.append(MANIFEST_FILE, claim);
  const micros = ((performance.now() - claimStartMs) * 1000) / appends;
  console.log(`manifest claim append: ${micros.toFixed(2)} µs per batch`);
  storage.close();
  rmSync(directory, { recursive: true, force: true });
}
await measure('1 entry per sync, 1 writer     ', 1, 1);
await measure('1 entry per sync, 64 writers   ', 1, 64);
await measure('100 entries per sync, 1 writer ', 100, 1);
await measure('100 entries per sync, 4 writers', 100, 4);
await recovery(200_000);
console.log(`load average: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
