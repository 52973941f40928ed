import type { BenchSection, BenchTarget } from './types.js';

// docs/benchmarks.md as data: each section between `<!-- bench:id -->` markers, its target rows stored in it as
// one machine-readable comment (`<!-- bench:targets {...} -->`), and the summary built from those rows. A
// section that a run did not redo keeps its text and its rows, so the summary never says anything its
// sections do not.

const TARGETS = /<!-- bench:targets (\{.*?\}) -->/s;

export interface StoredSection {
  id: string;
  title: string;
  measuredOn: string | undefined;
  targets: BenchTarget[];
}

/** A section's text as run.ts writes it: title, body and its rows with the date they were measured. */
export function sectionBlock(section: BenchSection, date: string): string {
  const rows = section.targets ?? [];
  const data = JSON.stringify({ measured_on: date, targets: rows }).replaceAll('--', '\\u002d\\u002d');
  return `## ${section.title}\n\n${section.body.trim()}\n\n<!-- bench:targets ${data} -->`;
}

export function replaceSection(doc: string, id: string, content: string): string {
  const start = `<!-- bench:${id} -->`;
  const end = `<!-- /bench:${id} -->`;
  const block = `${start}\n${content.trim()}\n${end}`;
  const i = doc.indexOf(start);
  const j = doc.indexOf(end);
  if (i >= 0 && j > i) return doc.slice(0, i) + block + doc.slice(j + end.length);
  if (id === 'summary') {
    // The summary goes first, after the document's introduction.
    const first = doc.indexOf('<!-- bench:');
    if (first >= 0) return `${doc.slice(0, first)}${block}\n\n${doc.slice(first)}`;
  }
  return `${doc.trimEnd()}\n\n${block}\n`;
}

/** Every section of the document with its stored rows, in document order (the summary itself left out). */
export function readSections(doc: string): StoredSection[] {
  const out: StoredSection[] = [];
  for (const m of doc.matchAll(/<!-- bench:([\w-]+) -->\n([\s\S]*?)<!-- \/bench:\1 -->/g)) {
    const id = m[1] as string;
    if (id === 'summary' || id === 'machine') continue;
    const text = m[2] as string;
    const title = /^## (.*)$/m.exec(text)?.[1] ?? id;
    const stored = TARGETS.exec(text)?.[1];
    const data = stored
      ? (JSON.parse(stored) as { measured_on?: string; targets?: BenchTarget[] })
      : { targets: [] };
    out.push({ id, title, measuredOn: data.measured_on, targets: data.targets ?? [] });
  }
  return out;
}

const anchor = (title: string) =>
  `#${title
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .trim()
    .replace(/\s/g, '-')}`;

/** The issue whose targets lead the summary (the latest batch); the others follow in document order. */
const LEAD = '#19 ';

/** The summary: one row per target of every section, then what falls short and why, in the sections' words. */
export function buildSummary(sections: StoredSection[]): string {
  const rows: string[] = [];
  const short: string[] = [];
  const all = sections.flatMap((s) => s.targets.map((t) => ({ s, t })));
  const ordered = [
    ...all.filter((x) => x.t.target.startsWith(LEAD)),
    ...all.filter((x) => !x.t.target.startsWith(LEAD)),
  ];
  for (const { s, t } of ordered) {
    const where = `[${s.id}](${anchor(s.title)})${s.measuredOn ? `, ${s.measuredOn}` : ''}`;
    rows.push(`| ${t.target} | ${t.measured} | ${t.verdict} | ${where} |`);
    if (t.verdict === 'not met' && t.why) short.push(`- ${t.target}: ${t.why}`);
  }
  return [
    '## Summary',
    '',
    'Built by `npm run bench` from the target rows of the sections below (each section stores its own, with the',
    'date it was measured); a section not re-run keeps its figures. Targets as the issues state them; where a',
    'target is a ratio, the baseline was measured in the same run. The machine is a shared 2-core VM whose speed',
    'drifts between runs: compare rows of one section, which come from one run.',
    '',
    '| target (issue) | measured | | section |',
    '|---|---|---|---|',
    ...rows,
    ...(short.length > 0 ? ['', '**What falls short, and why** (from the sections):', '', ...short] : []),
  ].join('\n');
}
