import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { startFakePage, startGatewayProcess } from './process.js';
import { load } from './stats.js';

const dir = join(process.cwd(), '.prof', `p${Date.now()}`);
const upstream = await startFakePage();
const gw = await startGatewayProcess({}, ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=200']);
const client = new Agent({ connections: 64, keepAliveTimeout: 60_000 });
const body = JSON.stringify({ url: upstream.url, browser: false });
const f = async () => {
  const r = await request(`${gw.url}/api/run/scraperC/scrape`, { dispatcher: client, method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body });
  await r.body.text();
  if (r.statusCode !== 200) throw new Error(String(r.statusCode));
};
await load(3000, 32, f);
const r = await load(20000, 32, f);
console.log('calls/s', Math.round(r.perSecond));
await client.close();
await gw.stop();
await upstream.close();
const file = readdirSync(dir).find((x) => x.endsWith('.cpuprofile')) as string;
const prof = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount: number }>; samples: number[]; timeDeltas: number[] };
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
for (let i = 0; i < prof.samples.length; i++) self.set(prof.samples[i] as number, (self.get(prof.samples[i] as number) ?? 0) + (prof.timeDeltas[i] ?? 0));
const group = new Map<string, number>();
const fn = new Map<string, number>();
let total = 0;
for (const [id, t] of self) {
  const n = byId.get(id)!;
  const url = n.callFrame.url;
  let g = url.replace(/^file:\/\/\/work\/main\//, '');
  const m = g.match(/node_modules\/((@[^/]+\/)?[^/]+)/);
  if (m) g = `npm:${m[1]}`;
  else if (g.startsWith('node:')) g = g;
  else if (g === '') g = `(${n.callFrame.functionName || 'native'})`;
  if (n.callFrame.functionName === '(idle)') continue;
  total += t;
  group.set(g, (group.get(g) ?? 0) + t);
  const k = `${n.callFrame.functionName} ${g}:${n.callFrame.lineNumber}`;
  fn.set(k, (fn.get(k) ?? 0) + t);
}
const calls = 23000;
console.log('busy µs per call (main thread, sampled):', (total / calls).toFixed(0));
for (const [g, t] of [...group].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`${(t / calls).toFixed(1).padStart(7)} µs  ${(100 * t / total).toFixed(1).padStart(5)}%  ${g}`);
console.log('--- functions');
for (const [g, t] of [...fn].sort((a, b) => b[1] - a[1]).slice(0, 50)) console.log(`${(t / calls).toFixed(1).padStart(7)} µs  ${(100 * t / total).toFixed(1).padStart(5)}%  ${g}`);
