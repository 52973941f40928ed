import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { type FileHandle, open, rename, rm } from 'node:fs/promises';
import { CliError } from '../output.js';

// The export file: JSON lines, streamed both ways (never a whole table in memory).
//
//   {"format":"tollgate-export","format_version":1,…}        the header: who wrote it, from which database
//   {"table":"accounts","columns":["id","name",…]}           a section: a table and its columns
//   ["acct_…","alice",…]                                     its rows, one JSON array a line
//   {"end":"accounts","rows":12}                             the section's end, with its row count
//   …
//   {"manifest":{"tables":…,"totals":…,"balances_sha256":…},"sha256":"…"}
//
// The last line is the manifest (the ledger's totals, every account's balance as a digest) and the SHA-256 of
// every byte before it, so a file cut short, edited or damaged is refused as a whole before anything it carries
// is committed. It holds secrets (key hashes, OAuth and signing secrets): written readable only by its owner.

export const FORMAT = 'tollgate-export';
export const FORMAT_VERSION = 1;

export interface Header {
  format: typeof FORMAT;
  format_version: number;
  /** The highest store-layer migration of the release that wrote it: an older release refuses the file. */
  schema_version: number;
  created_at: string;
  source: { backend: 'sqlite' | 'postgres'; database: string };
}

export interface Manifest {
  tables: Record<string, number>;
  totals: Record<string, number>;
  /** SHA-256 over "id:balance\n" of every account in id order. */
  balances_sha256: string;
}

export type ExportEvent =
  | { kind: 'section'; table: string; columns: string[] }
  | { kind: 'rows'; table: string; rows: unknown[][] }
  | { kind: 'end'; table: string; rows: number };

const damaged = (path: string, why: string) =>
  new CliError('export_damaged', `${path} is not a whole tollgate export: ${why}; nothing was imported`, 1);

/** Writes an export to `<path>.partial` and renames it to `path` once whole, so a file at `path` is complete. */
export class ExportWriter {
  private readonly hash = createHash('sha256');
  private buffer = '';
  bytes = 0;

  private constructor(
    readonly path: string,
    private readonly partial: string,
    private readonly fh: FileHandle,
  ) {}

  static async create(path: string): Promise<ExportWriter> {
    const partial = `${path}.partial`;
    // 0600: the file holds secrets. A leftover .partial of a failed export is replaced.
    try {
      await rm(partial, { force: true });
      return new ExportWriter(path, partial, await open(partial, 'wx', 0o600));
    } catch (e) {
      throw new CliError('file_unwritable', `cannot write ${partial}: ${(e as Error).message}`, 1);
    }
  }

  async line(value: unknown): Promise<void> {
    const text = `${JSON.stringify(value)}\n`;
    this.hash.update(text);
    this.buffer += text;
    if (this.buffer.length >= 1 << 20) await this.flush();
  }

  private async flush(): Promise<void> {
    if (this.buffer === '') return;
    const data = Buffer.from(this.buffer);
    this.buffer = '';
    this.bytes += data.length;
    await this.fh.write(data);
  }

  /** The manifest, the checksum of everything before it, then on disk and under its name. */
  async finish(manifest: Manifest): Promise<void> {
    const sha256 = this.hash.digest('hex');
    this.buffer += `${JSON.stringify({ manifest, sha256 })}\n`;
    await this.flush();
    await this.fh.sync();
    await this.fh.close();
    await rename(this.partial, this.path);
  }

  async abort(): Promise<void> {
    await this.fh.close().catch(() => {});
    await rm(this.partial, { force: true });
  }
}

/** Splits a file into lines (as bytes, newline included) without holding more than a chunk and a line. */
async function* lines(path: string): AsyncGenerator<Buffer> {
  let rest: Buffer = Buffer.alloc(0);
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    let buf = rest.length > 0 ? Buffer.concat([rest, chunk]) : chunk;
    let nl = buf.indexOf(10);
    while (nl >= 0) {
      yield buf.subarray(0, nl + 1);
      buf = buf.subarray(nl + 1);
      nl = buf.indexOf(10);
    }
    rest = Buffer.from(buf);
  }
  if (rest.length > 0) yield rest;
}

/**
 * Reads an export: the header first (before anything else is done with the file), then its sections as events
 * in batches of rows, then the manifest — only once every byte before it matched its checksum and every section
 * its row count. A file that is not whole throws (`export_damaged`) at the point it stops making sense.
 */
export async function openExport(
  path: string,
): Promise<{ header: Header; events: AsyncGenerator<ExportEvent, Manifest>; close(): Promise<void> }> {
  const it = lines(path);
  const close = async () => {
    await it.return(undefined);
  };
  const first = await it.next();
  let header: Header | undefined;
  try {
    header = first.done ? undefined : (JSON.parse(first.value.toString('utf8')) as Header);
  } catch {
    header = undefined;
  }
  if (header?.format !== FORMAT) {
    await close();
    throw damaged(path, 'it does not start with a tollgate export header');
  }
  if (header.format_version !== FORMAT_VERSION) {
    await close();
    throw new CliError(
      'export_version',
      `${path} is in export format ${header.format_version}; this release reads format ${FORMAT_VERSION}`,
      1,
    );
  }
  const hash = createHash('sha256').update(first.value as Buffer);
  return { header, events: sections(path, it, hash), close };
}

async function* sections(
  path: string,
  it: AsyncGenerator<Buffer>,
  hash: ReturnType<typeof createHash>,
): AsyncGenerator<ExportEvent, Manifest> {
  let table: string | undefined;
  let rows: unknown[][] = [];
  let count = 0;
  for await (const raw of it) {
    let value: unknown;
    try {
      value = JSON.parse(raw.toString('utf8'));
    } catch {
      throw damaged(path, `a line is not JSON (after ${table ?? 'the header'})`);
    }
    if (Array.isArray(value)) {
      if (table === undefined) throw damaged(path, 'a row stands outside any table');
      hash.update(raw);
      rows.push(value);
      count++;
      if (rows.length >= 500) {
        yield { kind: 'rows', table, rows };
        rows = [];
      }
      continue;
    }
    const obj = (value ?? {}) as Record<string, unknown>;
    if (typeof obj.table === 'string' && Array.isArray(obj.columns)) {
      if (table !== undefined) throw damaged(path, `table ${table} has no end`);
      hash.update(raw);
      table = obj.table;
      count = 0;
      yield { kind: 'section', table, columns: obj.columns as string[] };
    } else if (typeof obj.end === 'string') {
      if (obj.end !== table || obj.rows !== count) {
        throw damaged(
          path,
          `table ${String(obj.end)} ends after ${count} rows, but says ${String(obj.rows)}`,
        );
      }
      hash.update(raw);
      if (rows.length > 0) yield { kind: 'rows', table, rows };
      rows = [];
      yield { kind: 'end', table, rows: count };
      table = undefined;
    } else if (obj.manifest !== undefined && typeof obj.sha256 === 'string') {
      if (table !== undefined) throw damaged(path, `table ${table} has no end`);
      if (hash.digest('hex') !== obj.sha256) throw damaged(path, 'its checksum does not match its contents');
      if (!(await it.next()).done) throw damaged(path, 'lines follow its manifest');
      return obj.manifest as Manifest;
    } else {
      throw damaged(
        path,
        `a line is neither a table, a row, an end nor the manifest (after ${table ?? 'the header'})`,
      );
    }
  }
  throw damaged(path, 'it ends before its manifest (cut short?)');
}
