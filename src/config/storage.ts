// Where stored files live (TOLLGATE_STORAGE_URL): unset, under the data dir; `s3://bucket[/prefix]?…`, an
// S3-compatible bucket shared by every replica. Credentials come only from the standard AWS variables, are
// never part of the URL, and are kept off every enumerable property so no log or JSON dump shows them.

export type StorageConfig =
  | { kind: 'local' }
  | {
      kind: 's3';
      bucket: string;
      /** Key prefix inside the bucket: '' or ending in '/'. */
      prefix: string;
      /** A custom endpoint (MinIO, R2, Ceph, …); undefined: AWS's own for the region. */
      endpoint: string | undefined;
      region: string;
      forcePathStyle: boolean;
      /** From AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (/ AWS_SESSION_TOKEN); not enumerable. */
      credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string | undefined };
    };

const VAR = 'TOLLGATE_STORAGE_URL';
const SHAPE = 's3://bucket[/prefix]?endpoint=https://…&region=…&force_path_style=true';
const PARAMS = new Set(['endpoint', 'region', 'force_path_style']);
// S3's bucket naming rules (lower case, 3-63 characters, no leading or trailing dot or hyphen).
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** Parses TOLLGATE_STORAGE_URL; problems are pushed (never echoing the value, which may hold a secret). */
export function storageConfig(
  raw: string | undefined,
  source: NodeJS.ProcessEnv,
  problems: string[],
): StorageConfig {
  if (raw === undefined) return { kind: 'local' };
  const start = problems.length;
  if (!URL.canParse(raw)) {
    problems.push(`${VAR}: not a URL; expected ${SHAPE}`);
    return { kind: 'local' };
  }
  const u = new URL(raw);
  if (u.protocol !== 's3:') {
    problems.push(`${VAR}: the ${u.protocol.slice(0, -1)} scheme is not supported; expected ${SHAPE}`);
  }
  if (u.username || u.password) {
    problems.push(
      `${VAR}: must not carry credentials; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY instead`,
    );
  }
  const bucket = u.hostname;
  if (!BUCKET.test(bucket)) {
    problems.push(`${VAR}: the bucket name must be 3-63 lower-case letters, digits, dots or hyphens`);
  }
  const path = u.pathname.replace(/^\/+/, '');
  const prefix = path === '' || path.endsWith('/') ? path : `${path}/`;
  for (const key of u.searchParams.keys()) {
    if (!PARAMS.has(key)) {
      problems.push(`${VAR}: unknown parameter "${key}" (known: ${[...PARAMS].join(', ')})`);
    }
  }
  const endpoint = endpointOf(u.searchParams.get('endpoint'), problems);
  const region = u.searchParams.get('region') || source.AWS_REGION || 'us-east-1';
  if (!/^[a-z0-9-]{1,40}$/.test(region)) {
    problems.push(`${VAR}: region must be a region name such as us-east-1`);
  }
  const pathStyle = u.searchParams.get('force_path_style') ?? 'false';
  if (pathStyle !== 'true' && pathStyle !== 'false') {
    problems.push(`${VAR}: force_path_style must be true or false`);
  }
  const accessKeyId = source.AWS_ACCESS_KEY_ID;
  const secretAccessKey = source.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) {
    problems.push(`${VAR}: S3 storage needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY`);
  }
  if (problems.length > start || !accessKeyId || !secretAccessKey) return { kind: 'local' };
  const config: StorageConfig = {
    kind: 's3',
    bucket,
    prefix,
    endpoint,
    region,
    forcePathStyle: pathStyle === 'true',
    credentials: { accessKeyId, secretAccessKey },
  };
  Object.defineProperty(config, 'credentials', {
    value: { accessKeyId, secretAccessKey, sessionToken: source.AWS_SESSION_TOKEN || undefined },
    enumerable: false,
  });
  return config;
}

function endpointOf(value: string | null, problems: string[]): string | undefined {
  if (value === null) return undefined;
  const u = URL.canParse(value) ? new URL(value) : undefined;
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:') || u.username || u.password) {
    problems.push(`${VAR}: endpoint must be an http(s) URL without credentials, e.g. https://s3.example.com`);
    return undefined;
  }
  return value.replace(/\/+$/, '');
}
