/**
 * The Logger port over pino: one JSON object per line on stderr (stdout stays free for the
 * command's own output, such as `conclave dev`'s ready line).
 */
import { pino, destination, type Logger as Pino } from 'pino';
import type { LogFields, Logger } from '../ports/logger.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export function createPinoLogger(fields: LogFields, level: LogLevel = 'info'): Logger {
  return wrap(pino({ level, base: { ...fields } }, destination(2)));
}

function wrap(log: Pino): Logger {
  return {
    debug: (fields, message) => log.debug(fields, message),
    info: (fields, message) => log.info(fields, message),
    warn: (fields, message) => log.warn(fields, message),
    error: (fields, message) => log.error(fields, message),
    child: (fields) => wrap(log.child(fields)),
  };
}
