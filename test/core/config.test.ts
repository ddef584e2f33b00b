import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultConfig, describeConfig, embeddingTokenCap, loadConfig, parseConfigText } from '../../src/core/config';
import { VltError } from '../../src/core/errors';
import { LANGUAGES } from '../../src/core/types';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vlt-config-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function writeToml(text: string): Promise<void> {
  await writeFile(join(dir, 'vlt.toml'), text);
}

/** Runs `fn` and returns the VltError it throws, failing the test when it does not. */
async function vltErrorOf(fn: () => Promise<unknown>): Promise<VltError> {
  try {
    await fn();
  } catch (e) {
    expect(e).toBeInstanceOf(VltError);
    return e as VltError;
  }
  throw new Error('expected a VltError');
}

describe('defaults', () => {
  it('uses defaults when there is no vlt.toml and no environment', async () => {
    const c = await loadConfig(dir, {});
    expect(c.configPath).toBeUndefined();
    expect(c.index).toEqual({
      include: [],
      exclude: [],
      languages: [...LANGUAGES],
      maxFileBytes: 1048576,
      generated: 'navigation',
      chunkMaxChars: 1500,
      queue: { files: 5, lines: 1000, timeoutSeconds: 300 },
      checkpointSeconds: 30,
    });
    expect(c.embeddings).toMatchObject({
      enabled: false,
      baseUrl: 'https://openrouter.ai/api/v1',
      model: 'qwen/qwen3-embedding-8b',
      dimensions: undefined,
      apiKeyEnv: 'OPENROUTER_API_KEY',
      batchSize: 64,
      concurrency: 2,
    });
    expect(c.embeddings.apiKey).toBeUndefined();
    expect(c.llm).toMatchObject({ baseUrl: 'https://openrouter.ai/api/v1', model: 'openai/gpt-4o-mini' });
  });

  it('defaultConfig() returns fresh objects', () => {
    const a = defaultConfig();
    a.index.exclude.push('x');
    expect(defaultConfig().index.exclude).toEqual([]);
  });

  it('treats a missing workspace like one without vlt.toml', async () => {
    const c = await loadConfig(join(dir, 'nope'), {});
    expect(c.configPath).toBeUndefined();
  });
});

describe('vlt.toml', () => {
  it('reads every section', async () => {
    await writeToml(`
[index]
include = ["src/**"]
exclude = ["**/fixtures/**"]
languages = ["go", "python"]
max_file_bytes = 2048
generated = "skip"
chunk_max_chars = 800
queue_files = 3
queue_lines = 200
queue_timeout_seconds = 60
checkpoint_seconds = 10

[embeddings]
base_url = "http://localhost:11434/v1"
model = "nomic-embed-text"
dimensions = 256
api_key_env = "MY_KEY"
batch_size = 16
concurrency = 4
enabled = true

[llm]
base_url = "https://api.openai.com/v1"
model = "gpt-4.1"
api_key_env = "MY_LLM_KEY"
`);
    const c = await loadConfig(dir, { MY_KEY: 'k-emb', MY_LLM_KEY: 'k-llm' }, { trusted: true });
    expect(c.configPath).toBe(join(dir, 'vlt.toml'));
    expect(c.trust).toEqual({ trusted: true, source: 'host', stale: false, ignored: [] });
    expect(c.index).toEqual({
      include: ['src/**'],
      exclude: ['**/fixtures/**'],
      languages: ['go', 'python'],
      maxFileBytes: 2048,
      generated: 'skip',
      chunkMaxChars: 800,
      queue: { files: 3, lines: 200, timeoutSeconds: 60 },
      checkpointSeconds: 10,
    });
    expect(c.embeddings).toMatchObject({
      enabled: true,
      baseUrl: 'http://localhost:11434/v1',
      model: 'nomic-embed-text',
      dimensions: 256,
      apiKeyEnv: 'MY_KEY',
      apiKeySource: 'MY_KEY',
      batchSize: 16,
      concurrency: 4,
    });
    expect(c.embeddings.apiKey).toBe('k-emb');
    expect(c.llm).toMatchObject({ baseUrl: 'https://api.openai.com/v1', model: 'gpt-4.1', apiKeySource: 'MY_LLM_KEY' });
    expect(c.llm.apiKey).toBe('k-llm');
  });

  it('reports a syntax error with its line and column', async () => {
    await writeToml('[index]\nmax_file_bytes = 10\nexclude = ["a",\n[embeddings]\n');
    const err = await vltErrorOf(() => loadConfig(dir, {}));
    expect(err.code).toBe('CONFIG_INVALID');
    expect(err.message).toMatch(/^vlt\.toml:4:\d+: /);
    expect(err.message).not.toContain('\n');
    expect(err.details).toMatchObject({ line: 4 });
  });

  it('reports a syntax error on the first line', () => {
    expect(() => parseConfigText('= 1')).toThrow(/^vlt\.toml:1:1: /);
  });

  it('rejects an unknown key, naming its path', async () => {
    await writeToml('[index]\nmax_file_bytes = 10\nexclud = ["a"]\n');
    const err = await vltErrorOf(() => loadConfig(dir, {}));
    expect(err.code).toBe('CONFIG_INVALID');
    expect(err.message).toContain("'index.exclud'");
  });

  it('rejects an unknown section', async () => {
    await writeToml('[indexing]\nmax_file_bytes = 10\n');
    const err = await vltErrorOf(() => loadConfig(dir, {}));
    expect(err.message).toContain("'indexing'");
  });

  it('rejects a value of the wrong type, naming the key path', async () => {
    await writeToml('[index]\nmax_file_bytes = "big"\n[embeddings]\nbatch_size = -1\n');
    const err = await vltErrorOf(() => loadConfig(dir, {}));
    expect(err.code).toBe('CONFIG_INVALID');
    expect(err.message).toContain('index.max_file_bytes');
    expect(err.message).toContain('embeddings.batch_size');
  });

  it('indexes generated files for navigation unless [index] generated says otherwise, and rejects other values', async () => {
    expect(defaultConfig().index.generated).toBe('navigation');
    await writeToml('[index]\ngenerated = "index"\n');
    expect((await loadConfig(dir, {})).index.generated).toBe('index');
    await writeToml('[index]\n\ngenerated = "yes"\n');
    const err = await vltErrorOf(() => loadConfig(dir, {}));
    expect(err.code).toBe('CONFIG_INVALID');
    expect(err.message).toContain('index.generated');
    expect(err.message).toMatch(/navigation/);
  });

  it('rejects an unknown language', async () => {
    await writeToml('[index]\nlanguages = ["go", "cobol"]\n');
    const err = await vltErrorOf(() => loadConfig(dir, {}));
    expect(err.message).toContain('index.languages.1');
  });

  it('rejects a base_url that is not http(s)', async () => {
    await writeToml('[embeddings]\nbase_url = "localhost:1234"\n');
    const err = await vltErrorOf(() => loadConfig(dir, {}));
    expect(err.message).toContain('embeddings.base_url');
  });

  it('rejects a file that is not UTF-8', async () => {
    await writeFile(join(dir, 'vlt.toml'), Buffer.from([0x5b, 0xff, 0xfe, 0x5d]));
    const err = await vltErrorOf(() => loadConfig(dir, {}));
    expect(err.code).toBe('CONFIG_INVALID');
  });
});

describe('environment', () => {
  it('enables embeddings when a key is found, trying the fallbacks in order, each for its own service only', async () => {
    const viaOpenRouter = await loadConfig(dir, { OPENROUTER_API_KEY: 'sk-or' });
    expect(viaOpenRouter.embeddings.enabled).toBe(true);
    expect(viaOpenRouter.embeddings.apiKeySource).toBe('OPENROUTER_API_KEY');

    // OpenAI's key goes to OpenAI only: not to the default OpenRouter endpoint.
    expect((await loadConfig(dir, { OPENAI_API_KEY: 'sk-openai' })).embeddings).toMatchObject({ enabled: false, apiKeySource: undefined });
    const viaOpenAi = await loadConfig(dir, { OPENAI_API_KEY: 'sk-openai', VLT_EMBEDDINGS_BASE_URL: 'https://api.openai.com/v1' });
    expect(viaOpenAi.embeddings.enabled).toBe(true);
    expect(viaOpenAi.embeddings.apiKey).toBe('sk-openai');
    expect(viaOpenAi.embeddings.apiKeySource).toBe('OPENAI_API_KEY');

    // Neither generic key goes to an endpoint of another service, whoever chose it.
    const local = await loadConfig(dir, { OPENAI_API_KEY: 'sk-openai', OPENROUTER_API_KEY: 'sk-or', VLT_EMBEDDINGS_BASE_URL: 'http://127.0.0.1:8080/v1', VLT_LLM_BASE_URL: 'https://openrouter.ai.example.com/v1' });
    expect(local.embeddings.apiKey).toBeUndefined();
    expect(local.llm.apiKey).toBeUndefined();
    const sub = await loadConfig(dir, { OPENROUTER_API_KEY: 'sk-or', VLT_LLM_BASE_URL: 'https://eu.openrouter.ai/api/v1' });
    expect(sub.llm.apiKey).toBe('sk-or');

    const both = await loadConfig(dir, { OPENAI_API_KEY: 'sk-openai', OPENROUTER_API_KEY: 'sk-or' });
    expect(both.embeddings.apiKey).toBe('sk-or');

    const explicit = await loadConfig(dir, { OPENROUTER_API_KEY: 'sk-or', VLT_EMBEDDINGS_API_KEY: 'sk-vlt' });
    expect(explicit.embeddings.apiKey).toBe('sk-vlt');
    expect(explicit.embeddings.apiKeySource).toBe('VLT_EMBEDDINGS_API_KEY');

    const empty = await loadConfig(dir, { OPENROUTER_API_KEY: '  ' });
    expect(empty.embeddings.apiKey).toBeUndefined();
    expect(empty.embeddings.enabled).toBe(false);
  });

  it('prefers the configured api_key_env over the fallbacks', async () => {
    await writeToml('[embeddings]\napi_key_env = "CORP_KEY"\n');
    const c = await loadConfig(dir, { CORP_KEY: 'corp', OPENROUTER_API_KEY: 'sk-or' }, { trusted: true });
    expect(c.embeddings.apiKey).toBe('corp');
  });

  it('overrides vlt.toml values', async () => {
    await writeToml('[embeddings]\nmodel = "from-toml"\ndimensions = 128\n[llm]\nmodel = "llm-toml"\n');
    const c = await loadConfig(dir, {
      VLT_EMBEDDINGS_BASE_URL: 'http://127.0.0.1:8080/v1',
      VLT_EMBEDDINGS_MODEL: 'from-env',
      VLT_EMBEDDINGS_DIMENSIONS: '512',
      VLT_LLM_BASE_URL: 'http://127.0.0.1:9090/v1',
      VLT_LLM_MODEL: 'llm-env',
      VLT_LLM_API_KEY: 'llm-key',
    });
    expect(c.embeddings).toMatchObject({ baseUrl: 'http://127.0.0.1:8080/v1', model: 'from-env', dimensions: 512 });
    expect(c.llm).toMatchObject({ baseUrl: 'http://127.0.0.1:9090/v1', model: 'llm-env' });
    expect(c.llm.apiKey).toBe('llm-key');
  });

  it('VLT_EMBEDDINGS=off disables embeddings even with a key and enabled = true', async () => {
    await writeToml('[embeddings]\nenabled = true\n');
    const c = await loadConfig(dir, { VLT_EMBEDDINGS: 'off', OPENROUTER_API_KEY: 'sk' });
    expect(c.embeddings.enabled).toBe(false);
    expect(c.embeddings.apiKey).toBe('sk');
  });

  it('honours enabled from vlt.toml when the environment says nothing', async () => {
    await writeToml('[embeddings]\nenabled = false\n');
    expect((await loadConfig(dir, { OPENROUTER_API_KEY: 'sk' })).embeddings.enabled).toBe(false);
    await writeToml('[embeddings]\nenabled = true\nbase_url = "http://localhost:11434/v1"\n');
    expect((await loadConfig(dir, {}, { trusted: true })).embeddings.enabled).toBe(true);
    // Turning vectors on sends code somewhere: only a trusted vlt.toml may do it.
    expect((await loadConfig(dir, {})).embeddings.enabled).toBe(false);
  });

  it('rejects malformed environment values', async () => {
    for (const env of [
      { VLT_EMBEDDINGS_DIMENSIONS: 'many' },
      { VLT_EMBEDDINGS_DIMENSIONS: '-3' },
      { VLT_EMBEDDINGS: 'maybe' },
      { VLT_EMBEDDINGS_BASE_URL: 'not a url' },
    ]) {
      const err = await vltErrorOf(() => loadConfig(dir, env));
      expect(err.code).toBe('CONFIG_INVALID');
      expect(err.message).toContain(Object.keys(env)[0]);
    }
  });
});

describe('secrets', () => {
  it('never shows the API keys when the config is printed', async () => {
    const c = await loadConfig(dir, { VLT_EMBEDDINGS_API_KEY: 'sk-secret-emb', VLT_LLM_API_KEY: 'sk-secret-llm' });
    expect(c.embeddings.apiKey).toBe('sk-secret-emb');
    for (const text of [JSON.stringify(c), inspect(c, { depth: 10 }), JSON.stringify(describeConfig(c))]) {
      expect(text).not.toContain('sk-secret');
    }
    expect(describeConfig(c)).toMatchObject({ embeddings: { apiKey: '(set)', apiKeySource: 'VLT_EMBEDDINGS_API_KEY' } });
  });
});

describe('[oracle]', () => {
  it('has no rerank endpoint by default, even with a model key around', async () => {
    const c = await loadConfig(dir, { OPENROUTER_API_KEY: 'sk-or' });
    expect(c.oracle).toEqual({ rerank: undefined, pathTimeoutMs: 4000, llmRerank: false });
  });

  it('reads the rerank endpoint from vlt.toml, the environment overriding it, and hides its key', async () => {
    await writeFile(join(dir, 'vlt.toml'), '[oracle]\nrerank_url = "http://127.0.0.1:8080/v1"\nrerank_model = "bge-reranker"\npath_timeout_ms = 2500\n');
    const c = await loadConfig(dir, { VLT_RERANK_API_KEY: 'sk-rerank-secret', VLT_RERANK_MODEL: 'jina-reranker' }, { trusted: true });
    expect(c.oracle.pathTimeoutMs).toBe(2500);
    expect(c.oracle.rerank).toMatchObject({ baseUrl: 'http://127.0.0.1:8080/v1', model: 'jina-reranker' });
    expect(c.oracle.rerank?.apiKey).toBe('sk-rerank-secret');
    for (const text of [JSON.stringify(c), JSON.stringify(describeConfig(c))]) expect(text).not.toContain('sk-rerank-secret');
    const bad = await vltErrorOf(() => loadConfig(dir, { VLT_RERANK_BASE_URL: 'ftp://x' }));
    expect(bad.code).toBe('CONFIG_INVALID');
    await writeFile(join(dir, 'vlt.toml'), '[oracle]\npath_timeout_ms = 5\n');
    const small = await vltErrorOf(() => loadConfig(dir, {}));
    expect(small.message).toMatch(/path_timeout_ms/);
  });
});

describe('[embeddings] spending caps', () => {
  async function withUserConfig(text: string): Promise<NodeJS.ProcessEnv> {
    const home = join(dir, 'user-config');
    await mkdir(home, { recursive: true });
    await writeFile(join(home, 'config.toml'), text);
    return { VLT_CONFIG_HOME: home };
  }

  it('reads max_tokens, max_cost and the price, and caps by whichever is lower', async () => {
    await writeToml('[embeddings]\nmax_tokens = 2000000\nmax_cost = 0.5\nprice_per_million_tokens = 0.02\n');
    const c = await loadConfig(dir, {});
    expect(c.embeddings).toMatchObject({ maxTokens: 2_000_000, maxCost: 0.5, pricePerMillionTokens: 0.02 });
    // $0.50 at $0.02 a million tokens is 25 M tokens: max_tokens is the lower.
    expect(embeddingTokenCap(c.embeddings)).toEqual({ tokens: 2_000_000, setting: '[embeddings] max_tokens = 2000000' });
    expect(embeddingTokenCap({ maxTokens: undefined, maxCost: 0.01, pricePerMillionTokens: 0.02 })).toEqual({ tokens: 500_000, setting: '[embeddings] max_cost = 0.01 at price_per_million_tokens = 0.02' });
    expect(embeddingTokenCap(defaultConfig().embeddings)).toBeUndefined();
  });

  it("lets a repository's vlt.toml lower the user's caps, never raise them or lower the user's price", async () => {
    const env = await withUserConfig('[embeddings]\nmax_tokens = 1000\nmax_cost = 1\nprice_per_million_tokens = 0.1\n');
    await writeToml('[embeddings]\nmax_tokens = 999999999\nmax_cost = 1000\nprice_per_million_tokens = 0.000001\n');
    expect((await loadConfig(dir, env)).embeddings).toMatchObject({ maxTokens: 1000, maxCost: 1, pricePerMillionTokens: 0.1 });
    await writeToml('[embeddings]\nmax_tokens = 10\n');
    expect((await loadConfig(dir, env)).embeddings.maxTokens).toBe(10);
  });

  it('refuses max_cost without a price', async () => {
    await writeToml('[embeddings]\nmax_cost = 5\n');
    const e = await vltErrorOf(() => loadConfig(dir, {}));
    expect(e.code).toBe('CONFIG_INVALID');
    expect(e.message).toMatch(/max_cost needs price_per_million_tokens/);
  });
});
