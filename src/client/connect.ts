/**
 * `connect()`: the client over the multiplexed stream (docs/protocol.md; HTTP/JSON with
 * `transport: 'http'`) with the system's clock, timers and randomness — the real adapters
 * wired to the client on ports (client.ts). The only module of src/client that
 * imports src/adapters (tidy checks it), so the simulator can run everything else.
 */
import { formatConfigProblems } from '../core/config.js';
import { LazyEtcdClientTransport } from '../adapters/etcd/lazy-etcd-transport.js';
import { HttpClientTransport } from '../adapters/http-client-transport.js';
import { StreamClientTransport } from '../adapters/stream-client-transport.js';
import { SystemClock } from '../adapters/system-clock.js';
import { SystemRandom } from '../adapters/system-random.js';
import type { ClientTransport, TokenSource } from '../ports/client-transport.js';
import type { Clock } from '../ports/clock.js';
import { AuthenticatingTransport, AuthSession, type ClientAuthOptions } from './auth.js';
import type { Timer } from '../ports/timer.js';
import { ConfigInvalidError } from '../errors.js';
import { clientOptionsOf, etcdAuthOf, etcdTls, type BackendConnectOptions } from './backend.js';
import { ConclaveClient } from './client.js';
import { CLIENT_DEFAULTS, validateClientConfig, type ClientConfig } from './config.js';
import type { ClientComponents } from './context.js';
import { parseEndpoint } from './endpoints.js';

/**
 * A client of the cluster at `options.endpoints`. No I/O happens until the first call, so this
 * never fails for an unreachable cluster (calls do); it throws ConfigInvalidError
 * (CONCLAVE_CONFIG_INVALID) listing every bad option. `components` replaces any of the real
 * ports (tests pass a fake clock or transport).
 *
 * ```ts
 * const client = connect({ endpoints: ['127.0.0.1:2379', '127.0.0.1:2381'] });
 * await client.kv.put('config/mode', 'blue');
 * const secure = connect({ endpoints: ['db1:2379'], tls: { ca: readFileSync('ca.pem') } });
 * const onEtcd = connect({ backend: 'etcd', endpoints: ['etcd1:2379'] }); // docs/backends.md
 * ```
 */
export function connect(options: BackendConnectOptions & TransportOption,
  components: Partial<ClientComponents> = {}): ConclaveClient {
  const { transport: kind = 'stream', ...rest } = options;
  const config: ClientConfig = {
    ...CLIENT_DEFAULTS, ...stripUndefined(clientOptionsOf(rest as BackendConnectOptions)),
  };
  const auth = etcdAuthOf(options);
  const problems = [...validateClientConfig(config), ...(auth?.user === '' ? [{ field: 'auth',
    value: '(hidden)', rule: 'must be { user: non-empty string, password: string }' }] : [])];
  if (kind !== 'stream' && kind !== 'http') {
    problems.push({ field: 'transport', value: kind, rule: 'must be "stream" or "http"' });
  }
  if (problems.length > 0) throw new ConfigInvalidError(formatConfigProblems(problems));
  const tls = config.tls !== undefined;
  const endpoints = config.endpoints.map((text) => {
    const parsed = parseEndpoint(text, { tls });
    return 'url' in parsed ? parsed.url : text; // validated above
  });
  const clock = components.clock ?? new SystemClock();
  return new ConclaveClient({ ...config, endpoints }, {
    ...components,
    clock,
    timer: components.timer ?? (isTimer(clock) ? clock : new SystemClock()),
    random: components.random ?? new SystemRandom(),
    transport: components.transport ?? (options.backend === 'etcd'
      ? new LazyEtcdClientTransport({ ...etcdTls(config), ...(auth === undefined ? {} : { auth }) })
      : authenticated(kind, config, auth, clock)),
  });
}

/** The transport, logging in first when `auth` is given (src/client/auth.ts). */
function authenticated(kind: 'stream' | 'http', config: ClientConfig,
  auth: ClientAuthOptions | undefined, clock: Clock): ClientTransport {
  if (auth === undefined) return transportOf(kind, config);
  let session: AuthSession | undefined;
  const inner = transportOf(kind, config, { token: () => session?.token() });
  session = new AuthSession(inner, auth, clock);
  return new AuthenticatingTransport(inner, session);
}

export interface TransportOption {
  /**
   * How the client reaches the members: `stream`, one multiplexed msgpack WebSocket per
   * member (docs/protocol.md), or `http`, HTTP/JSON requests (docs/api.md) for members older
   * than the stream or networks that do not pass WebSockets. Default: 'stream'.
   */
  readonly transport?: 'stream' | 'http' | undefined;
}

function transportOf(kind: 'stream' | 'http', config: ClientConfig, credentials?: TokenSource)
  : ClientTransport {
  const tls = { ...(config.tls === undefined ? {} : { tls: config.tls }),
    ...(credentials === undefined ? {} : { credentials }) };
  if (kind === 'stream') return new StreamClientTransport(tls);
  return new HttpClientTransport({ ...tls, socketsPerEndpointMax: 2 * config.writesInflightMax });
}

function isTimer(value: object): value is Timer {
  return typeof (value as Partial<Timer>).setTimer === 'function';
}

function stripUndefined<T extends object>(options: T): T {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as T;
}
