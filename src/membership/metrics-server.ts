/**
 * `conclave gossip --metrics HOST:PORT`: a small HTTP server that answers GET /metrics with the
 * member's registry in Prometheus text format, and nothing else. It is a server of its own, not
 * a route on `--ui`: an operator scrapes every member, while the dashboard is for one person at a
 * terminal (and takes WebSockets); Prometheus's convention is one metrics port per process.
 */
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

export interface MetricsServer {
  /** The URL of /metrics, with the port the OS picked if 0 was asked. */
  readonly url: string;
  close(): Promise<void>;
}

/** Listens on `host:port`; rejects with the listen error (a taken port: EADDRINUSE). */
export async function startMetricsServer(host: string, port: number,
  registry: Registry): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    }
    registry.metrics().then((text) => {
      res.writeHead(200, { 'content-type': registry.contentType }).end(text);
    }, (error: unknown) => {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`${String(error)}\n`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const boundPort = typeof address === 'object' && address !== null ? address.port : port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${boundPort}/metrics`,
    close: () => new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
