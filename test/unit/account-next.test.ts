import { describe, expect, it } from 'vitest';
import { safeNext, signInPath } from '../../src/account/next.js';

// Where sign-in returns to (src/account/next.ts): a dashboard path, or nothing — never another site.

describe('[account:sign-in-returns] the return path after sign-in', () => {
  it('keeps dashboard paths and their plain queries', () => {
    for (const ok of [
      '/account',
      '/account/top-up',
      '/account/card',
      '/account?done=x',
      '/account/keys/k_1',
    ]) {
      expect(safeNext(ok)).toBe(ok);
    }
  });

  it('refuses anything that could leave the dashboard, or loop through sign-in', () => {
    for (const bad of [
      'https://evil.example/account',
      '//evil.example/account',
      '/\\evil.example',
      '/account/../../evil',
      '/account/./x',
      '/account/.hidden',
      '/accountx',
      '/account@evil.example',
      '/account//evil.example',
      '/account/top-up#frag',
      '/account/top-up?x=<script>',
      '/account/top-up\r\nLocation: https://evil.example',
      'javascript:alert(1)',
      '/account/signin',
      '/account/signin?next=/account',
      '/account/signout',
      '/account/federated',
      `/account/${'a'.repeat(300)}`,
      '',
      undefined,
      ['/account'],
    ]) {
      expect(safeNext(bad), String(bad)).toBeUndefined();
    }
  });

  it('the sign-in link carries the page to return to, encoded', () => {
    expect(signInPath('/account/top-up')).toBe('/account/signin?next=%2Faccount%2Ftop-up');
    expect(signInPath('/account')).toBe('/account/signin');
    expect(signInPath('//evil.example')).toBe('/account/signin');
    expect(signInPath(undefined)).toBe('/account/signin');
  });
});
