import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { CookieJar, formOf, type Hop, hop } from '../e2e/oauth-helpers.js';
import type { TestGateway } from './gateway.js';

// What the alert tests talk to, all on 127.0.0.1: a webhook receiver that records every delivery (and answers
// what it is told to), a real SMTP server (the `smtp-server` package) that keeps every message, and the
// dashboard's alerts page driven over HTTP with a signed-in session.

export interface Delivery {
  headers: IncomingHttpHeaders;
  body: string;
  // biome-ignore lint/suspicious/noExplicitAny: the event JSON, read loosely in assertions
  event: any;
  /** The receiver's own check of Tollgate-Signature (below), with the secret it was given. */
  verified: boolean;
}

export interface Receiver {
  url: string;
  deliveries: Delivery[];
  /** The secret the receiver checks signatures with (the one the dashboard showed once). */
  secret: string;
  /** Statuses for the next deliveries, in order; then 200. */
  answers: number[];
  close(): Promise<void>;
}

/**
 * A receiver's check of `Tollgate-Signature`, as docs/operator.md shows it (written here on its own, not taken
 * from the gateway): HMAC-SHA256 of "<t>.<raw body>" with the secret, compared in constant time, and a
 * timestamp within 5 minutes.
 */
export function verifyTollgateSignature(secret: string, rawBody: string, header: string, nowMs: number) {
  const fields = Object.fromEntries(header.split(',').map((kv) => kv.split('=', 2))) as Record<
    string,
    string
  >;
  const t = Number(fields.t);
  if (!Number.isInteger(t) || Math.abs(nowMs / 1000 - t) > 300 || !fields.v1) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${rawBody}`).digest();
  const given = Buffer.from(fields.v1, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export async function startReceiver(now: () => number = Date.now): Promise<Receiver> {
  const r: Receiver = {
    url: '',
    deliveries: [],
    secret: '',
    answers: [],
    close: () => new Promise<void>((res) => server.close(() => res())),
  };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
      const sig = String(req.headers['tollgate-signature'] ?? '');
      r.deliveries.push({
        headers: req.headers,
        body,
        event: JSON.parse(body),
        verified: verifyTollgateSignature(r.secret, body, sig, now()),
      });
      res.writeHead(r.answers.shift() ?? 200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/tollgate`;
  return r;
}

export interface Mail {
  from: string;
  to: string[];
  subject: string;
  text: string;
}

export interface MailBox {
  url: string;
  messages: Mail[];
  close(): Promise<void>;
}

/** Quoted-printable soft breaks and escapes, as nodemailer writes long text lines. */
const unQp = (s: string) =>
  s.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));

export async function startSmtp(): Promise<MailBox> {
  const messages: Mail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      let raw = '';
      stream.setEncoding('utf8');
      stream.on('data', (c: string) => {
        raw += c;
      });
      stream.on('end', () => {
        const [head = '', ...rest] = raw.split(/\r?\n\r?\n/);
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((a) => a.address),
          subject: /^Subject: (.*)$/m.exec(head)?.[1]?.trim() ?? '',
          text: unQp(rest.join('\n\n')),
        });
        callback();
      });
    },
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', () => res()));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    close: () => new Promise<void>((res) => server.close(() => res())),
  };
}

/** The alerts page of one account, signed in with its key. */
export interface AlertsPage {
  jar: CookieJar;
  get(): Promise<Hop>;
  /** Submits the settings form (every field given; `events` default: the form's checked boxes). */
  save(fields: Record<string, string | string[]>): Promise<Hop>;
  post(suffix: string): Promise<Hop>;
}

export async function alertsPage(t: TestGateway, key: string): Promise<AlertsPage> {
  const jar = new CookieJar();
  const signIn = await hop(jar, `${t.url}/account/signin`);
  const f = formOf(signIn.text, '/account/signin');
  const done = await hop(jar, `${t.url}${f.action}`, { form: { csrf: f.csrf, api_key: key } });
  if (done.status !== 303) throw new Error(`sign-in failed: ${done.status}`);
  const get = () => hop(jar, `${t.url}/account/alerts`);
  async function submit(suffix: string, fields: Record<string, string | string[]>): Promise<Hop> {
    const page = await get();
    const form = formOf(page.text, suffix);
    const body = new URLSearchParams({ csrf: form.csrf });
    for (const [k, v] of Object.entries(fields)) {
      for (const one of Array.isArray(v) ? v : [v]) body.append(k, one);
    }
    const res = await fetch(`${t.url}${form.action}`, {
      method: 'POST',
      headers: {
        cookie: jar.header(`${t.url}${form.action}`),
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: body.toString(),
      redirect: 'manual',
    });
    jar.store(res);
    const location = res.headers.get('location');
    return { status: res.status, location, text: await res.text(), res };
  }
  return {
    jar,
    get,
    save: (fields) => submit('/account/alerts', fields),
    post: (suffix) => submit(suffix, {}),
  };
}

/** The signing secret a page showed once, if it did. */
export const shownSecret = (html: string) => /id="webhook-secret">([^<]+)</.exec(html)?.[1];

export async function waitFor<T>(
  what: string,
  f: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 10_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Lets the background passes run a few times (nothing more should arrive). */
export const settle = (ms = 2_500) => new Promise((r) => setTimeout(r, ms));
