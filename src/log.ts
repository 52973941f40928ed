import pino, { type Logger } from 'pino';

/**
 * Structured JSON logs. Credentials never reach a log line: authorization headers, keys, tokens and
 * payment signatures are redacted wherever they appear.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
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
    // Asynchronous stdout: lines written while a write is pending are coalesced into one syscall, so request
    // logging costs no blocking write per request. Flushed at shutdown (Gateway.close).
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}
