// Free ports for tests that must name a port before the process that binds it starts (a
// member's --listen flags, a cluster's peer list). Everything else binds port 0.
//
// Why not "bind port 0, read the port, close it": between the close and the member's own bind,
// anything that binds port 0 or opens an outgoing connection may be handed the same port by
// the kernel, since both draw from the ephemeral range. In full `npm test` runs that happened
// (a member exited with EADDRINUSE at start, and a test waited 32 s for a leader on a cluster
// one member short). So ports are drawn below the ephemeral range, where the kernel never
// hands out a port by itself, and reserved across processes with a file per port, so that
// two test files running at once do not draw the same one.
import { closeSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import dgram from 'node:dgram';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Lowest port drawn. Below it sit well-known and registered service ports (etcd's 2379). */
const PORT_MIN = 10_000;
/**
 * A reservation older than this is stale (its process was killed before it could remove it).
 * Unit: ms. 20 min: longer than any one test file holds a port.
 */
const RESERVATION_STALE_MS = 20 * 60_000;
const RESERVATIONS_DIR = join(tmpdir(), 'conclave-test-ports');
const reserved: string[] = [];

/**
 * A port free on 127.0.0.1 for TCP and UDP, below the kernel's ephemeral range and reserved
 * for this process: no other process of the test run draws it while this one runs.
 */
export async function freePort(): Promise<number> {
  const max = ephemeralPortMin();
  if (max <= PORT_MIN + 1000) return ephemeralFreePort();
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = PORT_MIN + Math.floor(Math.random() * (max - PORT_MIN));
    if (!reserve(port)) continue;
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port found in ${PORT_MIN}..${max - 1} after 200 attempts`);
}

/** `count` distinct free ports. */
export async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

/** The lowest port the kernel hands out by itself (Linux; 32768 where it cannot be read). */
export function ephemeralPortMin(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim()
      .split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/** Creates the port's reservation file, or takes over a stale one; false if another holds it. */
function reserve(port: number): boolean {
  mkdirSync(RESERVATIONS_DIR, { recursive: true });
  const path = join(RESERVATIONS_DIR, String(port));
  try {
    const fd = openSync(path, 'wx');
    writeSync(fd, String(process.pid));
    closeSync(fd);
  } catch {
    try {
      if (Date.now() - statSync(path).mtimeMs < RESERVATION_STALE_MS) return false;
      unlinkSync(path);
    } catch {
      return false;
    }
    return reserve(port);
  }
  if (reserved.length === 0) process.once('exit', releaseAll);
  reserved.push(path);
  return true;
}

function releaseAll(): void {
  for (const path of reserved.splice(0)) {
    try {
      unlinkSync(path);
    } catch {
      // Already gone: nothing to release.
    }
  }
}

/** Whether both TCP and UDP can bind `port` on 127.0.0.1 right now (gossip uses both). */
async function bindable(port: number): Promise<boolean> {
  const tcp = net.createServer();
  const tcpOk = await new Promise<boolean>((resolve) => {
    tcp.once('error', () => resolve(false));
    tcp.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (tcpOk) await new Promise<void>((resolve) => tcp.close(() => resolve()));
  if (!tcpOk) return false;
  const udp = dgram.createSocket('udp4');
  const udpOk = await new Promise<boolean>((resolve) => {
    udp.once('error', () => resolve(false));
    udp.bind(port, '127.0.0.1', () => resolve(true));
  });
  if (udpOk) await new Promise<void>((resolve) => udp.close(() => resolve()));
  return udpOk;
}

/** The old way, where no range lies below the ephemeral one: the OS picks, we release. */
async function ephemeralFreePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
