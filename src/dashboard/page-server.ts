/**
 * A small HTTP server for the page alone, where no `conclave server` runs: the gossip
 * membership tab (`conclave gossip --ui ADDR`) and the replay view (`conclave replay FILE`).
 * It serves the same built page at /ui/ and hands each /ui/feed WebSocket to `onPage`.
 */
import { createServer, type Server } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import { loadAssets } from './assets.js';

export interface PageServer {
  readonly url: string;
  close(): Promise<void>;
}

/** Pages at once; a page server is for one person at a terminal. */
const PAGES_MAX = 16;

export async function startPageServer(host: string, port: number,
  onPage: (socket: WebSocket) => void): Promise<PageServer> {
  const assets = loadAssets();
  const sockets = new WebSocketServer({ noServer: true, maxPayload: 4096 });
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path === '/' || path === '/ui') return void res.writeHead(302, { location: '/ui/' }).end();
    const asset = assets?.get(path === '/ui/' ? 'index.html' : path.replace(/^\/ui\//, ''));
    if (asset === undefined) {
      return void res.writeHead(404, { 'content-type': 'text/plain' })
        .end(assets === undefined ? 'dashboard not built: run npm run build\n' : 'not found\n');
    }
    res.writeHead(200, { 'content-type': asset.contentType, 'cache-control': 'no-cache' })
      .end(asset.body);
  });
  server.on('upgrade', (req, socket, head) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== '/ui/feed' || sockets.clients.size >= PAGES_MAX) return void socket.destroy();
    sockets.handleUpgrade(req, socket, head, (ws) => onPage(ws));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const boundPort = typeof address === 'object' && address !== null ? address.port : port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${boundPort}/ui/`,
    close: () => new Promise((resolve) => {
      sockets.clients.forEach((ws) => ws.terminate());
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

/** `host:port` to listen on (port 0: the OS picks), or why not. */
export function parseListenAddress(text: string): { host: string; port: number } |
  { error: string } {
  const match = /^\[?([^\]]*?)\]?:(\d{1,5})$/.exec(text.trim());
  const port = match === null ? NaN : Number(match[2]);
  if (match === null || match[1] === '' || !(port >= 0 && port <= 65_535)) {
    return { error: `expected HOST:PORT with a port from 0 to 65535, got ${JSON.stringify(text)}` };
  }
  return { host: match[1]!, port };
}
