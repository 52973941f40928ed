import type { UsageRow } from '../ledger/types.js';
import { escapeHtml, usd } from './html.js';

// The usage chart: spend per UTC day as stacked bars, one colour per service, drawn on the server as inline SVG
// from the ledger's usage rows (no script, nothing to build). Every bar segment carries its day, service and
// amount (data-* attributes and a <title> tooltip), so what the chart shows can be checked against the ledger;
// the same numbers are in a table next to it for anyone who cannot see the chart.

/** Okabe–Ito: distinguishable with every common colour-vision deficiency. The last is "other". */
const COLOURS = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#8C6D31', '#999999'];
const MAX_SERVICES = COLOURS.length - 1;

/**
 * Two drawings of the same numbers: one for a wide screen, one for a phone (about 360 px across, where the wide
 * one's 12-unit labels would shrink to 5 px). CSS shows one of them.
 */
interface Geometry {
  cls: 'wide' | 'narrow';
  w: number;
  h: number;
  m: { top: number; right: number; bottom: number; left: number };
  font: number;
  /** At most this many day labels under the bars. */
  dayLabels: number;
}

const WIDE: Geometry = {
  cls: 'wide',
  w: 800,
  h: 260,
  m: { top: 12, right: 8, bottom: 30, left: 64 },
  font: 12,
  dayLabels: 10,
};
const NARROW: Geometry = {
  cls: 'narrow',
  w: 360,
  h: 240,
  m: { top: 10, right: 6, bottom: 28, left: 52 },
  font: 13,
  dayLabels: 5,
};

export interface Chart {
  svg: string;
  /** The same chart drawn for a phone's width. */
  svgNarrow: string;
  /** The services in colour order (the legend), "other" last when services had to be grouped. */
  services: Array<{ name: string; colour: string; micros: number }>;
  totalMicros: number;
  /** Day → service → micros, as drawn. */
  grid: Map<string, Map<string, number>>;
}

/** A round step for `max / 4`: 1, 2, 2.5 or 5 times a power of ten (micro-USD), at least a cent. */
function niceStep(max: number): number {
  const raw = Math.max(max / 4, 10_000);
  const pow = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * pow >= raw) return m * pow;
  return 10 * pow;
}

export function usageChart(days: readonly string[], rows: readonly UsageRow[], label: string): Chart {
  const byService = new Map<string, number>();
  for (const r of rows) byService.set(r.service, (byService.get(r.service) ?? 0) + r.micros);
  const ranked = [...byService.entries()].filter(([, m]) => m > 0).sort((a, b) => b[1] - a[1]);
  const shown = ranked.length > MAX_SERVICES + 1 ? ranked.slice(0, MAX_SERVICES) : ranked;
  const shownNames = new Set(shown.map(([s]) => s));
  const services = shown.map(([name, micros], i) => ({ name, micros, colour: COLOURS[i] as string }));
  if (ranked.length > shown.length) {
    const rest = ranked.slice(shown.length).reduce((s, [, m]) => s + m, 0);
    services.push({ name: 'other', micros: rest, colour: COLOURS[MAX_SERVICES] as string });
  }
  const colourOf = new Map(services.map((s) => [s.name, s.colour]));

  const grid = new Map<string, Map<string, number>>(days.map((d) => [d, new Map()]));
  for (const r of rows) {
    const day = grid.get(r.day);
    if (!day || r.micros <= 0) continue;
    const name = shownNames.has(r.service) ? r.service : 'other';
    day.set(name, (day.get(name) ?? 0) + r.micros);
  }
  const calls = new Map(rows.map((r) => [`${r.day} ${r.service}`, r.calls]));
  const totals = days.map((d) => [...(grid.get(d)?.values() ?? [])].reduce((a, b) => a + b, 0));
  const totalMicros = totals.reduce((a, b) => a + b, 0);
  const step = niceStep(Math.max(...totals, 0));
  const top = Math.max(step, Math.ceil(Math.max(...totals, 0) / step) * step);

  const busiest = totals.indexOf(Math.max(...totals, 0));
  const desc =
    totalMicros === 0
      ? 'No spend in this period.'
      : `${usd(totalMicros)} in total; the most on ${days[busiest]} (${usd(totals[busiest] ?? 0)}). ` +
        services.map((s) => `${s.name} ${usd(s.micros)}`).join(', ');
  return { svg: draw(WIDE), svgNarrow: draw(NARROW), services, totalMicros, grid };

  function draw(g: Geometry): string {
    const { w: W, h: H, m: M } = g;
    const plotW = W - M.left - M.right;
    const plotH = H - M.top - M.bottom;
    const slot = plotW / Math.max(days.length, 1);
    const barW = Math.max(2, slot * 0.72);
    const y = (micros: number) => M.top + plotH - (micros / top) * plotH;
    const parts: string[] = [];

    for (let v = 0; v <= top + 1; v += step) {
      const yy = y(v).toFixed(1);
      parts.push(
        `<line x1="${M.left}" x2="${W - M.right}" y1="${yy}" y2="${yy}" stroke="currentColor" stroke-opacity="${v === 0 ? 0.6 : 0.15}"/>`,
        `<text x="${M.left - 6}" y="${yy}" dy="4" text-anchor="end" font-size="${g.font}" fill="currentColor">${usd(v)}</text>`,
      );
    }
    const every = Math.ceil(days.length / g.dayLabels);
    // A day label ("MM-DD") is about 0.6 em a character wide; the last one ends at the edge.
    const labelW = 5 * g.font * 0.6;
    const lastLeft = W - M.right - labelW;
    days.forEach((day, i) => {
      const x = M.left + i * slot + (slot - barW) / 2;
      const segments: string[] = [];
      let base = 0;
      for (const s of services) {
        const micros = grid.get(day)?.get(s.name) ?? 0;
        if (micros <= 0) continue;
        const y1 = y(base + micros);
        const h = Math.max(1, y(base) - y1);
        const n = s.name === 'other' ? undefined : calls.get(`${day} ${s.name}`);
        const tip = `${day} · ${s.name}: ${usd(micros)}${n === undefined ? '' : ` (${n} call${n === 1 ? '' : 's'})`}`;
        segments.push(
          `<rect x="${x.toFixed(1)}" y="${y1.toFixed(1)}" width="${barW.toFixed(1)}" height="${h.toFixed(1)}" fill="${colourOf.get(s.name)}" data-day="${day}" data-service="${escapeHtml(s.name)}" data-micros="${micros}"><title>${escapeHtml(tip)}</title></rect>`,
        );
        base += micros;
      }
      parts.push(
        `<g class="day" data-day="${day}" data-total-micros="${totals[i]}">${segments.join('')}</g>`,
      );
      // Every n-th day, and the last (today); a label that would touch the last one is left out.
      const last = i === days.length - 1;
      const centre = M.left + i * slot + slot / 2;
      if (last || (i % every === 0 && centre + labelW / 2 + g.font / 2 <= lastLeft)) {
        parts.push(
          // The last label ends at the edge rather than past it.
          last
            ? `<text x="${W - M.right}" y="${H - 8}" text-anchor="end" font-size="${g.font}" fill="currentColor">${day.slice(5)}</text>`
            : `<text x="${centre.toFixed(1)}" y="${H - 8}" text-anchor="middle" font-size="${g.font}" fill="currentColor">${day.slice(5)}</text>`,
        );
      }
    });
    if (totalMicros === 0) {
      parts.push(
        `<text x="${M.left + plotW / 2}" y="${M.top + plotH / 2}" text-anchor="middle" font-size="16" fill="currentColor">No paid calls in this period yet</text>`,
      );
    }
    const id = `usage-${g.cls}`;
    return `<svg class="${g.cls}" viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="${id}-title ${id}-desc" data-total-micros="${totalMicros}" xmlns="http://www.w3.org/2000/svg">
<title id="${id}-title">${escapeHtml(label)}</title>
<desc id="${id}-desc">${escapeHtml(desc)}</desc>
${parts.join('\n')}
</svg>`;
  }
}

/** The colour keys under the chart. */
export function legend(c: Chart): string {
  if (c.services.length === 0) return '';
  const items = c.services
    .map(
      (s) =>
        `<li><svg viewBox="0 0 10 10" aria-hidden="true"><rect width="10" height="10" fill="${s.colour}"/></svg>${escapeHtml(s.name)} <span class="hint">${usd(s.micros)}</span></li>`,
    )
    .join('');
  return `<ul class="legend" aria-label="Services">${items}</ul>`;
}

/** The last `n` UTC days up to and including `now`'s, oldest first. */
export function lastDays(now: number, n: number): string[] {
  const today = Math.floor(now / 86_400_000) * 86_400_000;
  return Array.from({ length: n }, (_, i) =>
    new Date(today - (n - 1 - i) * 86_400_000).toISOString().slice(0, 10),
  );
}
