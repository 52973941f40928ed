import { describe, expect, it } from 'vitest';
import { buildSummary, readSections, replaceSection, sectionBlock } from '../../bench/doc.js';

// docs/benchmarks.md's summary is built from the sections' own stored target rows (bench/doc.ts): a section
// re-run replaces its rows, one not re-run keeps its own, and the summary never says what no section says.

const ledger = {
  id: 'ledger',
  title: 'Ledger: pairs per second',
  body: '| in flight | pairs/s |\n|---|---|\n| 64 | 9,132 |',
  targets: [{ target: 'ledger ≥ 5,000 pairs/s', measured: '9,132 pairs/s', verdict: 'met' as const }],
};
const shim = (p50: string, ok: boolean) => ({
  id: 'gateway',
  title: 'HTTP shim',
  body: `added p50 ${p50}`,
  targets: [
    {
      target: '#19 HTTP shim added p50 ≤ 0.6 ms',
      measured: p50,
      verdict: ok ? ('met' as const) : ('not met' as const),
      why: 'the hold and the capture',
    },
  ],
});

function write(doc: string, s: ReturnType<typeof shim> | typeof ledger, date: string): string {
  const next = replaceSection(doc, s.id, sectionBlock(s, date));
  return replaceSection(next, 'summary', buildSummary(readSections(next)));
}

describe('the benchmarks document', () => {
  it('[bench:summary-from-sections] the summary repeats each section’s own figures, re-run or not', () => {
    let doc = '# Benchmarks\n\nIntro.\n';
    doc = write(doc, ledger, '2026-11-24');
    doc = write(doc, shim('2.15 ms', false), '2026-11-24');
    // A later run redoes only the shim: the ledger keeps its figure and its date.
    doc = write(doc, shim('0.55 ms', true), '2026-11-25');
    const sections = readSections(doc);
    expect(sections.map((s) => [s.id, s.measuredOn])).toEqual([
      ['ledger', '2026-11-24'],
      ['gateway', '2026-11-25'],
    ]);
    const summary = /<!-- bench:summary -->([\s\S]*?)<!-- \/bench:summary -->/.exec(doc)?.[1] ?? '';
    // The issue-19 row leads; each row's figure is its section's.
    const rows = summary.split('\n').filter((l) => l.startsWith('| #19') || l.startsWith('| ledger'));
    expect(rows).toEqual([
      '| #19 HTTP shim added p50 ≤ 0.6 ms | 0.55 ms | met | [gateway](#http-shim), 2026-11-25 |',
      '| ledger ≥ 5,000 pairs/s | 9,132 pairs/s | met | [ledger](#ledger-pairs-per-second), 2026-11-24 |',
    ]);
    expect(summary).not.toContain('2.15 ms');
    expect(summary).not.toContain('falls short');
    // The summary sits before the sections, after the introduction; each section exactly once.
    expect(doc.indexOf('<!-- bench:summary -->')).toBeLessThan(doc.indexOf('<!-- bench:ledger -->'));
    expect(doc.match(/<!-- bench:gateway -->/g)).toHaveLength(1);
  });

  it('[bench:summary-from-sections] a target not met is named with the reason its section gives', () => {
    const doc = write('# Benchmarks\n', shim('2.15 ms', false), '2026-11-24');
    expect(doc).toContain('| #19 HTTP shim added p50 ≤ 0.6 ms | 2.15 ms | not met |');
    expect(doc).toContain('- #19 HTTP shim added p50 ≤ 0.6 ms: the hold and the capture');
  });
});
