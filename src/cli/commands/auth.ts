/**
 * `conclave auth enable|disable|status`, `conclave user ...` and `conclave role ...`: users,
 * roles and permissions, in etcdctl's shapes (docs/security.md, "Authentication"). Each is one
 * auth call (src/server/auth-calls.ts) through the client; while auth is on, they need
 * `--user root` (or another user holding the role root). Passwords: `NAME:PASSWORD`,
 * `--new-user-password`, or the first line of stdin when neither is given (never echoed, never
 * logged). Exit 0 when done, 1 when the cluster refused or could not be reached, 2 on usage.
 */
import { Command, InvalidArgumentError } from 'commander';
import type { ConclaveClient } from '../../client/index.js';
import { UsageError } from '../../errors.js';
import { readAllStdin, stdinIsTty, type CliIo } from '../io.js';
import { addClientOptions, withClient, type ClientFlags } from './client-options.js';

type Flags = ClientFlags & { newUserPassword?: string; prefix?: boolean };

/** Runs one auth call: prints `said` (or the JSON answer). */
function run(io: CliIo, name: string, flags: Flags,
  call: (client: ConclaveClient) => Promise<{ answer: unknown; said: string | string[] }>)
  : Promise<void> {
  return withClient(io, name, flags, true, async (client) => {
    const { answer, said } = await call(client);
    if (flags.json === true) io.out(JSON.stringify(answer));
    else for (const line of typeof said === 'string' ? [said] : said) io.out(line);
    return 0;
  }).then((code) => {
    io.exitCode = code;
  });
}

export function authCommand(io: CliIo): Command {
  const command = new Command('auth')
    .description('turn authentication on or off, or show whether it is on (etcdctl auth); '
      + 'enabling needs a user root (conclave user add root)');
  const simple = (name: 'enable' | 'disable' | 'status', description: string,
    said: (answer: unknown) => string): void => {
    command.addCommand(addClientOptions(new Command(name).description(description))
      .action((flags: Flags) => run(io, `auth ${name}`, flags, async (client) => {
        const answer = await client.authCall(`auth-${name}`);
        return { answer, said: said(answer) };
      })));
  };
  simple('enable', 'turn authentication on: every call then needs a user\'s token',
    () => 'Authentication Enabled');
  simple('disable', 'turn authentication off (users and roles are kept)',
    () => 'Authentication Disabled');
  simple('status', 'whether authentication is on', (answer) =>
    `Authentication Status: ${(answer as { enabled?: boolean }).enabled === true}`);
  return command;
}

export function userCommand(io: CliIo): Command {
  const command = new Command('user')
    .description('add, delete, list and inspect users, set passwords and roles (etcdctl user)');
  const sub = (name: string, description: string): Command => {
    const c = addClientOptions(new Command(name).description(description));
    command.addCommand(c);
    return c;
  };
  sub('add', 'add a user (the user root holds the role root)')
    .argument('<name[:password]>', 'the user, and its password after a colon')
    .option('--new-user-password <password>', 'the password (else NAME:PASSWORD, else stdin)')
    .action((spec: string, flags: Flags) => run(io, 'user add', flags, async (client) => {
      const [name, password] = await nameAndPassword(io, spec, flags);
      return { answer: await client.authCall('user-add', { name, password }),
        said: `User ${name} created` };
    }));
  sub('delete', 'delete a user (its tokens stop working)').argument('<name>')
    .action((name: string, flags: Flags) => run(io, 'user delete', flags, async (client) => ({
      answer: await client.authCall('user-delete', { name }), said: `User ${name} deleted` })));
  sub('list', 'list the users').action((flags: Flags) => run(io, 'user list', flags,
    async (client) => {
      const answer = await client.authCall('user-list') as { users: string[] };
      return { answer, said: answer.users };
    }));
  sub('get', 'show a user\'s roles').argument('<name>')
    .action((name: string, flags: Flags) => run(io, 'user get', flags, async (client) => {
      const answer = await client.authCall('user-get', { name }) as { roles: string[] };
      return { answer, said: [`User: ${name}`, `Roles: ${answer.roles.join(' ')}`] };
    }));
  sub('passwd', 'change a user\'s password (its older tokens stop working)')
    .argument('<name[:password]>')
    .option('--new-user-password <password>', 'the password (else NAME:PASSWORD, else stdin)')
    .action((spec: string, flags: Flags) => run(io, 'user passwd', flags, async (client) => {
      const [name, password] = await nameAndPassword(io, spec, flags);
      return { answer: await client.authCall('user-passwd', { name, password }),
        said: 'Password updated' };
    }));
  for (const [verb, done] of [['grant-role', 'granted'], ['revoke-role', 'revoked']] as const) {
    sub(verb, `${verb === 'grant-role' ? 'grant a role to' : 'revoke a role from'} a user`)
      .argument('<user>').argument('<role>')
      .action((name: string, role: string, flags: Flags) => run(io, `user ${verb}`, flags,
        async (client) => ({ answer: await client.authCall(`user-${verb}`, { name, role }),
          said: `Role ${role} is ${done} ${done === 'granted' ? 'to' : 'from'} user ${name}` })));
  }
  return command;
}

export function roleCommand(io: CliIo): Command {
  const command = new Command('role')
    .description('add, delete, list and inspect roles and their permissions (etcdctl role)');
  const sub = (name: string, description: string): Command => {
    const c = addClientOptions(new Command(name).description(description));
    command.addCommand(c);
    return c;
  };
  sub('add', 'add a role (no permissions yet)').argument('<name>')
    .action((name: string, flags: Flags) => run(io, 'role add', flags, async (client) => ({
      answer: await client.authCall('role-add', { name }), said: `Role ${name} created` })));
  sub('delete', 'delete a role (users lose it)').argument('<name>')
    .action((name: string, flags: Flags) => run(io, 'role delete', flags, async (client) => ({
      answer: await client.authCall('role-delete', { name }), said: `Role ${name} deleted` })));
  sub('list', 'list the roles (root is built in)').action((flags: Flags) =>
    run(io, 'role list', flags, async (client) => {
      const answer = await client.authCall('role-list') as { roles: string[] };
      return { answer, said: answer.roles };
    }));
  sub('get', 'show a role\'s permissions').argument('<name>')
    .action((name: string, flags: Flags) => run(io, 'role get', flags, async (client) => {
      const answer = await client.authCall('role-get', { name }) as { permissions:
        { type: string; key: string; prefix?: boolean }[] };
      return { answer, said: [`Role ${name}`, ...answer.permissions.map((p) =>
        `${p.type}: ${p.prefix === true ? `${p.key}* (prefix)` : p.key}`)] };
    }));
  sub('grant-permission', 'let a role read, write or both on KEY (every key under it with '
    + '--prefix)').argument('<name>').argument('<type>', 'read, write or readwrite', permType)
    .argument('<key>').option('--prefix', 'KEY is a prefix (an empty KEY: every key)', false)
    .action((name: string, type: string, key: string, flags: Flags) =>
      run(io, 'role grant-permission', flags, async (client) => ({
        answer: await client.authCall('role-grant-permission', { name, type, key,
          ...(flags.prefix === true ? { prefix: true } : {}) }),
        said: `Role ${name} updated` })));
  sub('revoke-permission', 'take back a role\'s permission on KEY (or on the prefix)')
    .argument('<name>').argument('<key>').option('--prefix', 'KEY is a prefix', false)
    .action((name: string, key: string, flags: Flags) =>
      run(io, 'role revoke-permission', flags, async (client) => ({
        answer: await client.authCall('role-revoke-permission', { name, key,
          ...(flags.prefix === true ? { prefix: true } : {}) }),
        said: `Permission of ${key} is revoked from role ${name}` })));
  return command;
}

function permType(value: string): string {
  if (!['read', 'write', 'readwrite'].includes(value)) {
    throw new InvalidArgumentError('expected read, write or readwrite');
  }
  return value;
}

/** `NAME:PASSWORD`, or NAME with --new-user-password, or NAME and the first line of stdin. */
async function nameAndPassword(io: CliIo, spec: string, flags: Flags)
  : Promise<[string, string]> {
  const colon = spec.indexOf(':');
  const name = colon < 0 ? spec : spec.slice(0, colon);
  if (colon >= 0) return [name, spec.slice(colon + 1)];
  if (flags.newUserPassword !== undefined) return [name, flags.newUserPassword];
  if (stdinIsTty(io)) {
    throw new UsageError(`give ${name}'s password as ${name}:PASSWORD, with `
      + '--new-user-password, or on stdin');
  }
  const line = (await readAllStdin(io)).split(/\r?\n/)[0] ?? '';
  if (line === '') throw new UsageError(`no password for ${name} on stdin`);
  return [name, line];
}
