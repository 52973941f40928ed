import { describe, expect, it } from 'vitest';
import { type Action, actions, findAction } from '../../catalog/index.js';
import { inputJsonSchema, outputJsonSchema } from '../../catalog/json-schema.js';
import { zodIssues } from '../../src/run/zod-issues.js';

// files and mediastage input constraints (docs/spec.md §2.3, §2.4, §4.2, §4.4, §8), checked on the catalog schemas.

const action = (id: string): Action => {
  const a = findAction(id);
  if (!a) throw new Error(`missing ${id}`);
  return a;
};
const paths = (id: string, body: unknown): string[] => {
  const r = action(id).input.safeParse(body);
  return r.success ? [] : zodIssues(r.error).map((i) => i.path);
};

const IDS = ['files/upload', 'files/upload_from_url', 'files/list', 'mediastage/upload'];

describe('files and mediastage catalog entries', () => {
  it('[catalog:prices] prices match docs/spec.md §4.1 (files/list is free: docs/decisions.md)', () => {
    expect(IDS.map((id) => action(id).priceCents)).toEqual([1, 1, 0, 1]);
    expect(action('files/list').access).toBe('account');
  });

  it('keeps docs/spec.md §4 order: mediastage, videoasm, platform, files', () => {
    const services = [...new Set(actions.map((a) => a.service))];
    const order = ['mediastage', 'videoasm', 'platform', 'files'].map((s) => services.indexOf(s));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(order.every((i) => i >= 0)).toBe(true);
  });

  it.each(IDS)('%s: strict, four annotations, described fields, a valid example', (id) => {
    const a = action(id);
    expect(a.strict).toBe(true);
    expect(Object.keys(a.annotations).sort()).toEqual([
      'destructiveHint',
      'idempotentHint',
      'openWorldHint',
      'readOnlyHint',
    ]);
    const props = inputJsonSchema(a).properties as Record<string, { description?: string }>;
    for (const [k, v] of Object.entries(props)) expect(v.description, `${id}.${k}`).toBeTruthy();
    expect(outputJsonSchema(a).properties).toBeTruthy();
    expect(a.input.safeParse(a.example).success).toBe(true);
  });

  it('[http:strict-rejects-unknown] strict actions name the unknown field', () => {
    expect(paths('files/upload', { filename: 'a', size_bytes: 1, colour: 'red' })).toEqual(['colour']);
    expect(paths('mediastage/upload', { file_name: 'a', content_type: 'b', extra: 1 })).toEqual(['extra']);
  });

  it('[catalog:constraints] [files:size-limit] files/upload: filename 1-200, size 1..104857600, mime ≤ 100', () => {
    const ok = { filename: 'a.mp4', size_bytes: 104_857_600 };
    expect(paths('files/upload', ok)).toEqual([]);
    expect(paths('files/upload', { ...ok, size_bytes: 104_857_601 })).toEqual(['size_bytes']);
    expect(paths('files/upload', { ...ok, size_bytes: 0 })).toEqual(['size_bytes']);
    expect(paths('files/upload', { ...ok, size_bytes: 1.5 })).toEqual(['size_bytes']);
    expect(paths('files/upload', { filename: 'a' })).toEqual(['size_bytes']);
    expect(paths('files/upload', { ...ok, filename: '' })).toEqual(['filename']);
    expect(paths('files/upload', { ...ok, filename: 'x'.repeat(201) })).toEqual(['filename']);
    expect(paths('files/upload', { ...ok, filename: 'x'.repeat(200) })).toEqual([]);
    expect(paths('files/upload', { ...ok, mime: `video/${'x'.repeat(94)}` })).toEqual([]);
    expect(paths('files/upload', { ...ok, mime: `video/${'x'.repeat(95)}` })).toEqual(['mime']);
    // It is served back as the Content-Type header: a header-breaking value is refused up front.
    expect(paths('files/upload', { ...ok, mime: 'text/html\r\nSet-Cookie: a=b' })).toEqual(['mime']);
    expect(paths('files/upload', { ...ok, mime: 'text/plain; charset=utf-8' })).toEqual([]);
  });

  it('[catalog:constraints] tags: at most 10, each 1-40; note at most 500', () => {
    const ok = { filename: 'a', size_bytes: 1 };
    const ten = Array.from({ length: 10 }, (_, i) => `t${i}`);
    for (const id of ['files/upload', 'files/upload_from_url']) {
      const base = id === 'files/upload' ? ok : { url: 'https://example.com/a.png' };
      expect(paths(id, { ...base, tags: ten, note: 'n'.repeat(500) })).toEqual([]);
      expect(paths(id, { ...base, tags: [...ten, 'x'] })).toEqual(['tags']);
      expect(paths(id, { ...base, tags: [''] })).toEqual(['tags.0']);
      expect(paths(id, { ...base, tags: ['x'.repeat(41)] })).toEqual(['tags.0']);
      expect(paths(id, { ...base, note: 'n'.repeat(501) })).toEqual(['note']);
    }
  });

  it('[catalog:constraints] upload_from_url: url is an http(s) URI; filename 1-200', () => {
    expect(paths('files/upload_from_url', { url: 'https://example.com/x' })).toEqual([]);
    expect(paths('files/upload_from_url', { url: 'file:///etc/passwd' })).toEqual(['url']);
    expect(paths('files/upload_from_url', { url: 'not a url' })).toEqual(['url']);
    expect(paths('files/upload_from_url', {})).toEqual(['url']);
    expect(paths('files/upload_from_url', { url: 'http://a.example/x', filename: '' })).toEqual(['filename']);
  });

  it('[catalog:constraints] files/list: limit 1-100 (default 50), offset ≥ 0', () => {
    expect(action('files/list').input.parse({})).toEqual({ limit: 50, offset: 0 });
    expect(paths('files/list', { limit: 101 })).toEqual(['limit']);
    expect(paths('files/list', { limit: 0 })).toEqual(['limit']);
    expect(paths('files/list', { offset: -1 })).toEqual(['offset']);
  });

  it('[catalog:constraints] mediastage/upload: file_name and content_type, min length 1', () => {
    expect(paths('mediastage/upload', { file_name: 'a.png', content_type: 'image/png' })).toEqual([]);
    expect(paths('mediastage/upload', { file_name: '', content_type: 'image/png' })).toEqual(['file_name']);
    expect(paths('mediastage/upload', { file_name: 'a' })).toEqual(['content_type']);
  });
});
