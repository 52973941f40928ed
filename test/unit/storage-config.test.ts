import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.js';

// TOLLGATE_STORAGE_URL: s3://bucket[/prefix]?endpoint=…&region=…&force_path_style=true, credentials from the
// standard AWS variables only.

const AWS = { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI-SECRET-KEY' };

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  throw new Error('expected a configuration error');
}

describe('storage configuration', () => {
  it('[ops:storage-url] unset: local storage under the data dir', () => {
    expect(loadConfig({}).storage).toEqual({ kind: 'local' });
  });

  it('[ops:storage-url] an S3 URL: bucket, prefix, endpoint, region, path style; credentials kept out of sight', () => {
    const c = loadConfig({
      TOLLGATE_STORAGE_URL:
        's3://my-bucket/tollgate/prod?endpoint=http://127.0.0.1:9000/&region=eu-west-1&force_path_style=true',
      ...AWS,
      AWS_SESSION_TOKEN: 'SESSION-TOKEN-SECRET',
    });
    expect(c.storage).toMatchObject({
      kind: 's3',
      bucket: 'my-bucket',
      prefix: 'tollgate/prod/',
      endpoint: 'http://127.0.0.1:9000',
      region: 'eu-west-1',
      forcePathStyle: true,
    });
    if (c.storage.kind !== 's3') throw new Error('s3 expected');
    expect(c.storage.credentials).toEqual({
      accessKeyId: 'AKIDEXAMPLE',
      secretAccessKey: 'wJalrXUtnFEMI-SECRET-KEY',
      sessionToken: 'SESSION-TOKEN-SECRET',
    });
    // Whatever serialises the configuration (a log line, a debug dump) never shows the keys.
    const dumped = JSON.stringify(c);
    expect(dumped).not.toContain('SECRET');
    expect(dumped).not.toContain('AKIDEXAMPLE');
    expect(Object.keys(c.storage)).not.toContain('credentials');
  });

  it('[ops:storage-url] defaults: no prefix, AWS endpoint, AWS_REGION else us-east-1, virtual-hosted style', () => {
    const c = loadConfig({ TOLLGATE_STORAGE_URL: 's3://bucket.example', ...AWS });
    expect(c.storage).toEqual({
      kind: 's3',
      bucket: 'bucket.example',
      prefix: '',
      endpoint: undefined,
      region: 'us-east-1',
      forcePathStyle: false,
    });
    const regional = loadConfig({ TOLLGATE_STORAGE_URL: 's3://bucket', ...AWS, AWS_REGION: 'ap-south-1' });
    expect(regional.storage).toMatchObject({ region: 'ap-south-1' });
  });

  it('[ops:storage-url] [ops:config-errors] bad URLs are refused with every problem named', () => {
    expect(problems({ TOLLGATE_STORAGE_URL: 'not a url', ...AWS })).toEqual([
      expect.stringMatching(/^TOLLGATE_STORAGE_URL: not a URL; expected s3:\/\/bucket/),
    ]);
    expect(problems({ TOLLGATE_STORAGE_URL: 'https://bucket', ...AWS })[0]).toMatch(
      /the https scheme is not supported/,
    );
    const many = problems({
      TOLLGATE_STORAGE_URL:
        's3://Bad_Bucket?endpoint=ftp://x&region=EU%20West&force_path_style=yes&forcepathstyle=true',
    }).join('\n');
    expect(many).toContain('bucket name');
    expect(many).toContain('endpoint must be an http(s) URL');
    expect(many).toContain('region must be');
    expect(many).toContain('force_path_style must be true or false');
    expect(many).toContain('unknown parameter "forcepathstyle"');
    expect(many).toContain('needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
  });

  it('[ops:storage-url] credentials in the URL are refused without being echoed', () => {
    const p = problems({ TOLLGATE_STORAGE_URL: 's3://AKIDINURL:SECRETINURL@bucket', ...AWS }).join('\n');
    expect(p).toMatch(/must not carry credentials; set AWS_ACCESS_KEY_ID/);
    expect(p).not.toContain('SECRETINURL');
    expect(p).not.toContain('AKIDINURL');
    const endpoint = problems({
      TOLLGATE_STORAGE_URL: `s3://bucket?endpoint=${encodeURIComponent('https://u:SECRETINURL@s3.example')}`,
      ...AWS,
    }).join('\n');
    expect(endpoint).toContain('endpoint must be an http(s) URL without credentials');
    expect(endpoint).not.toContain('SECRETINURL');
  });
});
