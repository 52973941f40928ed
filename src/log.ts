import cluster from 'node:cluster';
import { format } from 'node:util';
import pino, { type Logger } from 'pino';

/**
 * Structured JSON logs, one object per line. Credentials never reach a log line: authorization headers, keys,
 * tokens and payment signatures are redacted wherever they appear. Every line names its process (`pid`) and, in
 * `serve --workers N`, its worker (`worker`: 1…N; the primary's lines say 0).
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: {
        svc: 'tollgate',
        pid: process.pid,
        ...(cluster.isWorker ? { worker: cluster.worker?.id } : {}),
      },
      redact: {
        paths: [
          'req.headers.authorization',
          'headers.authorization',
          'authorization',
          '*.apiKey',
          '*.api_key',
          'api_key',
          '*.token',
          '*.access_token',
          '*.refresh_token',
          '*.client_secret',
          // OAuth: codes, verifiers, ID tokens and the sign-in cookies are credentials too.
          '*.code_verifier',
          '*.id_token',
          'req.headers.cookie',
          'headers.cookie',
          '*["set-cookie"]',
          '*["payment-signature"]',
          '*.signature',
        ],
        censor: '[redacted]',
      },
    },
    // Asynchronous stdout: lines written while a write is pending are coalesced into one syscall, so request
    // logging costs no blocking write per request. Flushed at shutdown (Gateway.close).
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal colour codes are what is removed
const ANSI = /\u001b\[[0-9;]*m/g;

/**
 * `serve`: what libraries print (console.*, process warnings such as the AWS SDK's) becomes log lines too, so the
 * gateway's output is one format. Nothing is dropped; the text keeps its words, without terminal colours.
 */
export function routeProcessOutput(log: Logger): void {
  const line =
    (level: 'info' | 'warn' | 'error' | 'debug') =>
    (...args: unknown[]) =>
      log[level]({ source: 'console' }, format(...args).replace(ANSI, ''));
  console.log = line('info');
  console.info = line('info');
  console.warn = line('warn');
  console.error = line('error');
  console.debug = line('debug');
  process.removeAllListeners('warning');
  process.on('warning', (w: Error & { code?: string }) =>
    log.warn({ source: 'node', warning: w.name, code: w.code }, w.message),
  );
}
