/**
 * `--auth`: authentication on for both systems, as each one's operator turns it on, and a
 * token for the load client. Conclave: `user add root`, `auth enable`, then a login
 * (docs/security.md). etcd: `role add root`, `user add root`, `user grant-role root root`,
 * `auth enable` (what `etcdctl auth enable` needs), then `/v3/auth/authenticate`; its gateway
 * takes the token in `Authorization`, as Conclave's HTTP does (Conclave's stream sends it in
 * the hello). Turned on at a cluster's first measured level, after any populate step; a fresh
 * token per level (each system's default token TTL is 5 minutes).
 */
import * as http from 'node:http';
import type { BenchCluster } from './cluster.js';
import type { BenchContext } from './context.js';
import { post } from './http.js';

const PASSWORD = 'bench-root-password';
const enabled = new WeakSet<BenchCluster>();

async function call(hostPort: string, path: string, body: unknown,
  tolerate?: RegExp): Promise<Record<string, unknown>> {
  const agent = new http.Agent({ keepAlive: false });
  try {
    const answer = await post(hostPort, path, JSON.stringify(body),
      { agent, timeoutMs: 10_000, keepBody: true });
    if (answer.status !== 200 && !(tolerate?.test(answer.body) ?? false)) {
      throw new Error(`--auth: ${path} answered ${answer.status} ${answer.body.slice(0, 200)}`);
    }
    return JSON.parse(answer.body) as Record<string, unknown>;
  } finally {
    agent.destroy();
  }
}

/** The token to send (auth turned on first, once per cluster); undefined without --auth. */
export async function benchToken(context: BenchContext, cluster: BenchCluster,
  leaderHostPort: string): Promise<string | undefined> {
  if (!context.options.auth) return undefined;
  const conclave = cluster.system === 'conclave';
  if (!enabled.has(cluster)) {
    if (conclave) {
      await call(leaderHostPort, '/v1/auth/user/add', { name: 'root', password: PASSWORD });
      await call(leaderHostPort, '/v1/auth/enable', {});
    } else {
      await call(leaderHostPort, '/v3/auth/role/add', { name: 'root' }, /already exists/);
      await call(leaderHostPort, '/v3/auth/user/add', { name: 'root', password: PASSWORD });
      await call(leaderHostPort, '/v3/auth/user/grant', { user: 'root', role: 'root' });
      await call(leaderHostPort, '/v3/auth/enable', {});
    }
    enabled.add(cluster);
    context.say(`auth: enabled on ${cluster.system} (user root)`);
  }
  const login = await call(leaderHostPort, conclave ? '/v1/auth/authenticate'
    : '/v3/auth/authenticate', { name: 'root', password: PASSWORD });
  if (typeof login['token'] !== 'string') throw new Error('--auth: a login without a token');
  return login['token'];
}
