import type { HandleRecord } from '../ports/index.js';

/** A handle as both backends store it (its data as JSON text). */
export interface HandleRow {
  handle: string;
  owner: string;
  kind: string;
  ref: string;
  data: string;
  created_at: number;
}

export function toRecord(r: HandleRow | undefined): HandleRecord | undefined {
  return r ? { ...r, data: JSON.parse(r.data) as Record<string, unknown> } : undefined;
}
