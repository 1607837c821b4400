/**
 * Structured logging, pino-compatible: a context object first, then a message. The real adapter
 * is pino writing JSON lines; the simulator's logger records lines against virtual time.
 */
export type LogFields = Readonly<Record<string, unknown>>;

export interface Logger {
  debug(fields: LogFields, message: string): void;
  info(fields: LogFields, message: string): void;
  warn(fields: LogFields, message: string): void;
  error(fields: LogFields, message: string): void;
  /** A logger that adds `fields` to every line. */
  child(fields: LogFields): Logger;
}

/** A logger that drops everything, for tests and the simulator's fast path. */
export const SILENT_LOGGER: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => SILENT_LOGGER,
};
