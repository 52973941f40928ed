import cluster from 'node:cluster';
import { format } from 'node:util';
import pino, { type Logger } from 'pino';

/**
 * Structured JSON logs, one object per line. Credentials never reach a log line: authorization headers, keys,
 * tokens and payment signatures are redacted wherever they appear. Every line names its process (`pid`) and, in
 * `serve --workers N`, its worker (`worker`: 1…N; the primary's lines say 0).
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  // Asynchronous stdout, written 4 KiB at a time (and within 100 ms of a line, so a quiet gateway's lines still
  // appear at once): under load one syscall carries a few dozen request lines instead of one each. Flushed at
  // shutdown (Gateway.close); a crash can lose the last 100 ms of lines.
  const dest = destination ?? flushedWithin(pino.destination({ dest: 1, sync: false, minLength: 4096 }), 100);
  const base = {
    svc: 'tollgate',
    pid: process.pid,
    ...(cluster.isWorker ? { worker: cluster.worker?.id } : {}),
  };
  // The base fields as pino writes them after `time`, serialized once.
  const baseJson = JSON.stringify(base).slice(1, -1);
  const log = pino(
    {
      level,
      base,
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
      `{"level":30,"time":${Date.now()},${baseJson},"req_id":${JSON.stringify(line.req_id)},"method":${JSON.stringify(line.method)},"path":${JSON.stringify(line.path)},"status":${line.status},"ms":${line.ms},"msg":"request"}\n`,
    );
  });
  return log;
}

/**
 * Flushes what `boom` buffers within `ms` of a write. Not sonic-boom's `periodicFlush`: its interval flushes
 * whether or not anything was written, an empty write on libuv's pool every 100 ms that kept an idle gateway's
 * threads waking ten times a second (docs/decisions.md "Request lines without the redaction pass"). The timer
 * here exists only while a line waits.
 */
export function flushedWithin(boom: SonicBoom, ms: number): SonicBoom {
  const write = boom.write.bind(boom);
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    timer = setTimeout(flush, ms);
    timer.unref();
  };
  const flush = () => {
    timer = undefined;
    // A flush asked while a write is in flight does nothing, and the lines buffered meanwhile would wait for the
    // next line to arm a timer: ask again later. (`_writing` is sonic-boom's own flag; without it, flush anyway.)
    if ((boom as unknown as { _writing?: boolean })._writing) return arm();
    try {
      boom.flush();
    } catch {
      // Ended at shutdown while the timer waited: its last flush wrote everything.
    }
  };
  boom.write = (data: string) => {
    const ok = write(data);
    if (!timer) arm();
    return ok;
  };
  return boom;
}

type SonicBoom = ReturnType<typeof pino.destination>;

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
