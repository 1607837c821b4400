/** Where the CLI reads and writes, so tests can capture it. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  exitCode: number;
  /**
   * All of standard input, for a value or a txn given on stdin (absent: process.stdin). Tests
   * pass text here instead of a pipe.
   */
  readStdin?: () => Promise<string>;
  /** Whether stdin is a terminal (prompts are printed for a person only). Default: process's. */
  readonly stdinIsTty?: boolean;
}

/** Standard input as text: `io.readStdin` when given, else process.stdin to its end. */
export async function readAllStdin(io: CliIo): Promise<string> {
  if (io.readStdin !== undefined) return io.readStdin();
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export function stdinIsTty(io: CliIo): boolean {
  return io.stdinIsTty ?? process.stdin.isTTY === true;
}
