import { describe, expect, it } from 'vitest';
import { needsBrowser, scanHtml } from '../../src/engine/scan.js';
import { htmlToMarkdown } from '../../src/lib/markdown.js';
import { decode } from '../../src/upstreams/web-fetch.js';

// The one-pass HTML scanner: Markdown, plain text, cleaned HTML, links and page hints from a single parse.

const BASE = 'https://site.test/docs/page';

describe('[web:markdown-conversion] HTML to Markdown', () => {
  it('converts headings, emphasis, links, lists, quotes, code, tables and images', () => {
    const { markdown, title } = htmlToMarkdown(
      `<html><head><title>T &amp; U</title><style>p{}</style></head><body>
      <h1>Title <em>x</em></h1><p>Hello <b>bold </b>and <a href="../rel?a=1#frag">a link</a>, snake_case, *star*.</p>
      <ul><li>one</li><li>two<ul><li>nested <code>a_b</code></li></ul></li></ul>
      <ol start="3"><li>third</li><li>fourth</li></ol>
      <blockquote><p>quoted<br>line two</p></blockquote>
      <pre class="language-ts"><code>const a = 1;
  if (a) {}</code></pre>
      <table><tr><th>A</th><th>B</th></tr><tr><td>1|x</td><td>2</td></tr></table>
      <p># not a heading</p><img src="/i.png" alt="pic"><hr><script>alert(1)</script><p>end</p></body></html>`,
      { baseUrl: BASE },
    );
    expect(title).toBe('T & U');
    expect(markdown).toBe(
      [
        '# Title _x_',
        'Hello **bold** and [a link](https://site.test/rel?a=1#frag), snake_case, \\*star\\*.',
        '- one\n- two\n  - nested `a_b`',
        '3. third\n4. fourth',
        '> quoted\n> line two',
        '```ts\nconst a = 1;\n  if (a) {}\n```',
        '| A | B |\n| --- | --- |\n| 1\\|x | 2 |',
        '\\# not a heading',
        '![pic](https://site.test/i.png)',
        '---',
        'end',
      ].join('\n\n'),
    );
  });

  it('drops scripts, styles, hidden elements and javascript: links', () => {
    const r = scanHtml(
      '<body><p>keep</p><div hidden>gone1</div><div style="display:none">gone2</div><noscript>gone3</noscript>' +
        '<p><a href="javascript:alert(1)">click</a></p><template><p>gone4</p></template></body>',
      { baseUrl: BASE, markdown: true },
    );
    expect(r.markdown).toBe('keep\n\nclick');
  });

  it('[web:scrape-formats] main content keeps <main>/<article> and drops navigation, asides and ads', () => {
    const page =
      '<body><header class="site-header"><a href="/">Home</a></header><nav><a href="/x">Menu</a></nav>' +
      '<main><article><header><h1>Story</h1></header><p>Body text.</p><div class="share">Share!</div></article></main>' +
      '<aside><p>Related</p></aside><footer><a href="/legal">Legal</a></footer></body>';
    const main = scanHtml(page, { baseUrl: BASE, markdown: true, mainContent: true, text: true, html: true });
    expect(main.markdown).toBe('# Story\n\nBody text.');
    expect(main.plainText).toBe('Story\n\nBody text.');
    expect(main.html).toBe(
      '<main><article><header><h1>Story</h1></header><p>Body text.</p></article></main>',
    );
    // Links are always all the page's links (crawling needs them), absolute, deduplicated.
    expect(main.links).toEqual(['https://site.test/', 'https://site.test/x', 'https://site.test/legal']);
    const full = scanHtml(page, { baseUrl: BASE, markdown: true });
    expect(full.markdown).toContain('Menu');
    expect(full.markdown).toContain('Related');
  });

  it('without <main>, main content is the page minus boilerplate', () => {
    const r = scanHtml(
      '<body><nav>Menu</nav><div id="sidebar">Side</div><div class="content"><p>Text</p></div></body>',
      {
        baseUrl: BASE,
        markdown: true,
        mainContent: true,
      },
    );
    expect(r.markdown).toBe('Text');
  });

  it('reads metadata and honours <base href>', () => {
    const r = scanHtml(
      '<html lang="fr"><head><base href="https://cdn.test/root/"><meta name="description" content="Desc"></head>' +
        '<body><a href="a.html#x">A</a><a href="a.html">again</a><a href="mailto:x@y.z">mail</a></body></html>',
      { baseUrl: BASE },
    );
    expect(r.language).toBe('fr');
    expect(r.description).toBe('Desc');
    expect(r.links).toEqual(['https://cdn.test/root/a.html']);
  });

  it('decodes charsets from the header or the document', () => {
    const latin1 = Buffer.from('<p>caf\u00e9</p>', 'latin1');
    expect(decode(latin1, 'text/html; charset=iso-8859-1')).toBe('<p>café</p>');
    const meta = Buffer.concat([
      Buffer.from('<meta charset="iso-8859-1"><p>'),
      Buffer.from([0xe9]),
      Buffer.from('</p>'),
    ]);
    expect(decode(meta, 'text/html')).toContain('<p>é</p>');
    expect(decode(Buffer.from('<p>ü</p>'), 'text/html')).toBe('<p>ü</p>');
  });
});

describe('[web:js-render] auto-detecting pages that need JavaScript', () => {
  const hintsOf = (html: string) => scanHtml(html, { baseUrl: BASE }).hints;

  it('an empty SPA root or a bare page with scripts needs a browser', () => {
    expect(needsBrowser(hintsOf('<body><div id="root"></div><script src="/app.js"></script></body>'))).toBe(
      true,
    );
    expect(
      needsBrowser(
        hintsOf(
          `<body><noscript>Please enable JavaScript</noscript><div id="app"></div><p>${'x'.repeat(500)}</p><script>1</script></body>`,
        ),
      ),
    ).toBe(true);
  });

  it('a page with its own text, or without scripts, does not', () => {
    expect(needsBrowser(hintsOf(`<body><p>${'word '.repeat(100)}</p><script>1</script></body>`))).toBe(false);
    expect(needsBrowser(hintsOf('<body><p>short</p></body>'))).toBe(false);
    expect(needsBrowser(hintsOf('<body><p>x</p><script type="application/ld+json">{}</script></body>'))).toBe(
      false,
    );
  });
});
