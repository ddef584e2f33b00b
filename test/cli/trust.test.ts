/**
 * A repository's vlt.toml cannot choose where secrets and code go: the built CLI, run as a user
 * would with HOME and XDG_CONFIG_HOME in a temporary folder, against a fake OpenAI-compatible
 * endpoint on 127.0.0.1 that the repository's vlt.toml names. Untrusted, the endpoint sees no
 * request at all; after `vlt trust` it does, with the key the vlt.toml named; a vlt.toml
 * changed since then is untrusted again. Endpoints from the user's own config are honoured.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, vlt } from '../helpers/cli';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai';

const SECRET = 'aws-secret-do-not-send';

function repoToml(baseURL: string, extra = ''): string {
  return [
    '[index]',
    'exclude = ["skipped/**"]',
    '',
    '[embeddings]',
    `base_url = "${baseURL}"`,
    'api_key_env = "AWS_SECRET_ACCESS_KEY"',
    'model = "exfil-embed"',
    'enabled = true',
    '',
    '[llm]',
    `base_url = "${baseURL}"`,
    'api_key_env = "AWS_SECRET_ACCESS_KEY"',
    'model = "exfil-chat"',
    '',
    '[oracle]',
    `rerank_url = "${baseURL}"`,
    'rerank_api_key_env = "AWS_SECRET_ACCESS_KEY"',
    extra,
  ].join('\n');
}

function writeRepo(dir: string, toml: string): void {
  mkdirSync(path.join(dir, 'src'), { recursive: true });
  mkdirSync(path.join(dir, 'skipped'), { recursive: true });
  writeFileSync(path.join(dir, 'src/session.ts'), 'export function refreshSession(token: string): string {\n  return token.trim();\n}\n');
  writeFileSync(path.join(dir, 'skipped/other.ts'), 'export const other = 1;\n');
  writeFileSync(path.join(dir, 'vlt.toml'), toml);
}

describe('vlt.toml of an untrusted repository', () => {
  let fake: FakeOpenAI;
  let ws: string;
  let home: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    fake = await startFakeOpenAI({ dimensions: 8 });
    ws = tempDir('vlt-trust-ws-');
    home = tempDir('vlt-trust-home-');
    writeRepo(ws, repoToml(fake.baseURL));
    env = { HOME: home, XDG_CONFIG_HOME: path.join(home, 'xdg'), AWS_SECRET_ACCESS_KEY: SECRET };
  });
  afterAll(async () => {
    await fake.close();
    rmSync(ws, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  });

  it('init sends nothing to the endpoint the repository chose, warns once, and keeps the other settings', async () => {
    const r = await vlt(['coderag', 'init', ws, '--json'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(fake.calls).toEqual([]);
    const warnings = r.stderr.split('\n').filter((l) => l.includes('vlt trust'));
    expect(warnings, r.stderr).toHaveLength(1);
    expect(warnings[0]).toMatch(/embeddings\.base_url/);
    expect(warnings[0]).toMatch(/embeddings\.api_key_env/);
    // `[index] exclude` is not a credential: it still applies.
    const report = JSON.parse(r.stdout) as { filesParsed: number };
    expect(report.filesParsed).toBe(1);
  });

  it('status says which keys were ignored and why', async () => {
    const r = await vlt(['coderag', 'status', '--json', '-C', ws], { env });
    expect(r.code, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout) as { vectors: { enabled: boolean }; trust: { trusted: boolean; ignored: string[] } };
    expect(s.vectors.enabled).toBe(false);
    expect(s.trust.trusted).toBe(false);
    expect(s.trust.ignored).toEqual(expect.arrayContaining(['embeddings.base_url', 'embeddings.api_key_env', 'llm.base_url', 'llm.api_key_env', 'oracle.rerank_url', 'oracle.rerank_api_key_env']));
    const human = await vlt(['coderag', 'status', '-C', ws], { env });
    expect(human.stdout).toMatch(/^trust\s+.*not trusted.*vlt trust/m);
    expect(fake.calls).toEqual([]);
  });

  it('the oracle calls neither the model nor the reranker the repository named', async () => {
    const r = await vlt(['-C', ws, 'oracle', 'How is the session refreshed?'], { env, timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('**Evidence brief**');
    expect(fake.calls).toEqual([]);
  }, 90_000);

  it('after `vlt trust` the endpoint is used, with the key the vlt.toml named', async () => {
    const t = await vlt(['trust', ws, '--json'], { env });
    expect(t.code, t.stderr).toBe(0);
    const rec = JSON.parse(t.stdout) as { trusted: boolean; path: string; config_sha256: string | null };
    expect(rec.trusted).toBe(true);
    expect(rec.config_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(existsSync(path.join(home, 'xdg', 'vlt', 'trusted.json'))).toBe(true);

    const r = await vlt(['coderag', 'init', ws, '--json'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/vlt trust/);
    expect(fake.counts.embeddings).toBeGreaterThan(0);
    expect(fake.calls.every((c) => c.headers.authorization === `Bearer ${SECRET}`)).toBe(true);
    const s = JSON.parse((await vlt(['coderag', 'status', '--json', '-C', ws], { env })).stdout) as { trust: { trusted: boolean; ignored: string[] } };
    expect(s.trust).toMatchObject({ trusted: true, ignored: [] });
  });

  it('a vlt.toml changed after `vlt trust` is untrusted again until trusted anew', async () => {
    fake.reset();
    writeFileSync(path.join(ws, 'vlt.toml'), repoToml(fake.baseURL, '# changed upstream'));
    writeFileSync(path.join(ws, 'src/more.ts'), 'export const more = 2;\n');
    const r = await vlt(['coderag', 'sync', '--json', '-C', ws], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(fake.calls).toEqual([]);
    expect(r.stderr).toMatch(/vlt\.toml changed since.*vlt trust/);
  });

  it('lists and revokes trust, as text and JSON', async () => {
    const list = await vlt(['trust', '--list', '--json'], { env });
    expect(list.code, list.stderr).toBe(0);
    const entries = JSON.parse(list.stdout) as Array<{ path: string; current: boolean }>;
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ current: false });
    const revoke = await vlt(['trust', '--revoke', '--json', '-C', ws], { env });
    expect(revoke.code, revoke.stderr).toBe(0);
    expect(JSON.parse(revoke.stdout)).toMatchObject({ trusted: false, revoked: true });
    const after = await vlt(['trust', '--list'], { env });
    expect(after.stdout).toMatch(/no trusted workspaces/);
    const stored = JSON.parse(readFileSync(path.join(home, 'xdg', 'vlt', 'trusted.json'), 'utf8')) as { workspaces: unknown[] };
    expect(stored.workspaces).toEqual([]);
  });
});

describe('endpoints from the user-level config', () => {
  let fake: FakeOpenAI;
  let ws: string;
  let home: string;
  beforeAll(async () => {
    fake = await startFakeOpenAI({ dimensions: 8 });
    ws = tempDir('vlt-trust-ws-');
    home = tempDir('vlt-trust-home-');
    mkdirSync(path.join(ws, 'src'), { recursive: true });
    writeFileSync(path.join(ws, 'src/a.ts'), 'export function alpha(): number {\n  return 1;\n}\n');
  });
  afterAll(async () => {
    await fake.close();
    rmSync(ws, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  });

  it('are used in an untrusted workspace (VLT_CONFIG_HOME overrides the XDG location)', async () => {
    const cfg = path.join(home, 'vlt-config');
    mkdirSync(cfg, { recursive: true });
    writeFileSync(path.join(cfg, 'config.toml'), `[embeddings]\nbase_url = "${fake.baseURL}"\napi_key_env = "MY_EMBED_KEY"\nmodel = "user-embed"\n`);
    const env = { HOME: home, XDG_CONFIG_HOME: path.join(home, 'xdg'), VLT_CONFIG_HOME: cfg, MY_EMBED_KEY: 'user-key' };
    const r = await vlt(['coderag', 'init', ws, '--json'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/vlt trust/);
    expect(fake.counts.embeddings).toBeGreaterThan(0);
    expect(fake.calls.every((c) => c.headers.authorization === 'Bearer user-key')).toBe(true);
  });

  it('are found under XDG_CONFIG_HOME', async () => {
    fake.reset();
    mkdirSync(path.join(home, 'xdg', 'vlt'), { recursive: true });
    writeFileSync(path.join(home, 'xdg', 'vlt', 'config.toml'), `[embeddings]\nbase_url = "${fake.baseURL}"\napi_key_env = "MY_EMBED_KEY"\nmodel = "xdg-embed"\n`);
    writeFileSync(path.join(ws, 'src/b.ts'), 'export const beta = 2;\n');
    const r = await vlt(['coderag', 'sync', '--json', '-C', ws], { env: { HOME: home, XDG_CONFIG_HOME: path.join(home, 'xdg'), MY_EMBED_KEY: 'xdg-key' } });
    expect(r.code, r.stderr).toBe(0);
    expect(fake.counts.embeddings).toBeGreaterThan(0);
    expect(fake.calls.every((c) => c.headers.authorization === 'Bearer xdg-key')).toBe(true);
  });
});
