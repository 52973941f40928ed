import type { Logger } from 'pino';
import type { Authenticator } from '../../auth/authenticator.js';
import { databaseUnavailable, isDatabaseUnavailable } from '../errors.js';

// Whether the gateway's database answers. A failure that means it does not (src/errors.ts isDatabaseUnavailable)
// starts an outage: logged once with its cause, new paid calls refused at admission with a retryable 503 (no work
// is started that could not be billed), /readyz unready — until a probe succeeds. The probe runs every
// `probeMs` while the outage lasts: PostgreSQL answers a query; SQLite takes a small durable write (a full or
// read-only disk refuses it). When it answers, the outage's end is logged once and whatever was left unresolved
// meanwhile is resolved (onRecovered: holds whose capture or void could not be written).

/** Resolves when the database answers (and, for SQLite, takes a write). */
export type DatabaseProbe = () => Promise<void>;

export class DatabaseHealth {
  private downSince: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private probing = false;
  private readonly recovered: Array<() => Promise<void>> = [];
  private closed = false;

  constructor(
    private readonly probe: DatabaseProbe,
    private readonly log: Logger,
    private readonly probeMs = 500,
  ) {}

  /** True while an outage lasts. */
  get down(): boolean {
    return this.downSince !== undefined;
  }

  /** Refuses new work while the database is down: the 503 every door sends. */
  admit(): void {
    if (this.downSince !== undefined) throw databaseUnavailable();
  }

  /** Looks at a failure: one that means the database does not answer starts (or continues) an outage. */
  report(e: unknown): void {
    if (!isDatabaseUnavailable(e) || this.closed || this.downSince !== undefined) return;
    this.downSince = Date.now();
    this.log.error(
      { err: e },
      'the database is not answering: calls are refused with 503 until it does (probing every ' +
        `${this.probeMs} ms)`,
    );
    this.timer = setInterval(() => void this.check(), this.probeMs);
    this.timer.unref();
  }

  /** Runs `fn` when an outage ends (each time). */
  onRecovered(fn: () => Promise<void>): void {
    this.recovered.push(fn);
  }

  /** Runs `p`, reporting a failure that means the database does not answer. */
  async watch<T>(p: Promise<T>): Promise<T> {
    try {
      return await p;
    } catch (e) {
      this.report(e);
      throw e;
    }
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
  }

  private async check(): Promise<void> {
    if (this.probing || this.downSince === undefined) return;
    this.probing = true;
    try {
      await this.probe();
    } catch {
      return;
    } finally {
      this.probing = false;
    }
    const seconds = Math.round((Date.now() - this.downSince) / 100) / 10;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.downSince = undefined;
    this.log.warn({ outage_s: seconds }, 'the database answers again');
    for (const fn of this.recovered) {
      await fn().catch((err: unknown) => this.log.error({ err }, 'recovery after the outage failed'));
    }
  }
}

/** An authenticator whose database failures (an API-key look-up) count toward the outage. */
export function watchedAuth(auth: Authenticator, health: DatabaseHealth): Authenticator {
  return { fromAuthorization: (header) => health.watch(auth.fromAuthorization(header)) };
}
