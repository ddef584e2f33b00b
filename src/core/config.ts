/**
 * Workspace configuration: the optional `<workspace>/vlt.toml` and the user's own
 * `config.toml` (in the user config folder, see `trust.ts`) merged with environment variables
 * over built-in defaults.
 *
 * Precedence, highest first: environment variables, then vlt.toml, then the user's config.toml,
 * then defaults. Both files are validated strictly (unknown keys are errors) because a misspelt
 * key that is silently ignored is worse than a loud failure at startup.
 *
 * Trust. The workspace's vlt.toml comes with the repository. The keys that choose where code
 * and keys are sent ({@link TRUSTED_ONLY_KEYS}: endpoints, models, key variable names, and
 * `enabled = true`) are taken from it only when the workspace is trusted (`vlt trust`, or the
 * host says so); otherwise they are ignored and listed in `config.trust.ignored` so that hosts
 * can say so. Everything else in vlt.toml (include/exclude, chunk sizes, queue thresholds…)
 * applies either way. `[security] deny` only ever adds patterns to the defaults. A vault the
 * user did not place is `confined`: the vault refuses a root that leads outside the workspace.
 *
 * The generic keys `OPENROUTER_API_KEY` and `OPENAI_API_KEY` are sent only to their own
 * services; any other endpoint gets a key from `VLT_*_API_KEY` or the variable its
 * `api_key_env` names.
 *
 * API keys are resolved here so that hosts do not each reimplement the fallback chain,
 * but they are stored as non-enumerable properties: `JSON.stringify`, `console.log` and
 * `util.inspect` of a config never show them, so a careless debug log cannot leak them.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parse as parseToml, TomlError } from 'smol-toml';
import { z } from 'zod';
import { VltError } from './errors';
import type { Logger } from './ports';
import { resolveTrust, USER_CONFIG_FILE, userConfigDir, WORKSPACE_CONFIG_FILE, type TrustSource } from './trust';
import { LANGUAGES, type LanguageId } from './types';

/** File name of the workspace configuration, relative to the workspace root. */
export const CONFIG_FILE_NAME = WORKSPACE_CONFIG_FILE;

export const DEFAULT_BASE_URL = 'https://openrouter.ai/api/v1';
export const DEFAULT_EMBEDDING_MODEL = 'qwen/qwen3-embedding-8b';
export const DEFAULT_LLM_MODEL = 'openai/gpt-4o-mini';
export const DEFAULT_API_KEY_ENV = 'OPENROUTER_API_KEY';
export const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;
export const DEFAULT_CHUNK_MAX_CHARS = 1500;
export const DEFAULT_EMBEDDING_BATCH_SIZE = 64;
export const DEFAULT_EMBEDDING_CONCURRENCY = 2;
/**
 * Token budget of one shared conversation context. 16K leaves room for a question, retrieved
 * context and an answer in the smallest windows still in common use (32K) while keeping
 * every prompt that carries the history cheap.
 */
export const DEFAULT_SESSION_BUDGET_TOKENS = 16_000;

/**
 * Environment variables tried, in order, for an API key after the `VLT_*_API_KEY`
 * override and the configured `api_key_env`. OpenRouter comes first because it is the
 * default endpoint; OpenAI's variable is accepted because many users already have it set.
 */
export const API_KEY_FALLBACK_ENVS = ['OPENROUTER_API_KEY', 'OPENAI_API_KEY'] as const;

/**
 * The one service each generic key belongs to: it is sent to that host (or a subdomain) only,
 * never to another endpoint, whoever configured it.
 */
const FALLBACK_KEY_HOSTS: Readonly<Record<(typeof API_KEY_FALLBACK_ENVS)[number], string>> = {
  OPENROUTER_API_KEY: 'openrouter.ai',
  OPENAI_API_KEY: 'api.openai.com',
};

/**
 * vlt.toml keys that choose where code and API keys go: taken from the workspace's vlt.toml
 * only when the workspace is trusted (the user's config.toml and the environment always
 * apply). `embeddings.enabled` counts only when it is `true`: turning vectors off is harmless.
 */
export const TRUSTED_ONLY_KEYS = [
  'embeddings.base_url',
  'embeddings.model',
  'embeddings.api_key_env',
  'embeddings.enabled',
  'llm.base_url',
  'llm.model',
  'llm.api_key_env',
  'oracle.rerank_url',
  'oracle.rerank_model',
  'oracle.rerank_api_key_env',
] as const;

/**
 * Files `read_file_range` never returns, as gitignore-style patterns (a name without a slash
 * matches at any depth). `[security] deny` in either config file adds to these; nothing
 * removes them. SSH private keys are named by their key types (`id_rsa`, `id_ed25519`, …,
 * and their `.pub` halves), not `id_*`, which would also refuse source files such as
 * `id_map.go`.
 */
export const DEFAULT_DENY_PATTERNS: readonly string[] = ['.env*', '*.pem', '*.key', 'id_rsa*', 'id_dsa*', 'id_ecdsa*', 'id_ed25519*'];

/**
 * Globs are matched against workspace-relative paths with forward slashes, gitignore
 * style: a pattern without a slash matches a name at any depth, a leading `/` anchors it
 * at the root, and a pattern matching a directory covers everything below it.
 */
/** The `[index] generated` choices; see {@link IndexConfig.generated}. */
export const GENERATED_MODES = ['navigation', 'skip', 'index'] as const;
export type GeneratedMode = (typeof GENERATED_MODES)[number];

export interface IndexConfig {
  /** Globs of workspace-relative paths to index; empty means everything. */
  include: string[];
  /** Globs of workspace-relative paths (files or directories) never to index. */
  exclude: string[];
  /** Languages to index; defaults to every supported language. */
  languages: LanguageId[];
  /** Files larger than this are skipped without being read. */
  maxFileBytes: number;
  /**
   * What becomes of generated files ("Code generated ... DO NOT EDIT"): `navigation` stores their
   * definitions, references and imports but no chunks (found by definitions and references,
   * never by search nor as the oracle's evidence); `skip` leaves them out; `index` indexes them
   * like any other file.
   */
  generated: GeneratedMode;
  /** Upper bound on the size of one chunk of source text. */
  chunkMaxChars: number;
  /** When a long-lived writer (editor, `coderag watch`) commits its queued edits: files, lines, seconds. */
  queue: { files: number; lines: number; timeoutSeconds: number };
  /**
   * A long index run commits what it has indexed at least this often (and never spends more than
   * a fifth of its time committing), so that a run killed or cancelled resumes where it stopped.
   */
  checkpointSeconds: number;
}

export interface EmbeddingsConfig {
  /** Whether semantic (vector) search is on; off means lexical search only. */
  enabled: boolean;
  baseUrl: string;
  model: string;
  /** Requested vector size, for models that support shortening; undefined means the model's own. */
  dimensions: number | undefined;
  /** Name of the environment variable the key was configured to come from. */
  apiKeyEnv: string;
  /**
   * The resolved API key. Non-enumerable so that it never appears in logs or JSON; note
   * that an object spread (`{...config.embeddings}`) therefore drops it as well.
   */
  readonly apiKey: string | undefined;
  /** Name of the environment variable the key was actually read from, for status output. */
  apiKeySource: string | undefined;
  batchSize: number;
  concurrency: number;
  /** The most tokens one index run may send to the endpoint (`max_tokens`); undefined: no cap. */
  maxTokens: number | undefined;
  /** The most one index run may spend, at {@link pricePerMillionTokens} (`max_cost`); undefined: no cap. */
  maxCost: number | undefined;
  /** What a million embedded tokens cost at the endpoint (`price_per_million_tokens`), for estimates and `max_cost`. */
  pricePerMillionTokens: number | undefined;
}

/**
 * The most tokens an index run may embed under the caps, and the setting that sets it; undefined
 * without a cap. `max_cost` counts at the configured price.
 */
export function embeddingTokenCap(e: Pick<EmbeddingsConfig, 'maxTokens' | 'maxCost' | 'pricePerMillionTokens'>): { tokens: number; setting: string } | undefined {
  const byCost = e.maxCost !== undefined && e.pricePerMillionTokens ? Math.floor((e.maxCost / e.pricePerMillionTokens) * 1_000_000) : undefined;
  if (e.maxTokens === undefined && byCost === undefined) return undefined;
  if (byCost === undefined || (e.maxTokens !== undefined && e.maxTokens <= byCost)) return { tokens: e.maxTokens!, setting: `[embeddings] max_tokens = ${e.maxTokens}` };
  return { tokens: byCost, setting: `[embeddings] max_cost = ${e.maxCost} at price_per_million_tokens = ${e.pricePerMillionTokens}` };
}

/** The price of embedding `tokens` at the configured rate, or undefined without one. */
export function embeddingCost(e: Pick<EmbeddingsConfig, 'pricePerMillionTokens'>, tokens: number): number | undefined {
  return e.pricePerMillionTokens === undefined ? undefined : (tokens / 1_000_000) * e.pricePerMillionTokens;
}

export interface LlmConfig {
  baseUrl: string;
  model: string;
  apiKeyEnv: string;
  /** The resolved API key; non-enumerable for the same reason as {@link EmbeddingsConfig.apiKey}. */
  readonly apiKey: string | undefined;
  apiKeySource: string | undefined;
}

/**
 * Where notes live. Without a root, the vault is the workspace's own documentation (its
 * `README.md` and `docs/`, read-only) plus `.vlt/notes/` for new notes; with one, it is that
 * single folder, writable.
 */
export interface VaultConfig {
  /** Absolute path of the configured notes folder, or undefined for the default layout. */
  root: string | undefined;
  /**
   * The user did not place the vault (its root comes from an untrusted workspace's vlt.toml, or
   * it is the default layout of one): the vault refuses (ACCESS_DENIED) a root that resolves
   * outside the workspace.
   */
  confined: boolean;
}

/** How far the workspace's vlt.toml is trusted, and what was ignored because it is not. */
export interface ConfigTrust {
  trusted: boolean;
  source: TrustSource;
  /** `vlt trust` was given, but vlt.toml changed since. */
  stale: boolean;
  /** vlt.toml keys ignored because the workspace is not trusted (dotted names, as in TRUSTED_ONLY_KEYS). */
  ignored: string[];
}

export interface SecurityConfig {
  /** Gitignore-style patterns of files `read_file_range` refuses: the defaults, then additions. */
  deny: string[];
}

/** A component of the workspace's architecture, declared in `vlt.toml [[architecture.component]]`. */
export interface ComponentConfig {
  name: string;
  /** Globs of the workspace paths that make it up (picomatch, workspace-relative). */
  paths: string[];
  summary: string | undefined;
}

/** An architecture rule, `vlt.toml [[architecture.rule]]`, checked by `vlt lint`. */
export type RuleConfig =
  | { name: string; description: string | undefined; severity: 'error' | 'warn'; kind: 'deny'; from: string; to: string[] }
  | { name: string; description: string | undefined; severity: 'error' | 'warn'; kind: 'require'; component: string; coveredBy: Array<'note' | 'test'> };

/** The declared architecture: components and the rules between them (both optional). */
export interface ArchitectureConfig {
  components: ComponentConfig[];
  rules: RuleConfig[];
}

export interface SessionConfig {
  /** Token budget of a shared conversation context; older exchanges are compressed at 80 %. */
  budgetTokens: number;
}

/** The oracle's settings: a cross-encoder rerank endpoint (optional) and its per-path timeout. */
export interface OracleConfig {
  /** The `/rerank` endpoint (Cohere/Jina/vLLM/TEI shape), when one is configured. */
  rerank: { baseUrl: string; model: string; apiKeyEnv: string; readonly apiKey: string | undefined } | undefined;
  /** Time budget of each retrieval path, in ms. */
  pathTimeoutMs: number;
  /** Let the configured chat model rerank the evidence (one more model call per question). */
  llmRerank: boolean;
}

export interface VltConfig {
  /** Absolute path of the vlt.toml that was loaded, or undefined when defaults were used. */
  configPath: string | undefined;
  /** Absolute path of the user's config.toml when one was loaded. */
  userConfigPath: string | undefined;
  trust: ConfigTrust;
  index: IndexConfig;
  embeddings: EmbeddingsConfig;
  llm: LlmConfig;
  vault: VaultConfig;
  session: SessionConfig;
  oracle: OracleConfig;
  security: SecurityConfig;
  architecture: ArchitectureConfig;
}

const positiveInt = z.number().int().positive();
const httpUrl = z
  .string()
  .refine((s) => /^https?:\/\/[^/\s]+/i.test(s), { message: 'expected an http(s) URL' });
const envVarName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { message: 'expected an environment variable name' });
const glob = z.string().min(1, { message: 'expected a non-empty glob' });
// A deny pattern adds a file to refuse; a `!` pattern would re-allow one, which no file may do.
const denyPattern = glob.refine((s) => !s.trim().startsWith('!'), { message: "a deny pattern cannot start with '!': the list only adds files to refuse" });

const componentName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, { message: 'expected a component name of letters, digits, _ . -' });
const componentSchema = z.strictObject({
  name: componentName,
  path: z.union([glob, z.array(glob).min(1)]),
  summary: z.string().optional(),
});
const ruleSchema = z
  .strictObject({
    name: z.string().min(1),
    description: z.string().optional(),
    severity: z.enum(['error', 'warn']).optional(),
    deny: z.strictObject({ from: componentName, to: z.union([componentName, z.array(componentName).min(1)]) }).optional(),
    require: z.strictObject({ component: componentName, covered_by: z.union([z.enum(['note', 'test']), z.array(z.enum(['note', 'test'])).min(1)]) }).optional(),
  })
  .refine((r) => (r.deny === undefined) !== (r.require === undefined), { message: 'a rule has exactly one of deny or require' });

/** Schema of vlt.toml. Keys use snake_case as is usual in TOML. */
const tomlSchema = z.strictObject({
  index: z
    .strictObject({
      include: z.array(glob).optional(),
      exclude: z.array(glob).optional(),
      languages: z.array(z.enum(LANGUAGES)).optional(),
      max_file_bytes: positiveInt.optional(),
      generated: z.enum(GENERATED_MODES).optional(),
      chunk_max_chars: positiveInt.min(100).optional(),
      queue_files: positiveInt.optional(),
      queue_lines: positiveInt.optional(),
      queue_timeout_seconds: positiveInt.optional(),
      checkpoint_seconds: positiveInt.optional(),
    })
    .optional(),
  embeddings: z
    .strictObject({
      enabled: z.boolean().optional(),
      base_url: httpUrl.optional(),
      model: z.string().min(1).optional(),
      dimensions: positiveInt.optional(),
      api_key_env: envVarName.optional(),
      batch_size: positiveInt.max(2048).optional(),
      concurrency: positiveInt.max(64).optional(),
      max_tokens: positiveInt.optional(),
      max_cost: z.number().positive().optional(),
      price_per_million_tokens: z.number().positive().optional(),
    })
    .optional(),
  llm: z
    .strictObject({
      base_url: httpUrl.optional(),
      model: z.string().min(1).optional(),
      api_key_env: envVarName.optional(),
    })
    .optional(),
  vault: z
    .strictObject({
      // Relative to the workspace root, or absolute.
      root: z.string().min(1, { message: 'expected a non-empty folder path' }).optional(),
    })
    .optional(),
  session: z
    .strictObject({
      budget_tokens: positiveInt.min(1000).max(1_000_000).optional(),
    })
    .optional(),
  oracle: z
    .strictObject({
      rerank_url: httpUrl.optional(),
      rerank_model: z.string().min(1).optional(),
      rerank_api_key_env: envVarName.optional(),
      path_timeout_ms: positiveInt.min(100).max(120_000).optional(),
      llm_rerank: z.boolean().optional(),
    })
    .optional(),
  security: z
    .strictObject({
      deny: z.array(denyPattern).optional(),
    })
    .optional(),
  architecture: z
    .strictObject({
      component: z.array(componentSchema).optional(),
      rule: z.array(ruleSchema).optional(),
    })
    .optional(),
});

type TomlConfig = z.infer<typeof tomlSchema>;

/** Defines `apiKey` as a non-enumerable, read-only property so it stays out of logs. */
function withHiddenKey<T extends object>(target: T, apiKey: string | undefined): T & { readonly apiKey: string | undefined } {
  Object.defineProperty(target, 'apiKey', { value: apiKey, enumerable: false, writable: false, configurable: true });
  return target as T & { readonly apiKey: string | undefined };
}

/** The configuration used when there is no vlt.toml and no relevant environment. */
export function defaultConfig(): VltConfig {
  return {
    configPath: undefined,
    userConfigPath: undefined,
    trust: { trusted: false, source: 'none', stale: false, ignored: [] },
    index: {
      include: [],
      exclude: [],
      languages: [...LANGUAGES],
      maxFileBytes: DEFAULT_MAX_FILE_BYTES,
      generated: 'navigation',
      chunkMaxChars: DEFAULT_CHUNK_MAX_CHARS,
      queue: { files: 5, lines: 1000, timeoutSeconds: 300 },
      checkpointSeconds: 30,
    },
    embeddings: withHiddenKey(
      {
        // Without a key the default (remote) endpoint cannot work, so embeddings start off.
        enabled: false,
        baseUrl: DEFAULT_BASE_URL,
        model: DEFAULT_EMBEDDING_MODEL,
        dimensions: undefined,
        apiKeyEnv: DEFAULT_API_KEY_ENV,
        apiKeySource: undefined,
        batchSize: DEFAULT_EMBEDDING_BATCH_SIZE,
        concurrency: DEFAULT_EMBEDDING_CONCURRENCY,
        maxTokens: undefined,
        maxCost: undefined,
        pricePerMillionTokens: undefined,
      },
      undefined,
    ),
    llm: withHiddenKey(
      {
        baseUrl: DEFAULT_BASE_URL,
        model: DEFAULT_LLM_MODEL,
        apiKeyEnv: DEFAULT_API_KEY_ENV,
        apiKeySource: undefined,
      },
      undefined,
    ),
    vault: { root: undefined, confined: false },
    session: { budgetTokens: DEFAULT_SESSION_BUDGET_TOKENS },
    oracle: { rerank: undefined, pathTimeoutMs: DEFAULT_ORACLE_PATH_TIMEOUT_MS, llmRerank: false },
    security: { deny: [...DEFAULT_DENY_PATTERNS] },
    architecture: { components: [], rules: [] },
  };
}

/** Per-path budget of the oracle's retrieval, in ms. */
export const DEFAULT_ORACLE_PATH_TIMEOUT_MS = 4000;

export interface LoadConfigOptions {
  /**
   * The host's own trust decision for this workspace (the editor's workspace trust); when
   * undefined, `vlt trust` (the user's trusted.json) decides.
   */
  trusted?: boolean;
}

/**
 * Loads `<workspaceRoot>/vlt.toml` and the user's config.toml (when present) and applies
 * environment overrides; the trust-only keys of vlt.toml count only in a trusted workspace.
 * Throws VltError CONFIG_INVALID for a malformed file or environment value, and IO when a
 * file exists but cannot be read.
 */
export async function loadConfig(workspaceRoot: string, env: NodeJS.ProcessEnv = process.env, opts: LoadConfigOptions = {}): Promise<VltConfig> {
  const configPath = join(workspaceRoot, CONFIG_FILE_NAME);
  const raw = await readOptional(configPath, CONFIG_FILE_NAME);
  const userDir = userConfigDir(env);
  const userPath = userDir && join(userDir, USER_CONFIG_FILE);
  const userRaw = userPath ? await readOptional(userPath, userPath) : undefined;
  const parsed = raw === undefined ? {} : parseConfigText(decodeConfig(raw, CONFIG_FILE_NAME));
  const user = userRaw === undefined ? {} : parseConfigText(decodeConfig(userRaw, userPath!), userPath!);
  const trust = await resolveTrust(workspaceRoot, raw, env, opts.trusted);
  const { toml, ignored } = trust.trusted ? { toml: parsed, ignored: [] } : withoutTrustedOnlyKeys(parsed);
  const config = resolveConfig(mergeToml(user, toml), env, raw === undefined ? undefined : configPath, workspaceRoot);
  config.userConfigPath = userRaw === undefined ? undefined : userPath;
  config.trust = { ...trust, ignored };
  // A vault the user did not place (an untrusted vlt.toml's root, or the default layout of an
  // untrusted workspace) may not lead out of the workspace, through a setting or a link.
  config.vault.confined = !trust.trusted && (parsed.vault?.root !== undefined || user.vault?.root === undefined);
  config.security.deny = [...new Set([...DEFAULT_DENY_PATTERNS, ...(user.security?.deny ?? []), ...(parsed.security?.deny ?? [])])];
  applySpendingCaps(config, user, parsed);
  return config;
}

/**
 * The embedding caps: a repository's vlt.toml may lower the user's, never raise them, and never
 * make spending look cheaper than the user's price says. `max_cost` needs a price.
 */
function applySpendingCaps(config: VltConfig, user: TomlConfig, workspace: TomlConfig): void {
  const lowest = (a: number | undefined, b: number | undefined) => (a === undefined ? b : b === undefined ? a : Math.min(a, b));
  const e = config.embeddings;
  e.maxTokens = lowest(user.embeddings?.max_tokens, workspace.embeddings?.max_tokens);
  e.maxCost = lowest(user.embeddings?.max_cost, workspace.embeddings?.max_cost);
  e.pricePerMillionTokens = user.embeddings?.price_per_million_tokens ?? workspace.embeddings?.price_per_million_tokens;
  if (e.maxCost !== undefined && e.pricePerMillionTokens === undefined) {
    throw new VltError('CONFIG_INVALID', '[embeddings] max_cost needs price_per_million_tokens (what a million embedded tokens cost at the endpoint)');
  }
}

/** A file's bytes, or undefined when it does not exist (a missing workspace counts as none). */
async function readOptional(file: string, label: string): Promise<Uint8Array | undefined> {
  try {
    return await readFile(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // A missing file (or a missing workspace, which discovery reports better) means defaults.
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw new VltError('IO', `${label}: cannot read: ${code ?? String(e)}`, { path: file }, { cause: e });
  }
}

/** vlt.toml without the keys only a trusted workspace may set, and the names of those it had. */
function withoutTrustedOnlyKeys(toml: TomlConfig): { toml: TomlConfig; ignored: string[] } {
  const ignored: string[] = [];
  const out: Record<string, Record<string, unknown> | undefined> = {};
  for (const [section, body] of Object.entries(toml) as Array<[string, Record<string, unknown> | undefined]>) {
    if (!body) continue;
    const kept: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(body)) {
      const name = `${section}.${key}`;
      const trustedOnly = (TRUSTED_ONLY_KEYS as readonly string[]).includes(name) && !(name === 'embeddings.enabled' && value === false);
      if (trustedOnly) ignored.push(name);
      else kept[key] = value;
    }
    out[section] = kept;
  }
  const order = (k: string) => (TRUSTED_ONLY_KEYS as readonly string[]).indexOf(k);
  return { toml: out as TomlConfig, ignored: ignored.sort((a, b) => order(a) - order(b)) };
}

/** Section by section, `over`'s keys replace `base`'s. */
function mergeToml(base: TomlConfig, over: TomlConfig): TomlConfig {
  const out: Record<string, Record<string, unknown>> = {};
  for (const section of new Set([...Object.keys(base), ...Object.keys(over)])) {
    out[section] = { ...(base as Record<string, Record<string, unknown> | undefined>)[section], ...(over as Record<string, Record<string, unknown> | undefined>)[section] };
  }
  return out as TomlConfig;
}

function decodeConfig(raw: Uint8Array, label: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch (e) {
    throw new VltError('CONFIG_INVALID', `${label}: not valid UTF-8`, undefined, { cause: e });
  }
}

/**
 * Parses and validates vlt.toml text (or the user's config.toml: `label` names the file in
 * messages). Exported so that hosts can validate an edited file before saving it; the message
 * of a syntax error starts with `vlt.toml:LINE:COL:`.
 */
export function parseConfigText(text: string, label: string = CONFIG_FILE_NAME): TomlConfig {
  let doc: unknown;
  try {
    doc = parseToml(text);
  } catch (e) {
    if (e instanceof TomlError) {
      // smol-toml's message carries a multi-line code frame; its first line is the cause.
      const reason = (e.message.split('\n')[0] ?? e.message).replace(/^Invalid TOML document:\s*/, '');
      throw new VltError(
        'CONFIG_INVALID',
        `${label}:${e.line}:${e.column}: ${reason}`,
        { line: e.line, column: e.column },
        { cause: e },
      );
    }
    throw new VltError('CONFIG_INVALID', `${label}: ${String(e)}`, undefined, { cause: e });
  }
  const result = tomlSchema.safeParse(doc);
  if (!result.success) {
    const problems = result.error.issues.map(describeIssue);
    throw new VltError('CONFIG_INVALID', `${label}: ${problems.join('; ')}`, { problems });
  }
  return result.data;
}

/** Renders one zod issue as `key.path: message`, naming each unknown key in full. */
function describeIssue(issue: z.core.$ZodIssue): string {
  const where = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((k) => (where ? `${where}.${k}` : k));
    return `unknown key${keys.length > 1 ? 's' : ''} ${keys.map((k) => `'${k}'`).join(', ')}`;
  }
  return `${where || '(root)'}: ${issue.message}`;
}

/** Returns the value of an environment variable, treating an empty string as unset. */
function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

/**
 * Resolves an API key: the `VLT_*_API_KEY` override, the configured variable, then the generic
 * keys, each only for its own service's host (see {@link FALLBACK_KEY_HOSTS}).
 */
function resolveKey(env: NodeJS.ProcessEnv, override: string, configured: string | undefined, baseUrl: string): { key?: string; source?: string } {
  for (const name of configured === undefined ? [override] : [override, configured]) {
    const key = envValue(env, name);
    if (key !== undefined) return { key, source: name };
  }
  const host = hostOf(baseUrl);
  for (const name of API_KEY_FALLBACK_ENVS) {
    const own = FALLBACK_KEY_HOSTS[name];
    if (host !== own && !host.endsWith(`.${own}`)) continue;
    const key = envValue(env, name);
    if (key !== undefined) return { key, source: name };
  }
  return {};
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return '';
  }
}

function envUrl(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = envValue(env, name);
  if (v !== undefined && !httpUrl.safeParse(v).success) {
    throw new VltError('CONFIG_INVALID', `environment ${name}: expected an http(s) URL`);
  }
  return v;
}

/** Parses the `VLT_EMBEDDINGS` switch: undefined when unset, else forced on or off. */
function envSwitch(env: NodeJS.ProcessEnv, name: string): boolean | undefined {
  const v = envValue(env, name)?.toLowerCase();
  if (v === undefined) return undefined;
  if (['off', '0', 'false', 'no', 'disabled'].includes(v)) return false;
  if (['on', '1', 'true', 'yes', 'enabled'].includes(v)) return true;
  throw new VltError('CONFIG_INVALID', `environment ${name}: expected 'on' or 'off', got '${v}'`);
}

function resolveConfig(toml: TomlConfig, env: NodeJS.ProcessEnv, configPath: string | undefined, workspaceRoot: string): VltConfig {
  const d = defaultConfig();
  const ti = toml.index ?? {};
  const te = toml.embeddings ?? {};
  const tl = toml.llm ?? {};
  const tv = toml.vault ?? {};
  const ts = toml.session ?? {};

  let dimensions = te.dimensions;
  const envDims = envValue(env, 'VLT_EMBEDDINGS_DIMENSIONS');
  if (envDims !== undefined) {
    const n = Number(envDims);
    if (!Number.isInteger(n) || n <= 0) {
      throw new VltError('CONFIG_INVALID', `environment VLT_EMBEDDINGS_DIMENSIONS: expected a positive integer, got '${envDims}'`);
    }
    dimensions = n;
  }

  const embBaseUrl = envUrl(env, 'VLT_EMBEDDINGS_BASE_URL') ?? te.base_url ?? d.embeddings.baseUrl;
  const embKeyEnv = te.api_key_env ?? d.embeddings.apiKeyEnv;
  const embKey = resolveKey(env, 'VLT_EMBEDDINGS_API_KEY', te.api_key_env, embBaseUrl);
  // Precedence for the switch: the environment, then vlt.toml, then "on when a key exists".
  // An explicit `enabled = true` without a key is allowed, for local keyless endpoints.
  const enabled = envSwitch(env, 'VLT_EMBEDDINGS') ?? te.enabled ?? embKey.key !== undefined;

  const llmBaseUrl = envUrl(env, 'VLT_LLM_BASE_URL') ?? tl.base_url ?? d.llm.baseUrl;
  const llmKeyEnv = tl.api_key_env ?? d.llm.apiKeyEnv;
  const llmKey = resolveKey(env, 'VLT_LLM_API_KEY', tl.api_key_env, llmBaseUrl);

  const to = toml.oracle ?? {};
  const rerankUrl = envUrl(env, 'VLT_RERANK_BASE_URL') ?? to.rerank_url;
  const rerankKeyEnv = to.rerank_api_key_env ?? 'VLT_RERANK_API_KEY';
  // A rerank endpoint is opt-in: unlike the model keys, a generic OPENAI/OPENROUTER key is not
  // taken as a reason to call one.
  const rerankKey = envValue(env, 'VLT_RERANK_API_KEY') ?? envValue(env, rerankKeyEnv);
  const rerank = rerankUrl
    ? withHiddenKey({ baseUrl: rerankUrl, model: envValue(env, 'VLT_RERANK_MODEL') ?? to.rerank_model ?? 'rerank', apiKeyEnv: rerankKeyEnv }, rerankKey)
    : undefined;

  return {
    configPath,
    userConfigPath: undefined,
    trust: { ...d.trust },
    index: {
      include: ti.include ?? d.index.include,
      exclude: ti.exclude ?? d.index.exclude,
      // Duplicates are harmless but would show up oddly in status output.
      languages: ti.languages ? [...new Set(ti.languages)] : d.index.languages,
      maxFileBytes: ti.max_file_bytes ?? d.index.maxFileBytes,
      generated: ti.generated ?? d.index.generated,
      chunkMaxChars: ti.chunk_max_chars ?? d.index.chunkMaxChars,
      queue: {
        files: ti.queue_files ?? d.index.queue.files,
        lines: ti.queue_lines ?? d.index.queue.lines,
        timeoutSeconds: ti.queue_timeout_seconds ?? d.index.queue.timeoutSeconds,
      },
      checkpointSeconds: ti.checkpoint_seconds ?? d.index.checkpointSeconds,
    },
    embeddings: withHiddenKey(
      {
        enabled,
        baseUrl: embBaseUrl,
        model: envValue(env, 'VLT_EMBEDDINGS_MODEL') ?? te.model ?? d.embeddings.model,
        dimensions,
        apiKeyEnv: embKeyEnv,
        apiKeySource: embKey.source,
        batchSize: te.batch_size ?? d.embeddings.batchSize,
        concurrency: te.concurrency ?? d.embeddings.concurrency,
        maxTokens: te.max_tokens,
        maxCost: te.max_cost,
        pricePerMillionTokens: te.price_per_million_tokens,
      },
      embKey.key,
    ),
    llm: withHiddenKey(
      {
        baseUrl: llmBaseUrl,
        model: envValue(env, 'VLT_LLM_MODEL') ?? tl.model ?? d.llm.model,
        apiKeyEnv: llmKeyEnv,
        apiKeySource: llmKey.source,
      },
      llmKey.key,
    ),
    vault: { root: tv.root === undefined ? d.vault.root : resolve(workspaceRoot, tv.root), confined: false },
    session: { budgetTokens: ts.budget_tokens ?? d.session.budgetTokens },
    oracle: { rerank, pathTimeoutMs: to.path_timeout_ms ?? d.oracle.pathTimeoutMs, llmRerank: to.llm_rerank ?? d.oracle.llmRerank },
    // loadConfig adds both files' patterns: a merge would let one file's list replace the other's.
    security: { deny: [...d.security.deny] },
    architecture: architectureOf(toml.architecture),
  };
}

/**
 * The one warning a host gives (once, on stderr or in its log) when vlt.toml set keys that were
 * ignored because the workspace is not trusted; undefined when there is nothing to say.
 */
export function trustWarning(config: VltConfig, root: string): string | undefined {
  const { ignored, stale } = config.trust;
  if (ignored.length === 0) return undefined;
  const keys = ignored.join(', ');
  if (stale) {
    return `${CONFIG_FILE_NAME} changed since \`vlt trust\`: its settings ${keys} are ignored until you review it and run \`vlt trust\` again (in ${root})`;
  }
  return `${CONFIG_FILE_NAME} sets ${keys}, which choose where code and API keys are sent; they are ignored because this workspace is not trusted. If you trust this repository, run \`vlt trust\` in ${root}`;
}

/** Warnings already given by this process, so that each is said once whatever opens the config again. */
const warned = new Set<string>();

/** Logs {@link trustWarning} once per process and workspace. */
export function warnIgnoredKeysOnce(config: VltConfig, root: string, logger: Logger): void {
  const warning = trustWarning(config, root);
  if (warning === undefined || warned.has(`${root}\0${warning}`)) return;
  warned.add(`${root}\0${warning}`);
  logger.warn(warning);
}

/**
 * A plain, log-safe copy of a config for status output: keys are replaced by whether
 * one is present and where it came from.
 */
export function describeConfig(config: VltConfig): Record<string, unknown> {
  return {
    configPath: config.configPath,
    userConfigPath: config.userConfigPath,
    trust: { ...config.trust },
    index: { ...config.index },
    embeddings: { ...config.embeddings, apiKey: config.embeddings.apiKey ? '(set)' : '(missing)' },
    llm: { ...config.llm, apiKey: config.llm.apiKey ? '(set)' : '(missing)' },
    vault: { ...config.vault },
    session: { ...config.session },
    oracle: { ...config.oracle, rerank: config.oracle.rerank ? { ...config.oracle.rerank, apiKey: config.oracle.rerank.apiKey ? '(set)' : '(missing)' } : null },
    security: { deny: [...config.security.deny] },
  };
}

/** The declared architecture in its resolved form; a rule naming an undeclared component is an error. */
function architectureOf(ta: TomlConfig['architecture']): ArchitectureConfig {
  const list = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
  const components: ComponentConfig[] = (ta?.component ?? []).map((c) => ({ name: c.name, paths: list(c.path), summary: c.summary }));
  const names = new Set<string>();
  for (const c of components) {
    if (names.has(c.name)) throw new VltError('CONFIG_INVALID', `vlt.toml: architecture.component: '${c.name}' is declared twice`);
    names.add(c.name);
  }
  const known = (name: string, rule: string): string => {
    if (!names.has(name)) throw new VltError('CONFIG_INVALID', `vlt.toml: architecture.rule '${rule}' names the component '${name}', which no [[architecture.component]] declares`);
    return name;
  };
  const rules: RuleConfig[] = (ta?.rule ?? []).map((r) => {
    const base = { name: r.name, description: r.description, severity: r.severity ?? ('error' as const) };
    if (r.deny) return { ...base, kind: 'deny' as const, from: known(r.deny.from, r.name), to: list(r.deny.to).map((t) => known(t, r.name)) };
    const req = r.require!;
    return { ...base, kind: 'require' as const, component: known(req.component, r.name), coveredBy: [...new Set(list(req.covered_by))] };
  });
  return { components, rules };
}
