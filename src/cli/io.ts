/** Where the CLI writes, so tests can capture it. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  exitCode: number;
}
