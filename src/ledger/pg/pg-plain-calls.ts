import { isDatabaseUnavailable } from '../../errors.js';
import type { BeginRequest, CaptureRequest } from '../types.js';
import { Batches } from './pg-batch.js';
import { beginPlain, beginPlainBatch, CAPTURE_PLAIN, CAPTURE_PLAIN_BATCH, metaText } from './pg-pair.js';

// A plain call's hold and capture on PostgreSQL (no idempotency key, cap, funding or job): one statement each,
// alone when the call is alone, or batched with the others of its kind that arrive while two run (./pg-batch.ts,
// docs/decisions.md "The PostgreSQL ledger's hot path"). Each answer is whether the statement did it; when not,
// PgLedger takes the call's slow path (tg_begin, tg_capture), which does it or says why.

export type Rows = <T>(name: string | undefined, text: string, values: unknown[]) => Promise<T[]>;

/** A plain call's begin, waiting for its batch. */
interface PlainBegin {
  callId: string;
  req: BeginRequest;
  now: number;
}

/** A plain call's capture, waiting for its batch. */
interface PlainCapture {
  callId: string;
  req: CaptureRequest;
  now: number;
}

export class PgPlainCalls {
  private readonly beginPlain: { name: string; text: string };
  private readonly beginPlainBatch: { name: string; text: string };
  private readonly begins: Batches<PlainBegin>;
  private readonly captures: Batches<PlainCapture>;

  constructor(
    private readonly rows: Rows,
    private readonly replicaId: string,
    asyncHolds: boolean,
    batchesInFlight: number,
  ) {
    this.beginPlain = beginPlain(asyncHolds);
    this.beginPlainBatch = beginPlainBatch(asyncHolds);
    this.begins = new Batches((items) => this.beginMany(items), batchesInFlight);
    this.captures = new Batches((items) => this.captureMany(items), batchesInFlight);
  }

  /** Whether the plain hold was taken (false: refused, unknown, or left out of its batch). */
  begin(callId: string, req: BeginRequest, now: number): Promise<boolean> {
    return this.begins.add({ callId, req, now });
  }

  /** Whether the plain capture was posted (false: not a plain pending hold covering the amount). */
  capture(callId: string, req: CaptureRequest, now: number): Promise<boolean> {
    return this.captures.add({ callId, req, now });
  }

  /** Plain begins, one statement for them all (one alone: its own statement). Which of them started. */
  private async beginMany(items: PlainBegin[]): Promise<boolean[]> {
    const one = items.length === 1 ? items[0] : undefined;
    if (one) {
      const { callId, req, now } = one;
      const started = await this.rows(this.beginPlain.name, this.beginPlain.text, [
        callId,
        req.accountId,
        req.action,
        req.holdMicros,
        req.priceMicros,
        req.paymentMethod,
        req.principal,
        now,
        metaText(req.meta),
        this.replicaId,
        req.holdTtlMs,
      ]);
      return [started.length === 1];
    }
    const rows = await this.batchRows<{ call_id: string }>(this.beginPlainBatch, [
      items.map((i) => i.callId),
      items.map((i) => i.req.accountId),
      items.map((i) => i.req.action),
      items.map((i) => i.req.holdMicros),
      items.map((i) => i.req.priceMicros),
      items.map((i) => i.req.paymentMethod),
      items.map((i) => i.req.principal),
      items.map((i) => i.now),
      items.map((i) => metaText(i.req.meta)),
      this.replicaId,
      items.map((i) => i.req.holdTtlMs),
    ]);
    const started = new Set(rows?.map((r) => r.call_id));
    return items.map((i) => started.has(i.callId));
  }

  /** Plain captures, one statement for them all (one alone: its own statement). Which of them it did. */
  private async captureMany(items: PlainCapture[]): Promise<boolean[]> {
    const one = items.length === 1 ? items[0] : undefined;
    if (one) {
      const { callId, req, now } = one;
      const done = await this.rows(CAPTURE_PLAIN.name, CAPTURE_PLAIN.text, [
        callId,
        req.amountMicros,
        req.provider,
        req.durationMs,
        now,
        metaText(req.meta),
      ]);
      return [done.length === 1];
    }
    const rows = await this.batchRows<{ n: string }>(CAPTURE_PLAIN_BATCH, [
      items.map((i) => i.callId),
      items.map((i) => i.req.amountMicros),
      items.map((i) => i.req.provider),
      items.map((i) => i.req.durationMs),
      items.map((i) => i.now),
      items.map((i) => metaText(i.req.meta)),
    ]);
    // By position: of two captures of one call in the batch, only the one that deleted its hold did it.
    const done = items.map(() => false);
    for (const r of rows ?? []) done[Number(r.n) - 1] = true;
    return done;
  }

  /**
   * A batch statement's rows; undefined when it failed for a reason other than the database's absence (a
   * deadlock with another batch, one call's bad row): it then did nothing, and each call takes its slow path,
   * which does it or fails alone.
   */
  private async batchRows<T>(s: { name: string; text: string }, values: unknown[]): Promise<T[] | undefined> {
    try {
      return await this.rows<T>(s.name, s.text, values);
    } catch (err) {
      if (isDatabaseUnavailable(err)) throw err;
      return undefined;
    }
  }
}
