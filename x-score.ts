import { scoreCatalog, tokenize } from './tools/catalog-search.js';
const q = process.argv.slice(2).join(' ');
console.log(tokenize(q));
for (const m of scoreCatalog(q).slice(0, 6)) console.log(m.score.toFixed(2), m.action.id);
