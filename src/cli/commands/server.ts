/**
 * `conclave server`: runs one member of a consistent core until SIGTERM or SIGINT, then stops
 * cleanly (listeners closed, Raft stopped; leadership is handed over first when supported).
 * Fatal means exit: a refusal at start (a foreign or damaged data dir, a port in use, EACCES,
 * ENOSPC) prints one line and exits 1 with nothing left listening; a fatal error while running
 * (the disk failed) closes the listeners, prints one line and exits 1, so that a supervisor
 * restarts the member or alerts.
 */
import { Command, Option } from 'commander';
import { createPinoLogger, type LogLevel } from '../../adapters/pino-logger.js';
import { parsePeerAddress, type PeerAddress } from '../../adapters/peer-address.js';
import type { ConfigProblem } from '../../core/config.js';
import { formatConfigProblems } from '../../core/config.js';
import { nodeId } from '../../core/ids.js';
import { ConfigInvalidError, CoordError } from '../../errors.js';
import { dashboardAddOn } from '../../dashboard/index.js';
import {
  CLIENT_LIMITS_DEFAULTS, REQUEST_BYTES_CEILING, type ClientLimits,
} from '../../server/client-limits.js';
import { startServer, type RunningServer } from '../../server/server.js';
import {
  parseMemberList, parseRetention, SERVER_DEFAULTS, type ClientTlsFiles, type ServerConfig,
  type TlsFiles,
} from '../../server/server-config.js';
import type { CliIo } from '../io.js';
import { integerIn } from '../parse.js';

/** One flag per client limit (client-limits.ts documents each): flag, field, range, help. */
const LIMIT_FLAGS: readonly [string, keyof ClientLimits, number, number, string][] = [
  ['--max-request-bytes', 'requestBytesMax', 4096, REQUEST_BYTES_CEILING,
    'largest request body; larger is 413 CONCLAVE_REQUEST_INVALID'],
  ['--quota-backend-bytes', 'quotaBytes', 8192, Number.MAX_SAFE_INTEGER,
    'space quota of keys and values; past it writes get 507 CONCLAVE_QUOTA_EXCEEDED (NOSPACE)'],
  ['--max-connections', 'connectionsMax', 1, 1_000_000, 'client connections open at once'],
  ['--max-inflight-body-bytes', 'inflightBodyBytesMax', 4096, Number.MAX_SAFE_INTEGER,
    'request body bytes held at once over all connections'],
  ['--max-connection-body-bytes', 'connectionBodyBytesMax', 4096, Number.MAX_SAFE_INTEGER,
    'request body bytes one connection may hold (default: 2 × --max-request-bytes)'],
  ['--body-timeout-ms', 'bodyTimeoutMs', 1, 3_600_000, 'a request body must arrive within this'],
  ['--header-timeout-ms', 'headerTimeoutMs', 1, 3_600_000,
    'request headers must arrive within this'],
  ['--idle-timeout-ms', 'idleTimeoutMs', 1, 3_600_000,
    'an idle keep-alive connection is closed after this'],
  ['--max-watchers', 'watchersMax', 1, 10_000_000, 'watch streams open at once'],
  ['--max-connection-watchers', 'connectionWatchersMax', 1, 100_000,
    'watch streams one connection may open'],
  ['--max-watcher-buffer-bytes', 'watcherBufferBytesMax', 4096, Number.MAX_SAFE_INTEGER,
    'bytes queued for one watcher; past it a live watcher is canceled "slow"'],
  ['--max-watch-buffer-bytes', 'watchBufferBytesMax', 4096, Number.MAX_SAFE_INTEGER,
    'bytes queued for all watchers (shared events counted once)'],
];

export function serverCommand(io: CliIo): Command {
  const command = new Command('server')
    .description('run one member of a Conclave consistent core (Raft + key-value store + HTTP API)')
    .requiredOption('--name <name>', 'this member\'s name, one of --cluster')
    .requiredOption('--data-dir <dir>',
      'directory for the write-ahead log (DIR/wal) and snapshots (DIR/snap), created if missing')
    .requiredOption('--peer-addr <host:port>', 'where peers reach this member (loopback unless --insecure)')
    .requiredOption('--client-addr <host:port>', 'where clients reach this member over HTTP')
    .requiredOption('--cluster <list>', 'every member\'s peer address: n1=HOST:PORT,n2=HOST:PORT,...')
    .option('--client-urls <list>', 'every member\'s client address (lets followers redirect to the leader): n1=HOST:PORT,...')
    .option('--heartbeat-ms <ms>', 'leader heartbeat interval', integerIn(1, 60_000), SERVER_DEFAULTS.heartbeatMs)
    .option('--election-timeout-ms <ms>', 'election timeout (each member draws from [T, 2T))', integerIn(2, 600_000), SERVER_DEFAULTS.electionTimeoutMs)
    .option('--cluster-name <name>', 'checked in every peer handshake', SERVER_DEFAULTS.clusterName)
    .option('--initial-cluster-token <token>', 'makes the cluster id unique (written into the ' +
      'data dir, checked at every start and by peers): the same on every member and restart, ' +
      'another for every cluster', SERVER_DEFAULTS.initialClusterToken)
    .addOption(new Option('--initial-cluster-state <state>', 'new: bootstrap --cluster; '
      + 'existing: join a running cluster after conclave member add (needs --cluster-id)')
      .choices(['new', 'existing']).default('new'))
    .option('--cluster-id <id>', 'with --initial-cluster-state existing: the running '
      + 'cluster\'s id (conclave member list)')
    .option('--peer-cert <file>', 'this member\'s certificate (PEM) for mutual TLS between ' +
      'peers; it must name this member (conclave certs member NAME)')
    .option('--peer-key <file>', 'the private key of --peer-cert (PEM)')
    .option('--peer-ca <file>', 'the cluster CA (PEM): peers must present certificates it signed')
    .option('--peer-secret-file <file>', 'without peer TLS: the cluster secret, the same file ' +
      'for every member (created, mode 0600, when missing); default for a one-member cluster: ' +
      'DATA_DIR/peer-secret')
    .option('--client-cert <file>', 'serve clients over HTTPS with this certificate (PEM)')
    .option('--client-key <file>', 'the private key of --client-cert (PEM)')
    .option('--client-ca <file>', 'require client certificates signed by this CA (PEM)')
    .option('--stop-on-stdin-close', 'stop, without handing leadership over, when standard '
      + 'input closes: for a supervisor (conclave dev) whose own end, or whose whole-cluster '
      + 'stop, must end this member', false)
    .option('--insecure', 'allow non-loopback listeners without TLS, peers without any ' +
      'authentication, and a data dir more open than 0700 (docs/security.md)', false)
    .option('--auth-token-ttl <seconds>', 'how long an auth token is good for (etcd\'s flag; '
      + 'docs/security.md)', integerIn(10, 86_400), 300)
    .option('--snapshot-count <entries>', 'snapshot the store every this many applied entries '
      + 'and drop the log before it (etcd\'s flag; 0: never; docs/operations.md)',
    integerIn(0, 100_000_000), SERVER_DEFAULTS.snapshotCount)
    .option('--snapshot-catchup-entries <entries>', 'entries kept in memory below a snapshot, '
      + 'so a follower that far behind catches up without the whole snapshot',
    integerIn(0, 100_000_000), SERVER_DEFAULTS.snapshotCatchUpEntries)
    .addOption(new Option('--auto-compaction-mode <mode>', 'periodic: keep a span of time of '
      + 'history; revision: keep a number of revisions').choices(['periodic', 'revision'])
      .default(SERVER_DEFAULTS.autoCompaction.mode))
    .option('--auto-compaction-retention <value>', 'history to keep: periodic mode, a duration '
      + '(30m, 1h30m) or hours (1); revision mode, revisions (1000); 0: no automatic compaction',
    '0')
    .addOption(new Option('--log-level <level>', 'log level (JSON lines on stderr)').choices(['debug', 'info', 'warn', 'error', 'silent']).default('info'));
  for (const [flag, field, min, max, help] of LIMIT_FLAGS) {
    const option = new Option(`${flag} <n>`, help).argParser(integerIn(min, max));
    if (field !== 'connectionBodyBytesMax') option.default(CLIENT_LIMITS_DEFAULTS[field]);
    command.addOption(option);
  }
  return command.action((opts: Record<string, unknown>) => runServer(io, opts));
}

/** Starts the member and serves until SIGTERM or SIGINT (or a fatal error exits). */
async function runServer(io: CliIo, opts: Record<string, unknown>): Promise<void> {
  const config = serverConfigFrom(opts);
  const logger = createPinoLogger({ member: config.name }, opts['logLevel'] as LogLevel);
  const server = await startServer(config, logger, {
    addOn: dashboardAddOn,
    onFatal: (error) =>
      exitFatally(io, `conclave server ${config.name}: stopped: ${error.message}`),
  }).catch((error: unknown): RunningServer => {
    // A bad configuration is a usage error (exit 2, printed by the caller); anything else
    // is a refusal: nothing is left listening, so say why and exit now.
    if (error instanceof CoordError && error.code === 'CONCLAVE_CONFIG_INVALID') throw error;
    exitFatally(io, `conclave: ${error instanceof Error ? error.message : String(error)}`);
  });
  const peerScheme = config.peerTls === undefined ? 'tcp' : 'tls';
  io.out(`conclave server ${server.id}: clients ${server.clientUrl}, ` +
    `peers ${peerScheme}://${opts['peerAddr'] as string}, dashboard ${server.clientUrl}/ui/`);
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: string, handOver: boolean): void => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal, handOver }, 'stopping');
      const done = (): void => {
        if (opts['stopOnStdinClose'] === true) process.stdin.destroy(); // else it holds us open
        resolve();
      };
      server.stop({ handOver }).then(done, done);
    };
    process.once('SIGTERM', () => stop('SIGTERM', true));
    process.once('SIGINT', () => stop('SIGINT', true));
    if (opts['stopOnStdinClose'] === true) {
      // The supervisor holds the other end: its exit (even kill -9) or its stop closes it.
      process.stdin.on('data', () => undefined);
      process.stdin.once('end', () => stop('stdin closed', false));
      process.stdin.once('error', () => stop('stdin error', false));
    }
  });
}

/**
 * The end of a member that cannot go on (its listeners are closed by then): one line on
 * stderr, exit 1 at once, whatever handle is left (a supervisor restarts it or alerts).
 */
function exitFatally(io: CliIo, line: string): never {
  io.err(line);
  process.exit(1);
}

function serverConfigFrom(opts: Record<string, unknown>): ServerConfig {
  const problems: ConfigProblem[] = [];
  const address = (field: string, text: unknown): PeerAddress => {
    const parsed = parsePeerAddress(String(text));
    if ('error' in parsed) {
      problems.push({ field, value: text, rule: parsed.error });
      return { host: '127.0.0.1', port: 0 };
    }
    return parsed;
  };
  const config: ServerConfig = {
    name: nodeId(String(opts['name'])),
    dataDir: String(opts['dataDir']),
    peerAddress: address('--peer-addr', opts['peerAddr']),
    clientAddress: address('--client-addr', opts['clientAddr']),
    cluster: parseMemberList(String(opts['cluster']), '--cluster', problems),
    clientAddresses: parseMemberList(String(opts['clientUrls'] ?? ''), '--client-urls', problems),
    heartbeatMs: opts['heartbeatMs'] as number,
    electionTimeoutMs: opts['electionTimeoutMs'] as number,
    insecure: opts['insecure'] === true,
    clusterName: String(opts['clusterName']),
    initialClusterToken: String(opts['initialClusterToken']),
    initialClusterState: opts['initialClusterState'] === 'existing' ? 'existing' : 'new',
    clusterId: typeof opts['clusterId'] === 'string' ? opts['clusterId'] : undefined,
    peerTls: tlsFiles(problems, '--peer', opts['peerCert'], opts['peerKey'], opts['peerCa'],
      true) as TlsFiles | undefined,
    peerSecretFile: opts['peerSecretFile'] === undefined ? undefined
      : String(opts['peerSecretFile']),
    clientTls: tlsFiles(problems, '--client', opts['clientCert'], opts['clientKey'],
      opts['clientCa'], false),
    snapshotCount: opts['snapshotCount'] as number,
    authTokenTtlMs: (opts['authTokenTtl'] as number) * 1000,
    snapshotCatchUpEntries: opts['snapshotCatchupEntries'] as number,
    autoCompaction: { ...SERVER_DEFAULTS.autoCompaction,
      mode: opts['autoCompactionMode'] as 'periodic' | 'revision',
      retention: parseRetention(String(opts['autoCompactionMode']),
        String(opts['autoCompactionRetention']), problems) },
    limits: limitsFrom(opts),
  };
  if (problems.length > 0) throw new ConfigInvalidError(formatConfigProblems(problems));
  return config;
}

/** The TLS files of one port: all given (the CA optional when `caRequired` is false), or none. */
function tlsFiles(problems: ConfigProblem[], prefix: string, cert: unknown, key: unknown,
  ca: unknown, caRequired: boolean): ClientTlsFiles | undefined {
  const given = [cert, key, ca].filter((v) => v !== undefined).length;
  if (given === 0) return undefined;
  if (cert === undefined || key === undefined || (caRequired && ca === undefined)) {
    const names = caRequired ? `${prefix}-cert, ${prefix}-key and ${prefix}-ca go together`
      : `${prefix}-cert and ${prefix}-key go together (${prefix}-ca needs both)`;
    problems.push({ field: `${prefix}-cert`, value: { cert, key, ca }, rule: names });
    return undefined;
  }
  return { certFile: String(cert), keyFile: String(key),
    ...(ca === undefined ? {} : { caFile: String(ca) }) };
}

/** Commander's option key: `--max-request-bytes` is `maxRequestBytes`. */
function attributeOf(flag: string): string {
  return flag.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

function limitsFrom(opts: Record<string, unknown>): ClientLimits {
  const limits: Record<string, number> = {};
  for (const [flag, field] of LIMIT_FLAGS) {
    const value = opts[attributeOf(flag)];
    if (typeof value === 'number') limits[field] = value;
  }
  const requestBytesMax = limits['requestBytesMax'] ?? CLIENT_LIMITS_DEFAULTS.requestBytesMax;
  // Two requests of the largest size may be pipelined on one connection.
  limits['connectionBodyBytesMax'] ??= 2 * requestBytesMax;
  return { ...CLIENT_LIMITS_DEFAULTS, ...limits };
}
