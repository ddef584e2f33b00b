/**
 * The agent tools, each defined once: a name, a title, a description written for a model, a
 * zod input schema with a description on every field, behaviour annotations, and a handler
 * over the engine. Hosts adapt these definitions (the MCP server in `src/mcp/server.ts`, VS
 * Code's language-model tools later) and never redefine a tool, so every host offers the same
 * contract.
 */
import { z } from 'zod';
import type { Engine, SearchHit, StatusReport } from '../engine';
import { VltError, toVltError } from '../errors';
import type { LanguageServers } from '../intel/lsp';
import type { ChatModel } from '../llm/chat';
import type { PromptLibrary } from '../llm/prompts';
import type { TagsProvider } from '../intel/navigate';
import type { OracleEvent } from '../oracle/types';
import type { LocateHistory } from '../locate/locate';
import type { Oracle } from '../oracle/oracle';
import type { Logger, WorkspaceFs } from '../ports';
import type { Memory } from '../memory';
import { LANGUAGES } from '../types';
import { checkPathGlob } from '../search/hybrid';
import { CHUNK_KINDS } from '../search/rank';
import { SNIPPET_LINES } from '../search/snippet';
import { charsForTokens, tokensForChars } from '../tokens';
import { MAX_ANSWER_TOKENS, decodeCursor, encodeCursor, requestFingerprint } from './budget';
import { FreshnessChecker } from './freshness';
import { indexStatusOutput, searchCodeOutput } from './outputs';
import type { GitActivity } from '../context/activity';

/** What a handler may use. The host builds one and passes it to every call. */
export interface ToolContext {
  /**
   * The engine of the workspace, opened on first use (building the index first when there
   * is none) and shared by later calls. A failed open is retried on the next call.
   */
  getEngine(): Promise<Engine>;
  /**
   * The workspace's memory (notes vault, threads), opened on first use and shared by later
   * calls. Absent, the memory tools answer USAGE (and hosts without memory do not list them).
   */
  getMemory?: () => Promise<Memory>;
  /**
   * The index when the workspace has one, never built for the asking: the memory tools use it to
   * say which code a thread entry or note names has changed since. Absent or undefined, they
   * answer without that.
   */
  peekEngine?: () => Promise<Engine | undefined>;
  /** File access for reading files live (the freshness check). */
  fs: WorkspaceFs;
  logger: Logger;
  /** Set per call by the host when the client can cancel the call. */
  signal?: AbortSignal;
  /**
   * What the host can reach for navigation: language servers and Universal Ctags. Absent,
   * find_definition/find_references use the index alone and say so.
   */
  intel?: (engine: Engine) => { lsp?: LanguageServers; tags?: TagsProvider };
  /**
   * The host's oracle over `engine`, with its memory, language model and git history. Absent,
   * ask_oracle answers with an extractive oracle over the index alone.
   */
  getOracle?: (engine: Engine) => Promise<Oracle>;
  /**
   * The repository's past changes for the locate mode's history channel (the host reads git).
   * Absent, or answering undefined, locate_files ranks without them.
   */
  locateHistory?: (engine: Engine, signal?: AbortSignal) => Promise<LocateHistory | undefined>;
  /**
   * The repository's git activity for the Context Oracle (the host reads git). Absent, or
   * answering undefined, bundles say that activity and stale docs are unknown.
   */
  gitActivity?: (engine: Engine, signal?: AbortSignal) => Promise<GitActivity | undefined>;
  /** Who is calling (an agent id from the MCP client info, or `user`); set per call by the host. */
  author?: string;
  /** The shared conversation context the host records calls in; ask_oracle reads it for follow-ups. */
  session?: string;
  /** Resolves once every earlier call is recorded in `session` (hosts that record asynchronously). */
  sessionSettled?: () => Promise<void>;
  /**
   * Progress of a long call, set per call by a host that streams it (the chat): ask_oracle
   * reports its retrieval steps and the answer's text as it is written.
   */
  onEvent?: (e: OracleEvent) => void;
  /** The model ask_oracle answers with instead of the configured one, set per call (the chat's picker). */
  chat?: ChatModel;
  /**
   * The configured language model and the prompt templates, for the tools that need a model
   * whatever the question (delegate_librarian). Absent or undefined: none is configured, or the
   * workspace is untrusted.
   */
  getModel?: () => Promise<{ chat: ChatModel; prompts: PromptLibrary } | undefined>;
}

/**
 * Hints about a tool's behaviour, as MCP defines them: clients use them to decide whether a
 * call needs the user's confirmation. They are hints, not guarantees.
 */
export interface ToolAnnotations {
  /** The tool does not change its environment. */
  readOnlyHint: boolean;
  /** When not read-only: the tool may destroy or overwrite data. */
  destructiveHint: boolean;
  /** Repeating a call with the same arguments has no further effect. */
  idempotentHint: boolean;
  /** The tool reaches outside the workspace (the web, other services). */
  openWorldHint: boolean;
}

/** A tool's input schema: always an object of named arguments. */
export type ToolInputSchema = z.ZodObject<z.ZodRawShape>;

/** A tool's output schema (MCP's `outputSchema`): an object, open to fields it does not name (outputs.ts). */
export type ToolOutputSchema = z.ZodObject<z.ZodRawShape>;

/**
 * What an open output schema promises of a result: the fields it names, at every depth (its
 * index signatures dropped, so that a result typed by an interface is checked field by field).
 */
export type Promised<T> = T extends readonly (infer E)[] ? Array<Promised<E>> : T extends object ? { [K in keyof T as string extends K ? never : K]: Promised<T[K]> } : T;

export interface ToolDefinition<N extends string = string, I extends ToolInputSchema = ToolInputSchema, O extends object = object> {
  /** snake_case, stable: agents and users refer to tools by name. */
  name: N;
  title: string;
  /** Written for the model: when to use the tool, what it returns, how to page. */
  description: string;
  inputSchema: I;
  /** What an answer holds; the handler's result is checked against it when the tool compiles ({@link defineTool}). */
  outputSchema: ToolOutputSchema;
  annotations: ToolAnnotations;
  // A method (not a function property) so that a definition with a narrower input type is
  // still assignable to ToolDefinition, the type of the tool list.
  handler(ctx: ToolContext, input: z.output<I>): Promise<O>;
}

/**
 * Defines a tool: its name stays a literal type (the registry's `ToolName`), and its handler's
 * result must hold every field its output schema names, with the schema's types, or the
 * definition does not compile.
 */
export function defineTool<N extends string, I extends ToolInputSchema, S extends ToolOutputSchema, O extends Promised<z.output<S>> & object>(def: Omit<ToolDefinition<N, I, O>, 'outputSchema'> & { outputSchema: S }): ToolDefinition<N, I, O> {
  return def;
}

export type ToolOutcome<O> = { ok: true; value: O } | { ok: false; error: VltError };

/**
 * Runs one tool call from raw, untrusted arguments: validates them against the tool's schema,
 * runs the handler, and turns every failure into a VltError (never a throw), so that a host
 * can always answer with either a result or an error the model can read and act on.
 */
export async function invokeTool<O extends object>(def: ToolDefinition<string, ToolInputSchema, O>, ctx: ToolContext, rawInput: unknown): Promise<ToolOutcome<O>> {
  const parsed = def.inputSchema.safeParse(rawInput ?? {});
  if (!parsed.success) {
    return { ok: false, error: new VltError('USAGE', `invalid arguments for ${def.name}: ${formatIssues(parsed.error.issues)}`) };
  }
  try {
    if (ctx.signal?.aborted) throw new VltError('CANCELLED', 'the call was cancelled');
    return { ok: true, value: await def.handler(ctx, parsed.data) };
  } catch (e) {
    const err = ctx.signal?.aborted && !(e instanceof VltError) ? new VltError('CANCELLED', 'the call was cancelled', undefined, { cause: e }) : toVltError(e);
    if (err.code === 'INTERNAL') ctx.logger.error(`${def.name} failed: ${err.message}`, err.stack ?? '');
    return { ok: false, error: err };
  }
}

/**
 * One clause per issue, `field: message`, capped in length: messages never echo the input
 * (zod's default messages do not, and unknown keys are cut short below), so a huge or hostile
 * argument cannot make the error itself huge.
 */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string {
  const text = issues
    .slice(0, 8)
    .map((i) => `${i.path.length ? i.path.map(String).join('.') : '(arguments)'}: ${i.message}`)
    .join('; ');
  return text.length > 1000 ? `${text.slice(0, 1000)}…` : text;
}

/** Names of unknown arguments, shortened, for an error message that stays small. */
function unknownKeysMessage(keys: readonly string[]): string {
  const shown = keys.slice(0, 5).map((k) => JSON.stringify(k.length > 40 ? `${k.slice(0, 40)}…` : k));
  return `unknown argument${keys.length > 1 ? 's' : ''} ${shown.join(', ')}${keys.length > 5 ? ` and ${keys.length - 5} more` : ''}; only the arguments listed in the tool's input schema are accepted`;
}

/**
 * An object schema that rejects unknown arguments: a misspelt argument (`lang` for
 * `language`) silently ignored would return unfiltered results the model takes as filtered.
 */
export function strictArgs<S extends z.ZodRawShape>(shape: S) {
  return z.strictObject(shape, {
    error: (iss) => (iss.code === 'unrecognized_keys' ? unknownKeysMessage(iss.keys) : undefined),
  });
}

/**
 * The `max_tokens` argument of a paged tool: at least 100, at most MAX_ANSWER_TOKENS, `what`
 * saying what moves to the next page when the answer is full.
 */
export function maxTokensArg(what: string, fallback = 4000) {
  return z
    .number()
    .int()
    .min(100)
    .max(MAX_ANSWER_TOKENS)
    .default(fallback)
    .describe(`Upper bound on the size of this answer, in tokens (estimated as characters / 4).${what ? ` ${what}` : ''}`);
}

// ---------------------------------------------------------------------------------------
// search_code
// ---------------------------------------------------------------------------------------

/** The most hits one search ranks, across its pages. */
export const MAX_SEARCH_LIMIT = 1000;

/** A signature line longer than this is cut: it is a preview, not the code. */
const FIRST_LINE_CHARS = 240;

const searchCodeInput = strictArgs({
  query: z
    .string()
    .min(1)
    .max(20_000)
    .describe(
      'What to look for: an identifier (parseConfig, Writer.Close), a few words (retry with backoff), a path fragment (store/atomic.ts), or a pasted error message or stack trace.',
    ),
  limit: z.number().int().min(1).max(MAX_SEARCH_LIMIT).default(10).describe(`How many ranked hits the search returns in all, across pages (1-${MAX_SEARCH_LIMIT}).`),
  language: z.enum(LANGUAGES).optional().describe('Only hits in files of this language.'),
  path: z
    .string()
    .min(1)
    .max(1000)
    .optional()
    .describe('Only hits whose workspace-relative path matches this glob, e.g. "src/**" or "**/*_test.go". A pattern without a slash matches file names at any depth.'),
  kind: z
    .array(z.enum(CHUNK_KINDS))
    .min(1)
    .max(CHUNK_KINDS.length)
    .optional()
    .describe('Only hits of these kinds: function, method, class (classes and structs), type (type aliases, interfaces, enums, traits), test (test files), doc (documentation). Omit for all.'),
  signatures_only: z
    .boolean()
    .default(false)
    .describe(
      "Return only path, line range, symbol, kind and the first line of each hit's snippet (snippet_line is its line), without snippets: a cheap way to scan many hits before reading a few.",
    ),
  max_tokens: maxTokensArg('Hits that do not fit move to the next page.'),
  cursor: z
    .string()
    .max(200)
    .optional()
    .describe('The next_cursor of a previous answer, to get the next page; pass it with exactly the same query, limit, language, path and kind.'),
}).meta({ examples: [{"query": "gzip writer close", "limit": 5, "language": "go", "path": "compress/**"}] });

export interface SearchCodeHit extends SearchHit {
  /** The file changed or vanished since it was indexed; the snippet was read live (or is empty). */
  stale_index?: true;
  /** Why a hit is stale, or that its snippet was shortened. */
  note?: string;
  /** The snippet was cut to fit the token budget. */
  snippet_truncated?: true;
}

export interface SearchCodeSignature {
  path: string;
  start_line: number;
  end_line: number;
  symbol: string | null;
  kind: string;
  /** The first line of the hit's snippet, and its line number. */
  first_line: string;
  snippet_line: number;
  stale_index?: true;
  note?: string;
}

export interface SearchCodeResult {
  hits: Array<SearchCodeHit | SearchCodeSignature>;
  /** Present when more hits remain: pass it back as `cursor` for the next page. */
  next_cursor?: string;
  /** True when the budget cut this answer: hits moved to the next page, or a snippet was shortened. */
  truncated: boolean;
  /** What to know about the hits, e.g. that nothing in the workspace is named an identifier of the query. */
  notes?: string[];
}

type SearchCodeInput = z.output<typeof searchCodeInput>;

export const searchCodeTool = defineTool({
  name: 'search_code',
  title: 'Search code',
  description: [
    "Search this workspace's source code. Hybrid retrieval: BM25 full text, symbol definitions by name, file paths (and embeddings when configured), fused by rank.",
    'Use it to find where something is defined, implemented or used before opening files. Good queries: an identifier, a few descriptive words, a path fragment, or a pasted error or stack trace.',
    'Each hit gives the file path, the 1-based inclusive line range of the enclosing chunk (function, class, section), the matched symbol and its kind, a relevance score, and a snippet of up to 12 lines of the chunk from the matched definition (else from the lines with the most query words), whose first line is snippet_line.',
    'Hits are checked against the files on disk: a hit whose file changed since indexing has stale_index: true and a snippet re-read live; a vanished file has an empty snippet and a note.',
    'The answer stays within max_tokens. When more hits remain, next_cursor is set: call again with the same query, limit, language and path plus cursor to get the next page.',
    'Set signatures_only to scan many hits cheaply, then read the files you need.',
    'Generated files ("Code generated ... DO NOT EDIT") are not searched by default; find_definition and find_references do reach them.',
  ].join(' '),
  inputSchema: searchCodeInput,
  // Read-only from the workspace's point of view: the first call may build the index, which
  // only writes the tool's own cache folder (.vlt/), never the user's files.
  outputSchema: searchCodeOutput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: searchCode,
});

async function searchCode(ctx: ToolContext, input: SearchCodeInput): Promise<SearchCodeResult> {
  if (!input.query.trim()) throw new VltError('USAGE', 'query is blank; pass an identifier, some words, a path or an error message');
  if (input.path !== undefined) checkPathGlob(input.path);
  const fingerprint = requestFingerprint([input.query, input.limit, input.language ?? null, input.path ?? null, input.kind ?? null]);
  const offset = input.cursor !== undefined ? decodeCursor(input.cursor, fingerprint, input.limit) : 0;

  const engine = await ctx.getEngine();
  const res = await engine.search(input.query, {
    k: input.limit,
    ...(input.language ? { language: input.language } : {}),
    ...(input.path ? { pathGlob: input.path } : {}),
    ...(input.kind ? { kinds: input.kind } : {}),
    ...(ctx.signal ? { signal: ctx.signal } : {}),
    withSnippetLine: true,
  });
  const ranked = res.hits.slice(0, input.limit);
  const fresh = new FreshnessChecker(engine.root, ctx.fs, engine.config.index.maxFileBytes);
  const budget = charsForTokens(Math.min(input.max_tokens, MAX_ANSWER_TOKENS));

  // The envelope is sized with the longest cursor this request can produce (its length does
  // not depend on the offset's value beyond a few digits), so that adding the cursor at the
  // end never pushes a full page over the budget.
  const notes = res.notes.length ? { notes: res.notes } : {};
  const envelope = JSON.stringify({ hits: [], next_cursor: encodeCursor(input.limit, fingerprint), truncated: false, ...notes }).length;
  const hits: SearchCodeResult['hits'] = [];
  let used = envelope;
  let cut = false;
  let next = offset;
  // Start the freshness reads of the page's likely hits together: one at a time, their file
  // reads and hashes add up to most of a tool call's overhead.
  for (const h of ranked.slice(offset, offset + 10)) void fresh.state(h.path, h.content_hash).catch(() => undefined);
  for (; next < ranked.length; next++) {
    const hit = ranked[next]!;
    const live = await fresh.snippet(hit.path, hit.content_hash, hit.snippet_line ?? hit.start_line, hit.end_line, hit.snippet, SNIPPET_LINES);
    const out: SearchCodeHit | SearchCodeSignature = input.signatures_only ? signatureOf(hit, live.snippet) : { ...hit, snippet: live.snippet };
    if (live.stale) {
      out.stale_index = true;
      if (live.note) out.note = live.note;
    }
    const size = JSON.stringify(out).length + (hits.length ? 1 : 0);
    if (used + size <= budget) {
      hits.push(out);
      used += size;
      continue;
    }
    // The first hit of a page must go out, or the page would repeat forever: its snippet (or
    // signature line) is shortened to what fits. Later hits wait for the next page whole.
    if (hits.length === 0) {
      const shortened = shrinkToFit(out, budget - used);
      if (!shortened) {
        const need = tokensForChars(used + JSON.stringify(shrunkBase(out)).length);
        throw new VltError('USAGE', `max_tokens ${input.max_tokens} is too small for the next hit, which needs about ${need} tokens even without its snippet; call again with a larger max_tokens`);
      }
      hits.push(shortened);
      cut = true;
      next++;
    }
    break;
  }
  const result: SearchCodeResult = { hits, truncated: cut || next < ranked.length, ...notes };
  if (next < ranked.length) result.next_cursor = encodeCursor(next, fingerprint);
  return result;
}

const SHORTENED_NOTE = 'shortened to fit max_tokens; read the file for the whole range';

/** A hit with its snippet (or signature line) emptied and marked as shortened: the least a hit can be. */
function shrunkBase<H extends SearchCodeHit | SearchCodeSignature>(hit: H): H {
  const note = hit.note ? `${hit.note}; ${SHORTENED_NOTE}` : SHORTENED_NOTE;
  return 'first_line' in hit ? { ...hit, first_line: '', note } : { ...hit, snippet: '', snippet_truncated: true, note };
}

/**
 * The hit with as much of its snippet as fits in `room` characters of JSON (whole lines; for a
 * signature, a prefix of its line), or undefined when not even an empty one fits.
 */
function shrinkToFit<H extends SearchCodeHit | SearchCodeSignature>(hit: H, room: number): H | undefined {
  const base = shrunkBase(hit);
  const baseSize = JSON.stringify(base).length;
  if (baseSize > room) return undefined;
  if ('first_line' in hit) {
    // Code points, not code units: a cut must not split a surrogate pair.
    const chars = [...hit.first_line];
    let lo = 0;
    let hi = chars.length;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (baseSize + JSON.stringify(`${chars.slice(0, mid).join('')}…`).length - 2 <= room) lo = mid;
      else hi = mid - 1;
    }
    return lo > 0 ? { ...base, first_line: `${chars.slice(0, lo).join('')}…` } : base;
  }
  const lines = (hit as SearchCodeHit).snippet.split('\n');
  let kept = 0;
  let size = baseSize;
  for (const line of lines) {
    // Each line costs its JSON-escaped length, plus the escaped newline before it.
    const cost = JSON.stringify(line).length - 2 + (kept ? 2 : 0);
    if (size + cost > room) break;
    size += cost;
    kept++;
  }
  return { ...base, snippet: lines.slice(0, kept).join('\n') };
}

function signatureOf(hit: SearchHit, snippet: string): SearchCodeSignature {
  const first = (snippet.split('\n', 1)[0] ?? '').trim();
  return {
    path: hit.path,
    start_line: hit.start_line,
    end_line: hit.end_line,
    symbol: hit.symbol,
    kind: hit.kind,
    first_line: first.length > FIRST_LINE_CHARS ? `${first.slice(0, FIRST_LINE_CHARS)}…` : first,
    snippet_line: hit.snippet_line ?? hit.start_line,
  };
}

// ---------------------------------------------------------------------------------------
// index_status
// ---------------------------------------------------------------------------------------

const indexStatusInput = strictArgs({}).meta({ examples: [{}] });

/** Skipped folders listed by index_status; the rest are counted. A large tree can skip thousands. */
const STATUS_SKIPPED_DIRS = 50;

export type IndexStatusResult = StatusReport & {
  /** How many folders were skipped in all, when `skipped_dirs` lists only the first ones. */
  skipped_dirs_total?: number;
};

export const indexStatusTool = defineTool({
  name: 'index_status',
  title: 'Index status',
  description: [
    'Report what the code index of this workspace holds: how many files, chunks, symbols and references, per language; whether vector search is on;',
    'which files and folders were skipped and why; how many generated files are indexed for navigation only (find_definition and find_references see them, search_code does not); and when the index was last updated.',
    'Use it when search results look incomplete, or to check whether a file or language is indexed.',
  ].join(' '),
  inputSchema: indexStatusInput,
  outputSchema: indexStatusOutput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler(ctx): Promise<IndexStatusResult> {
    const engine = await ctx.getEngine();
    const status: IndexStatusResult = engine.status();
    // Everything else in the report has a bounded size; the list of skipped folders does not,
    // and the answer must stay within MAX_ANSWER_TOKENS whatever the tree looks like.
    if (status.skipped_dirs.length > STATUS_SKIPPED_DIRS) {
      status.skipped_dirs_total = status.skipped_dirs.length;
      status.skipped_dirs = status.skipped_dirs.slice(0, STATUS_SKIPPED_DIRS);
    }
    if (JSON.stringify(status).length > charsForTokens(MAX_ANSWER_TOKENS)) {
      status.skipped_dirs_total ??= status.skipped_dirs.length;
      status.skipped_dirs = [];
    }
    return status;
  },
});

/** Every tool, in the order hosts list them. */
export const TOOLS: readonly ToolDefinition[] = [searchCodeTool, indexStatusTool];
