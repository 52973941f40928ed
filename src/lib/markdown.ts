import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';

// HTML → Markdown with well-kept libraries: linkedom parses, Readability finds the main content when asked,
// Turndown converts. Scripts, styles and other non-content elements are dropped before conversion.

const turndown = new TurndownService({
  headingStyle: 'atx',
  codeBlockStyle: 'fenced',
  bulletListMarker: '-',
});
turndown.remove([
  'script',
  'style',
  'noscript',
  'template',
  'iframe',
  'object',
  'embed',
  'svg',
  'canvas',
] as never);

export interface MarkdownOptions {
  /** Keep only the readable main content (article), as Readability sees it. */
  mainContent?: boolean;
}

export function htmlToMarkdown(
  html: string,
  opts: MarkdownOptions = {},
): { markdown: string; title: string | null } {
  const { document } = parseHTML(html);
  const title = document.querySelector('title')?.textContent?.trim() || null;
  if (opts.mainContent) {
    // Readability mutates the document it is given; it gets its own parse.
    const article = new Readability(parseHTML(html).document as unknown as Document).parse();
    if (article?.content)
      return { markdown: turndown.turndown(article.content).trim(), title: article.title ?? title };
  }
  const root = (document.body ?? document.documentElement) as unknown as HTMLElement | null;
  return { markdown: root ? turndown.turndown(root).trim() : '', title };
}
