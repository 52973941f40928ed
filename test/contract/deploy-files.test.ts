import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { envSchema, loadConfig } from '../../src/config/index.js';

// The deployment files (Dockerfile, compose.yaml, deploy/) cannot be run here (no Docker, no systemd): what can be
// checked is that every TOLLGATE_* variable they set is one the gateway accepts, with the values they give it,
// and that the install commands they rely on exist. The docs name the real entry point, never `npx tollgate`
// (outside this repository npx would ask the registry for an unclaimed package of that name).

const ROOT = join(import.meta.dirname, '..', '..');
const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');
const KNOWN = new Set(Object.keys(envSchema.shape));

/** compose's `${VAR}`, `${VAR:?msg}`, `${VAR:-default}` with example values (deploy/compose.env.example). */
function interpolate(value: string): string {
  const example = Object.fromEntries(
    [...read('deploy/compose.env.example').matchAll(/^([A-Z_]+)=(.*)$/gm)].map((m) => [m[1], m[2]]),
  );
  return value.replace(/\$\{([A-Z_]+)(?::[?-][^}]*)?\}/g, (_, name: string) => {
    const v = example[name];
    if (v === undefined) throw new Error(`compose.yaml uses \${${name}}, not in deploy/compose.env.example`);
    return v;
  });
}

/** The gateway's environment in compose.yaml: the `x-gateway-env` block. */
function composeEnv(): Record<string, string> {
  const text = read('compose.yaml');
  const block = /^x-gateway-env: &gateway-env\n((?: {2}.*\n|\n)+)/m.exec(text)?.[1];
  if (!block) throw new Error('compose.yaml has no x-gateway-env block');
  const env: Record<string, string> = {};
  for (const m of block.matchAll(/^ {2}([A-Z][A-Z0-9_]*): (.*)$/gm)) {
    env[m[1] as string] = interpolate((m[2] as string).replace(/^"(.*)"$/, '$1'));
  }
  return env;
}

function unitEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const m of read('deploy/tollgate.service').matchAll(/^Environment=([A-Z0-9_]+)=(.*)$/gm)) {
    env[m[1] as string] = m[2] as string;
  }
  return env;
}

function dockerEnv(): Record<string, string> {
  const block = /^ENV ((?:.*\\\n)*.*)$/m.exec(read('Dockerfile'))?.[1] ?? '';
  return Object.fromEntries(
    [...block.matchAll(/([A-Z][A-Z0-9_]*)=(\S+)/g)].map((m) => [m[1] as string, m[2] as string]),
  );
}

function tollgateNames(text: string): string[] {
  return [...new Set([...text.matchAll(/\bTOLLGATE_[A-Z0-9_]*[A-Z0-9]\b/g)].map((m) => m[0]))];
}

function files(dir: string, ext: RegExp): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((e) => {
    const rel = `${dir}/${e}`;
    if (statSync(join(ROOT, rel)).isDirectory()) return files(rel, ext);
    return ext.test(e) ? [rel] : [];
  });
}

describe('deployment files', () => {
  it('[deploy:env-accepted] every TOLLGATE_* variable in Dockerfile, compose.yaml and the systemd unit is one the config accepts', () => {
    for (const f of ['Dockerfile', 'compose.yaml', 'deploy/tollgate.service', 'deploy/Caddyfile']) {
      expect(
        tollgateNames(read(f)).filter((n) => !KNOWN.has(n)),
        `${f} names variables the gateway does not know`,
      ).toEqual([]);
    }
  });

  it('[deploy:env-accepted] the values they set make a valid configuration (compose: two replicas on PostgreSQL and S3)', () => {
    const compose = loadConfig({ ...dockerEnv(), ...composeEnv() });
    expect(compose.database?.url).toMatch(/^postgres:\/\/tollgate:.+@postgres:5432\/tollgate$/);
    expect(compose.storage).toMatchObject({ kind: 's3', bucket: 'tollgate' });
    expect(compose.publicUrl).toBe('https://gateway.example.com');
    expect(compose.host).toBe('0.0.0.0');
    expect(read('compose.yaml')).toMatch(/deploy:\n\s+replicas: 2\n/);

    const unit = loadConfig(unitEnv());
    expect(unit.dataDir).toBe('/var/lib/tollgate');
    expect(read('deploy/tollgate.service')).toMatch(
      /^ExecStart=\/usr\/bin\/node --max-semi-space-size=4 --v8-pool-size=2 \/opt\/tollgate\/bin\/tollgate\.js serve$/m,
    );
  });

  it('[deploy:entry-point] the container runs node bin/tollgate.js serve as a non-root user, from a slim install', () => {
    const docker = read('Dockerfile');
    expect(docker).toMatch(
      /^ENTRYPOINT \["node", "--max-semi-space-size=4", "--v8-pool-size=2", "bin\/tollgate\.js"\]\nCMD \["serve"\]$/m,
    );
    expect(docker).toMatch(/^USER node$/m);
    // The final image's dependencies come from `npm ci --omit=dev`; dist/ from a stage that has them all.
    expect(docker).toMatch(/^FROM toolchain AS deps\nRUN npm ci --omit=dev /m);
    expect(docker).toMatch(/^COPY --from=deps \/app\/node_modules node_modules$/m);
    expect(docker).toMatch(/^RUN npm ci --no-audit --no-fund$/m);
    expect(docker).toMatch(/^RUN npm run build$/m);
    expect(docker).toMatch(/^COPY --from=build \/app\/dist dist$/m);
    // npm ci --omit=dev runs the root package's install scripts without the dev dependencies: none may need them.
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare', 'preprepare', 'postprepare']) {
      expect(scripts[hook], `package.json "${hook}" runs during npm ci --omit=dev`).toBeUndefined();
    }
  });

  it('[deploy:entry-point] the docs, the CLI and its messages never say `npx tollgate`', () => {
    const texts = [
      'README.md',
      '.env.example',
      ...files('docs', /\.md$/),
      ...files('src', /\.ts$/),
      ...files('auth', /\.ts$/),
      ...files('deploy', /./),
      'compose.yaml',
      'Dockerfile',
    ];
    const offenders = texts.filter((f) => /npx\s+tollgate/.test(read(f)));
    expect(offenders).toEqual([]);
  });

  it('[deploy:node-flags] npm start, the container, the systemd unit and the bench start Node alike', async () => {
    const { SERVE_NODE_FLAGS } = await import('../../bench/process.js');
    const flags = SERVE_NODE_FLAGS.join(' ');
    expect(flags).toBe('--max-semi-space-size=4 --v8-pool-size=2');
    const start = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.start;
    expect(start).toContain(`exec node ${flags} bin/tollgate.js serve`);
    const entry = SERVE_NODE_FLAGS.map((f) => `"${f}", `).join('');
    expect(read('Dockerfile')).toContain(`ENTRYPOINT ["node", ${entry}"bin/tollgate.js"]`);
    expect(read('deploy/tollgate.service')).toMatch(
      new RegExp(`^ExecStart=/usr/bin/node ${flags} /opt/tollgate/bin/tollgate\\.js serve$`, 'm'),
    );
  });
});
