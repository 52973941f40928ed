import pino, { type Logger } from 'pino';

/**
 * Structured JSON logs. Credentials never reach a log line: authorization headers, keys, tokens and
 * payment signatures are redacted wherever they appear.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  // Asynchronous stdout, written 4 KiB at a time (and at least every 100 ms, so a quiet gateway's lines still
  // appear at once): under load one syscall carries a few dozen request lines instead of one each. Flushed at
  // shutdown (Gateway.close); a crash can lose the last 100 ms of lines.
  const dest = destination ?? pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 100 });
  const log = pino(
    {
      level,
      base: { svc: 'tollgate' },
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
    dest,
  );
  REQUEST_LINES.set(log, (line) => {
    if (!log.isLevelEnabled('info')) return;
    dest.write(
      `{"level":30,"time":${Date.now()},"svc":"tollgate","req_id":${JSON.stringify(line.req_id)},"method":${JSON.stringify(line.method)},"path":${JSON.stringify(line.path)},"status":${line.status},"ms":${line.ms},"msg":"request"}\n`,
    );
  });
  return log;
}

/** The one line logged per request (src/lib/request-log.ts). */
export interface RequestLine {
  req_id: string;
  method: string;
  path: string;
  status: number;
  ms: number;
}

/**
 * The request line of the gateway's own loggers, written as pino writes `log.info(line, 'request')` (same
 * fields, same order) but without pino's per-call redaction pass, which costs ~9 µs of CPU for a line whose
 * fields are all ours (an id, the method, the path, the status, a duration): no credential can be in it.
 */
const REQUEST_LINES = new WeakMap<Logger, (line: RequestLine) => void>();

/** Logs one request: the fast line for a logger made by createLogger, pino's own for any other. */
export function logRequest(log: Logger, line: RequestLine): void {
  const fast = REQUEST_LINES.get(log);
  if (fast) fast(line);
  else log.info(line, 'request');
}
