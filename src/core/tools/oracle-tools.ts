/**
 * `ask_oracle` (one question, one short cited answer) and `read_file_range` (a confined read of
 * workspace lines, which the oracle's agent mode also uses), plus the adapter that offers the
 * tool definitions to the oracle's agent loop. Defined once here like every tool; the hosts
 * adapt them.
 */
import { z } from 'zod';
import { readableFile } from '../access';
import { VltError } from '../errors';
import { Oracle, SOURCE_FAMILIES, type SourceFamily } from '../oracle/oracle';
import type { OracleAnswer } from '../oracle/types';
import { defineTool, maxTokensArg, strictArgs, type ToolContext } from './definitions';
import { askOracleOutput, readFileRangeOutput } from './outputs';
import { charsForTokens } from '../tokens';
import { MAX_ANSWER_TOKENS, decodeCursor, encodeCursor, requestFingerprint } from './budget';

// ---------------------------------------------------------------------------------------
// ask_oracle
// ---------------------------------------------------------------------------------------

const askOracleInput = strictArgs({
  question: z
    .string()
    .min(1)
    .max(20_000)
    .describe('The question about this codebase, in plain words ("How does authentication work?", "Where is UserService used?", "Why did the retry logic change?"), or a pasted bug report or stack trace.'),
  sources: z
    .array(z.enum(SOURCE_FAMILIES as [SourceFamily, ...SourceFamily[]]))
    .min(1)
    .max(4)
    .optional()
    .describe('Which sources to consult: code, notes, threads, git. Default: all of them.'),
  explain: z.boolean().default(false).describe('Also return how the answer was found: each retrieval path with its results and timing, the fusion and rerank scores, and the context with token counts.'),
  no_llm: z.boolean().default(false).describe('Answer with the extractive evidence brief even when a language model is configured: faster, and exactly the evidence.'),
  agent: z.boolean().default(false).describe('Let the language model call the search and navigation tools in a loop before it answers (slower; for questions the first retrieval does not settle). Ignored without a tool-calling model.'),
  max_tokens: z.number().int().min(500).max(MAX_ANSWER_TOKENS).default(6000).describe('Upper bound on the size of this answer, in tokens (estimated as characters / 4). When the answer does not fit, explain and details are left out first, then the answer text continues on the next page (next_cursor).'),
  cursor: z.string().max(100).optional().describe('The next_cursor of a previous answer to this same question, for the rest of its text. Answers are held for the last 32 questions this server answered.'),
}).meta({ examples: [{"question": "How does the session refresh work?", "sources": ["code", "notes"]}] });

export interface AskOracleResult extends Omit<OracleAnswer, 'explain'> {
  explain?: OracleAnswer['explain'];
  truncated: boolean;
  /** Present when the answer text goes on: pass it back as `cursor`, with the same question. */
  next_cursor?: string;
}

/**
 * Answers cut to fit max_tokens, held for their next pages: the answer is not made again (a
 * model would word it differently), so a page continues exactly where the last one stopped.
 * Per process, the last {@link HELD_ANSWERS} only; a cursor past that is a clear usage error.
 */
const held = new Map<string, { question: string; answer: AskOracleResult }>();
const HELD_ANSWERS = 32;
const ORACLE_CURSOR = /^a1-([0-9a-f]{12})-(\d{1,9})$/;

export const askOracleTool = defineTool({
  name: 'ask_oracle',
  title: 'Ask the oracle',
  description: [
    'Answer a question about this codebase in one call, instead of many searches and file reads: retrieval over code (BM25, symbols, navigation, embeddings when configured), tests, notes, threads and git history, fused, reranked and cut to a token budget.',
    'Returns a short markdown answer in which every claim cites its source as [path:line], [note:path], [thread:id#n] or [commit:hash]; `files` lists the cited files in order. Without a language model (or with no_llm) the answer is an extractive evidence brief: ranked snippets with citations and a repository-map slice.',
    'When nothing relevant exists, noContext is true and the answer says why: what was searched, or, with a model, that nothing in the evidence answers; treat it as "not in this project", not as an error.',
    'Follow-up questions may refer to earlier calls in this conversation ("what calls it?").',
  ].join(' '),
  inputSchema: askOracleInput,
  outputSchema: askOracleOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async handler(ctx, input): Promise<AskOracleResult> {
    const maxChars = charsForTokens(input.max_tokens);
    if (input.cursor !== undefined) return nextAnswerPage(input.question, input.cursor, maxChars);
    const engine = await ctx.getEngine();
    const oracle = ctx.getOracle ? await ctx.getOracle(engine) : new Oracle({ engine, logger: ctx.logger, fs: ctx.fs });
    await ctx.sessionSettled?.();
    const ans = await oracle.ask(input.question, {
      ...(input.sources ? { sources: input.sources } : {}),
      explain: input.explain,
      noLlm: input.no_llm,
      agent: input.agent,
      ...(ctx.onEvent ? { onEvent: ctx.onEvent } : {}),
      ...(ctx.chat ? { chat: ctx.chat } : {}),
      ...(ctx.session !== undefined ? { session: ctx.session, recordSession: false } : {}),
      ...(ctx.author ? { author: ctx.author } : {}),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    return fitAnswer(input.question, ans, maxChars);
  },
});

/**
 * Keeps the answer within the budget: the explanation goes first, then the details, then the
 * answer text is paged (held for {@link nextAnswerPage}).
 */
function fitAnswer(question: string, ans: OracleAnswer, maxChars: number): AskOracleResult {
  let out: AskOracleResult = { ...ans, truncated: false };
  if (JSON.stringify(out).length <= maxChars) return out;
  if (out.explain) {
    const { explain: _dropped, ...rest } = out;
    out = { ...rest, truncated: true };
    if (JSON.stringify(out).length <= maxChars) return out;
  }
  if (out.details) {
    const { details: _dropped, ...rest } = out;
    out = { ...rest, truncated: true };
    if (JSON.stringify(out).length <= maxChars) return out;
  }
  const id = randomHex(6);
  held.set(id, { question, answer: out });
  while (held.size > HELD_ANSWERS) held.delete(held.keys().next().value!);
  return answerPage(out, 0, maxChars, id);
}

/** The page of a held answer that a cursor asks for. */
function nextAnswerPage(question: string, cursor: string, maxChars: number): AskOracleResult {
  const m = ORACLE_CURSOR.exec(cursor);
  if (!m) throw new VltError('USAGE', 'cursor is not an ask_oracle cursor; pass the next_cursor of a previous answer unchanged, or leave cursor out to ask again');
  const entry = held.get(m[1]!);
  if (!entry) throw new VltError('USAGE', `the answer this cursor continues is no longer held (the last ${HELD_ANSWERS} answers are); leave cursor out to ask again`);
  if (entry.question !== question) throw new VltError('USAGE', 'this cursor continues the answer to another question; pass the same question with it');
  const from = Number(m[2]);
  if (from >= entry.answer.answer.length) throw new VltError('USAGE', 'cursor points past the end of the answer; leave cursor out to ask again');
  return answerPage(entry.answer, from, maxChars, m[1]!);
}

/** The answer's text from `from`, as much as fits with the rest of the answer in `maxChars`; cut at a line end when one is near. */
function answerPage(full: AskOracleResult, from: number, maxChars: number, id: string): AskOracleResult {
  const text = full.answer;
  const envelope = JSON.stringify({ ...full, answer: '', truncated: true, next_cursor: `a1-${id}-${text.length}` }).length;
  const room = Math.max(200, maxChars - envelope);
  let end = Math.min(text.length, from + room);
  while (end > from + 1 && JSON.stringify(text.slice(from, end)).length - 2 > room) end = from + Math.floor((end - from) * 0.9);
  if (end < text.length) {
    const nl = text.lastIndexOf('\n', end - 1);
    if (nl > from + (end - from) / 2) end = nl + 1;
  }
  const page: AskOracleResult = { ...full, answer: text.slice(from, end), truncated: true };
  if (end < text.length) page.next_cursor = `a1-${id}-${end}`;
  return page;
}

function randomHex(bytes: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, '0')).join('');
}

// ---------------------------------------------------------------------------------------
// read_file_range
// ---------------------------------------------------------------------------------------

/** The most lines one read returns; more is a whole-file dump, which the tool exists to avoid. */
export const MAX_READ_LINES = 400;

const readFileRangeInput = strictArgs({
  path: z.string().min(1).max(1000).describe('Workspace-relative path of the file, e.g. "src/server/auth.ts".'),
  start_line: z.number().int().min(1).describe('First line to read, 1-based.'),
  end_line: z.number().int().min(1).optional().describe(`Last line to read, inclusive (default: start_line + 99; at most ${MAX_READ_LINES} lines per call).`),
  max_tokens: maxTokensArg('Lines that do not fit move to the next page (next_cursor); a single line longer than the budget is cut.', 8000),
  cursor: z.string().max(200).optional().describe('The next_cursor of a previous answer, to read on; pass it with exactly the same path, start_line and end_line.'),
}).meta({ examples: [{"path": "src/auth/session.ts", "start_line": 10, "end_line": 40}] });

export interface ReadFileRangeResult {
  path: string;
  start_line: number;
  end_line: number;
  total_lines: number;
  text: string;
  /** The budget cut this read: lines moved to the next page, or a line was shortened. */
  truncated?: true;
  /** Present when lines of the range remain: pass it back as `cursor` for them. */
  next_cursor?: string;
}

export const readFileRangeTool = defineTool({
  name: 'read_file_range',
  title: 'Read file lines',
  description: `Read lines of a file in this workspace, with line numbers, at most ${MAX_READ_LINES} per call and within max_tokens (the rest of the range is on the next page: next_cursor). Use it after search_code, find_definition or ask_oracle pointed at a place, to read exactly the lines needed instead of the whole file. Paths outside the workspace are refused, and so are .vlt/, .git/, gitignored files and secrets (.env, keys): ACCESS_DENIED.`,
  inputSchema: readFileRangeInput,
  outputSchema: readFileRangeOutput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler(ctx, input): Promise<ReadFileRangeResult> {
    const engine = await ctx.getEngine();
    const { config } = engine;
    const lines = await readLines(engine.root, ctx, input.path, config.index.maxFileBytes, config.security.deny);
    const { start_line: asked, end_line: end } = input;
    if (asked > lines.text.length) throw new VltError('USAGE', `${input.path} has ${lines.text.length} lines; start_line ${asked} is past its end`);
    const last = Math.min(lines.text.length, end ?? asked + 99, asked + MAX_READ_LINES - 1);
    if (last < asked) throw new VltError('USAGE', `end_line ${end} is before start_line ${asked}`);
    const fingerprint = requestFingerprint(['read_file_range', lines.rel, asked, end ?? null]);
    const start = input.cursor !== undefined ? decodeCursor(input.cursor, fingerprint, last) : asked;
    return pageOfLines(lines, start, last, charsForTokens(input.max_tokens), fingerprint);
  },
});

/** A file's lines, read through the workspace's access rules. */
async function readLines(root: string, ctx: ToolContext, rel: string, maxBytes: number, deny: readonly string[]): Promise<{ rel: string; text: string[] }> {
  const file = await readableFile(root, rel, { fs: ctx.fs, deny });
  if (file.size > maxBytes) throw new VltError('USAGE', `${rel} is ${file.size} bytes, over the ${maxBytes}-byte limit for reading`);
  const bytes = await ctx.fs.readFile(file.real);
  if (bytes.subarray(0, 8000).includes(0)) throw new VltError('USAGE', `${rel} is a binary file`);
  return { rel: file.rel, text: new TextDecoder('utf-8').decode(bytes).split(/\r?\n/) };
}

/**
 * Lines `start`..`last`, numbered, as many as fit in `budget` characters of JSON; the rest is
 * the next page. The first line always goes out (cut when it alone is over the budget), so a
 * page never repeats.
 */
function pageOfLines(lines: { rel: string; text: string[] }, start: number, last: number, budget: number, fingerprint: string): ReadFileRangeResult {
  const width = String(last).length;
  const numbered = (n: number) => `${String(n).padStart(width)}│ ${lines.text[n - 1] ?? ''}`;
  const envelope = JSON.stringify({ path: lines.rel, start_line: start, end_line: last, total_lines: lines.text.length, text: '', truncated: true, next_cursor: encodeCursor(last, fingerprint) }).length;
  const out: string[] = [];
  let used = envelope;
  let cut = false;
  let n = start;
  for (; n <= last; n++) {
    const line = numbered(n);
    const cost = JSON.stringify(line).length - 2 + (out.length ? 2 : 0);
    if (used + cost <= budget) {
      out.push(line);
      used += cost;
      continue;
    }
    if (out.length === 0) {
      out.push(`${line.slice(0, Math.max(0, budget - used - 8))}…`);
      cut = true;
      n++;
    }
    break;
  }
  const result: ReadFileRangeResult = { path: lines.rel, start_line: start, end_line: n - 1, total_lines: lines.text.length, text: out.join('\n') };
  if (cut || n <= last) result.truncated = true;
  if (n <= last) result.next_cursor = encodeCursor(n, fingerprint);
  return result;
}
