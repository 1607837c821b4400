/**
 * A userspace fault proxy for one direction of a peer link (X → Y): X connects to the proxy,
 * which forwards to Y. `block()` cuts the link silently (existing connections are destroyed,
 * new ones are accepted and held without forwarding: a blackhole, as a dead switch port is);
 * `unblock()` restores forwarding for new connections. No tc/netem or iptables needed.
 */
import * as net from 'node:net';

export class FaultProxy {
  private blocked = false;
  private readonly pairs = new Set<[net.Socket, net.Socket | undefined]>();

  private constructor(private readonly server: net.Server, readonly port: number,
    private readonly targetPort: number) {}

  static async start(targetPort: number): Promise<FaultProxy> {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const proxy = new FaultProxy(server, (server.address() as net.AddressInfo).port, targetPort);
    server.on('connection', (socket) => proxy.accept(socket));
    return proxy;
  }

  block(): void {
    this.blocked = true;
    for (const [a, b] of this.pairs) {
      a.destroy();
      b?.destroy();
    }
    this.pairs.clear();
  }

  unblock(): void {
    this.blocked = false;
  }

  async close(): Promise<void> {
    this.block();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: net.Socket): void {
    socket.on('error', () => undefined);
    if (this.blocked) {
      // Held, never answered: the sender sees silence, not a reset.
      const pair: [net.Socket, undefined] = [socket, undefined];
      this.pairs.add(pair);
      socket.on('close', () => this.pairs.delete(pair));
      return;
    }
    const upstream = net.connect(this.targetPort, '127.0.0.1');
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
    const pair: [net.Socket, net.Socket] = [socket, upstream];
    this.pairs.add(pair);
    socket.pipe(upstream);
    upstream.pipe(socket);
    const done = (): void => {
      this.pairs.delete(pair);
      socket.destroy();
      upstream.destroy();
    };
    socket.on('close', done);
    upstream.on('close', done);
  }
}
