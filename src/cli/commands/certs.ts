/**
 * `conclave certs`: a cluster CA, member certificates and client certificates, made with the
 * openssl command (src/cli/certs-openssl.ts says why). docs/security.md shows the whole set-up.
 *
 *   conclave certs init --dir certs                      # certs/ca.crt, certs/ca.key
 *   conclave certs member n1 --dir certs --host 10.0.0.1 --host n1.example
 *   conclave certs client alice --dir certs
 */
import { resolve } from 'node:path';
import { Command } from 'commander';
import {
  CA_DAYS_DEFAULT, LEAF_DAYS_DEFAULT, caFiles, createCa, createClientCert, createMemberCert,
  type CertFiles,
} from '../certs-openssl.js';
import type { CliIo } from '../io.js';
import { integerIn } from '../parse.js';

export function certsCommand(io: CliIo): Command {
  const certs = new Command('certs')
    .description('make a cluster CA and member/client certificates (with the openssl command)');
  certs.addCommand(new Command('init')
    .description('create the cluster CA: DIR/ca.crt (give to every member and client) and ' +
      'DIR/ca.key (keep secret: it signs members)')
    .requiredOption('--dir <dir>', 'where the CA and the certificates it signs live')
    .option('--name <cluster>', 'the cluster name in the CA\'s subject', 'conclave')
    .option('--days <n>', 'validity', integerIn(1, 36_500), CA_DAYS_DEFAULT)
    .option('--json', 'print the file paths as JSON', false)
    .action((opts: Record<string, unknown>) => {
      const dir = resolve(String(opts['dir']));
      const files = createCa(dir, { name: String(opts['name']), days: opts['days'] as number });
      report(io, opts, 'the cluster CA', files, files.certFile);
    }));
  certs.addCommand(new Command('member')
    .description('a member certificate DIR/NAME.crt + .key: NAME is the member id (--name of ' +
      'conclave server); for --peer-cert/--peer-key, and --client-cert/--client-key')
    .argument('<name>', 'the member id')
    .requiredOption('--dir <dir>', 'the CA directory (conclave certs init)')
    .option('--host <host>', 'a DNS name or IP clients use to reach the member (repeatable; ' +
      'default localhost and 127.0.0.1)', (value: string, previous: string[]) =>
      [...previous, ...value.split(',').filter((h) => h.length > 0)], [] as string[])
    .option('--days <n>', 'validity', integerIn(1, 36_500), LEAF_DAYS_DEFAULT)
    .option('--json', 'print the file paths as JSON', false)
    .action((name: string, opts: Record<string, unknown>) => {
      const dir = resolve(String(opts['dir']));
      const files = createMemberCert(dir, name,
        { hosts: opts['host'] as string[], days: opts['days'] as number });
      report(io, opts, `member ${name}`, files, caFiles(dir).certFile);
    }));
  certs.addCommand(new Command('client')
    .description('a client certificate DIR/NAME.crt + .key (CN = NAME; never accepted as a ' +
      'member) for servers started with --client-ca')
    .argument('<name>', 'the user\'s name')
    .requiredOption('--dir <dir>', 'the CA directory (conclave certs init)')
    .option('--days <n>', 'validity', integerIn(1, 36_500), LEAF_DAYS_DEFAULT)
    .option('--json', 'print the file paths as JSON', false)
    .action((name: string, opts: Record<string, unknown>) => {
      const dir = resolve(String(opts['dir']));
      const files = createClientCert(dir, name, { days: opts['days'] as number });
      report(io, opts, `client ${name}`, files, caFiles(dir).certFile);
    }));
  // main copies its output and exit settings to `certs` only; pass them on to the subcommand.
  certs.hook('preSubcommand', (parent, sub) => {
    sub.copyInheritedSettings(parent);
  });
  return certs;
}

function report(io: CliIo, opts: Record<string, unknown>, what: string, files: CertFiles,
  caFile: string): void {
  if (opts['json'] === true) {
    io.out(JSON.stringify({ cert: files.certFile, key: files.keyFile, ca: caFile }));
  } else {
    io.out(`created ${what}: ${files.certFile} and ${files.keyFile} (mode 0600; CA ${caFile})`);
  }
}
