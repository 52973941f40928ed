import { describe, expect, it } from 'vitest';
import { actions } from '../../catalog/index.js';
import { inputJsonSchema } from '../../catalog/json-schema.js';
import { compactToolList } from '../../src/mcp/compact.js';
import { fullToolList, withToolNames } from '../../src/mcp/tools.js';

// What an agent reads to choose a tool: every description says what the action does, when to use it rather
// than its siblings, what it returns and its price, in the spec's neutral words (no vendor names).

/** The vendors behind the services (docs/vendors.md) and the model router's upstream. */
const VENDORS =
  /\b(firecrawl|fastcrw|crw|scrapingant|rentcast|realestateapi|real ?estate ?api|fal(?:\.ai)?|cueframe|openrouter|searxng)\b/i;

/** Every `description` string of a JSON Schema, at any depth. */
function schemaTexts(schema: unknown): string[] {
  if (Array.isArray(schema)) return schema.flatMap(schemaTexts);
  if (!schema || typeof schema !== 'object') return [];
  return Object.entries(schema).flatMap(([k, v]) =>
    k === 'description' && typeof v === 'string' ? [v] : schemaTexts(v),
  );
}

/** Every tool, available or not. */
const TOOLS = fullToolList(new Map(), false);

describe('[catalog:descriptions-actionable] descriptions an agent can act on', () => {
  it('every action says when to use it, in its own sentence, starting "Use it"', () => {
    for (const a of actions) {
      expect(a.whenToUse, a.id).toMatch(/^Use it (?:when|to|for|first|only|once|after|before)\b/);
      expect(a.whenToUse.length, a.id).toBeGreaterThan(40);
      expect(a.description, a.id).toContain(a.whenToUse);
    }
  });

  it('every description says what it returns and its price', () => {
    for (const a of actions) {
      expect(a.description, a.id).toMatch(/\breturns?\b|\banswers\b|\blists\b|\breports\b/i);
      expect(a.description, a.id).toMatch(/Free\.|\$\d+\.\d{2} per successful call/);
    }
  });

  it('siblings point at each other: the scrapers, the valuations, the record lookups', () => {
    const mentions = (id: string, other: string) =>
      expect(actions.find((a) => a.id === id)?.whenToUse, id).toContain(other);
    mentions('scraperA/scrape', 'scraperC/scrape');
    mentions('scraperA/scrape', 'scraperB/scrape');
    mentions('scraperC/scrape', 'scraperC/scrape_residential');
    mentions('scraperA/extract', 'scraperB/extract');
    mentions('propstats/value-estimate', 'propdata/avm');
    mentions('propdata/avm', 'propstats/value-estimate');
    mentions('propstats/properties', 'propdata/property-detail');
    mentions('scraperA/search', 'platform/supersearch');
  });

  it('no vendor name in titles, descriptions, keywords or any field description', () => {
    for (const a of actions) {
      const texts = [a.title, a.description, ...a.keywords, ...schemaTexts(inputJsonSchema(a))];
      for (const text of texts) expect(text, a.id).not.toMatch(VENDORS);
    }
    for (const tool of [...TOOLS, ...compactToolList()]) {
      expect(`${tool.title} ${tool.description}`, tool.name).not.toMatch(VENDORS);
    }
  });

  it('[mcp:tool-names-in-descriptions] on /mcp other tools are named by their MCP names', () => {
    const ids = new RegExp(`(?<![\\w/])(${actions.map((a) => a.id).join('|')})(?![\\w-])`);
    for (const tool of TOOLS) {
      expect(tool.description, tool.name).not.toMatch(ids);
      for (const text of schemaTexts(tool.inputSchema)) expect(text, tool.name).not.toMatch(ids);
    }
    const crawl = TOOLS.find((t) => t.name === 'scraperA_crawl');
    expect(crawl?.description).toContain('scraperA_crawl_status');
    expect(withToolNames('poll scraperB/extract_status, not scraperB/extract')).toBe(
      'poll scraperB_extract_status, not scraperB_extract',
    );
    // A path is not an action id.
    expect(withToolNames('POST /api/run/scraperA/scrape')).toBe('POST /api/run/scraperA/scrape');
  });
});
