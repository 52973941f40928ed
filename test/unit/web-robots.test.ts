import { describe, expect, it } from 'vitest';
import { parseSitemap } from '../../src/engine/map.js';
import { parseRobots } from '../../src/engine/robots.js';
import { normalizeUrl, sameSite, siteOf } from '../../src/engine/url.js';

// robots.txt (RFC 9309), sitemaps and URL identity, as the crawler and map use them.

describe('[crawl:bounds-robots] robots.txt', () => {
  const robots = parseRobots(`
# comment
User-agent: *
Disallow: /private
Allow: /private/open
Disallow: /*.pdf$
Crawl-delay: 2

User-agent: tollgate
User-agent: other
Disallow: /no-tollgate
Allow: /no-tollgate/but-this

Sitemap: https://site.test/sitemap-a.xml
`);

  it('uses the group naming our agent, not *', () => {
    expect(robots.allowed('https://site.test/private/x')).toBe(true);
    expect(robots.allowed('https://site.test/no-tollgate/x')).toBe(false);
    expect(robots.allowed('https://site.test/no-tollgate/but-this/y')).toBe(true);
    expect(robots.crawlDelayMs).toBeUndefined();
    expect(robots.sitemaps).toEqual(['https://site.test/sitemap-a.xml']);
  });

  it('falls back to *, longest match wins, allow wins ties, wildcards and $ anchor', () => {
    const star = parseRobots(
      'User-agent: *\nDisallow: /private\nAllow: /private/open\nDisallow: /*.pdf$\nDisallow: /same\nAllow: /same\nCrawl-delay: 2',
      'otherbot',
    );
    expect(star.allowed('https://site.test/private/x')).toBe(false);
    expect(star.allowed('https://site.test/private/open/x')).toBe(true);
    expect(star.allowed('https://site.test/a/b.pdf')).toBe(false);
    expect(star.allowed('https://site.test/a/b.pdf?x=1')).toBe(true);
    expect(star.allowed('https://site.test/same')).toBe(true);
    expect(star.allowed('https://site.test/robots.txt')).toBe(true);
    expect(star.crawlDelayMs).toBe(2000);
  });

  it('an empty Disallow allows everything', () => {
    expect(parseRobots('User-agent: *\nDisallow:').allowed('https://s.test/x')).toBe(true);
  });
});

describe('[web:map] sitemaps and URL identity', () => {
  it('reads urlsets and sitemap indexes, namespaced or not', () => {
    const urlset = parseSitemap(
      '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc> https://s.test/a </loc></url><url><loc>https://s.test/b?x=1&amp;y=2</loc></url></urlset>',
    );
    expect(urlset).toEqual({ pages: ['https://s.test/a', 'https://s.test/b?x=1&y=2'], sitemaps: [] });
    const index = parseSitemap(
      '<sm:sitemapindex xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"><sm:sitemap><sm:loc>https://s.test/s1.xml</sm:loc></sm:sitemap></sm:sitemapindex>',
    );
    expect(index).toEqual({ pages: [], sitemaps: ['https://s.test/s1.xml'] });
  });

  it('normalizes URLs and treats www. as the same site', () => {
    expect(normalizeUrl('HTTP://Site.TEST:80/a?#frag')).toBe('http://site.test/a');
    expect(normalizeUrl('mailto:x@y.z')).toBeUndefined();
    expect(siteOf('https://www.site.test/x')).toBe('site.test');
    expect(sameSite('https://site.test/y', 'site.test')).toBe(true);
    expect(sameSite('https://evil.test/y', 'site.test')).toBe(false);
  });
});
