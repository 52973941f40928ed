import { actions } from './catalog/index.js';
import { tokenize } from './tools/catalog-search.js';
const q = tokenize(process.argv[2]);
for (const id of process.argv.slice(3)) {
  const a = actions.find((x) => x.id === id)!;
  const name = new Set(tokenize(a.action.replaceAll(/[-_]/g, ' ')));
  const strong = new Set(tokenize(`${a.title.replace(/\([^)]*\)/g, '')} ${a.keywords.join(' ')}`));
  const weak = new Set(tokenize(a.summary));
  console.log(id, q.map((t) => `${t}:${name.has(t) ? 'N' : strong.has(t) ? 'S' : weak.has(t) ? 'W' : '-'}`).join(' '));
}
