import pino, { type Logger } from 'pino';
import type { LogLevel } from '../config.ts';

/** JSON logs on stdout; credentials never reach them. */
export function createLogger(level: LogLevel, destination?: pino.DestinationStream): Logger {
  return pino({
    level,
    base: { service: 'berth' },
    redact: { paths: ['req.headers["x-api-key"]', 'req.headers.authorization', '*.secret_access_key', '*.session_token', '*.secrets[*].value'], censor: '[redacted]' },
  }, destination);
}
