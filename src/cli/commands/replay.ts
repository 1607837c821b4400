/**
 * `conclave replay FILE`: serves the dashboard's replay view of a recording made by
 * `conclave sim --record FILE`, prints its URL, and waits for Ctrl-C. The page steps through
 * the run and can rerun the seed (with a fault switched off) in the browser.
 */
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { parseListenAddress, startPageServer } from '../../dashboard/page-server.js';
import { recordingProblem } from '../../sim/sim-recorder.js';
import type { CliIo } from '../io.js';

export function replayCommand(io: CliIo): Command {
  return new Command('replay')
    .description('open a recorded simulation (conclave sim --record FILE) in the dashboard')
    .argument('<file>', 'the recording (JSON)')
    .option('--ui <host:port>', 'where to serve the page', '127.0.0.1:0')
    .option('--json', 'print the URL as JSON', false)
    .action(async (file: string, opts: Record<string, unknown>) => {
      io.exitCode = await runReplay(io, file, opts);
    });
}

async function runReplay(io: CliIo, file: string, opts: Record<string, unknown>): Promise<number> {
  let recording: unknown;
  try {
    recording = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    io.err(`conclave replay: cannot read ${file}: ${(error as Error).message}`);
    return 2;
  }
  const problem = recordingProblem(recording);
  if (problem !== undefined) {
    io.err(`conclave replay: ${file} is not a recording: ${problem}`);
    return 2;
  }
  const address = parseListenAddress(String(opts['ui']));
  if ('error' in address) {
    io.err(`conclave replay: --ui: ${address.error}`);
    return 2;
  }
  const text = JSON.stringify(recording);
  const server = await startPageServer(address.host, address.port, (ws) => {
    ws.send(JSON.stringify({ type: 'hello', mode: 'replay' }));
    ws.send(`{"type":"recording","recording":${text}}`);
  });
  io.out(opts['json'] === true ? JSON.stringify({ url: server.url, file })
    : `replay of ${file} at ${server.url}#replay (Ctrl-C stops)`);
  await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
  await server.close();
  return 0;
}
