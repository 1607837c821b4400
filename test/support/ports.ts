// Free TCP ports for tests that must name a port before the process that binds it starts
// (a member's --listen flags, a cluster's peer list). Everything else binds port 0.
import net from 'node:net';

/** A TCP port free on 127.0.0.1 a moment ago: the OS picks it, we release it. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** `count` distinct free ports. */
export async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}
