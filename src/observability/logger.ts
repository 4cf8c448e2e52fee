import { pino, type Logger } from 'pino';

export type { Logger };

// Authorization headers, cookies, passwords and tokens never reach a log line, even by accident.
const REDACT = ['req.headers.authorization', 'req.headers.cookie', 'password', 'token', '*.password', '*.token', 'authorization', 'cookie'];

export function createLogger(level: string): Logger {
  return pino({ level, redact: { paths: REDACT, censor: '[redacted]' }, base: { service: 'telemetry' } });
}
