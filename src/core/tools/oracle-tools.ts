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
import { defineTool, strictArgs, type ToolContext } from './definitions';
import { askOracleOutput, readFileRangeOutput } from './outputs';
import { charsForTokens } from '../tokens';
import { MAX_ANSWER_TOKENS } from './budget';

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
  max_tokens: z.number().int().min(500).max(MAX_ANSWER_TOKENS).default(6000).describe('Upper bound on the size of this answer, in tokens (estimated as characters / 4).'),
}).meta({ examples: [{"question": "How does the session refresh work?", "sources": ["code", "notes"]}] });

export interface AskOracleResult extends Omit<OracleAnswer, 'explain'> {
  explain?: OracleAnswer['explain'];
  truncated: boolean;
}

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
    return fitAnswer(ans, charsForTokens(input.max_tokens));
  },
});

/** Keeps the answer within the budget: the explanation goes first, then the details, then the answer is cut. */
function fitAnswer(ans: OracleAnswer, maxChars: number): AskOracleResult {
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
  const over = JSON.stringify(out).length - maxChars;
  const keep = Math.max(200, ans.answer.length - over - 100);
  return { ...out, answer: `${ans.answer.slice(0, keep)}\n… (cut to fit max_tokens)`, truncated: true };
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
}).meta({ examples: [{"path": "src/auth/session.ts", "start_line": 10, "end_line": 40}] });

export interface ReadFileRangeResult {
  path: string;
  start_line: number;
  end_line: number;
  total_lines: number;
  text: string;
}

export const readFileRangeTool = defineTool({
  name: 'read_file_range',
  title: 'Read file lines',
  description: `Read lines of a file in this workspace, with line numbers, at most ${MAX_READ_LINES} per call. Use it after search_code, find_definition or ask_oracle pointed at a place, to read exactly the lines needed instead of the whole file. Paths outside the workspace are refused, and so are .vlt/, .git/, gitignored files and secrets (.env, keys): ACCESS_DENIED.`,
  inputSchema: readFileRangeInput,
  outputSchema: readFileRangeOutput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler(ctx, input): Promise<ReadFileRangeResult> {
    const engine = await ctx.getEngine();
    return readFileRange(engine.root, ctx, input.path, input.start_line, input.end_line, engine.config.index.maxFileBytes, engine.config.security.deny);
  },
});

async function readFileRange(root: string, ctx: ToolContext, rel: string, start: number, end: number | undefined, maxBytes: number, deny: readonly string[]): Promise<ReadFileRangeResult> {
  const file = await readableFile(root, rel, { fs: ctx.fs, deny });
  if (file.size > maxBytes) throw new VltError('USAGE', `${rel} is ${file.size} bytes, over the ${maxBytes}-byte limit for reading`);
  const bytes = await ctx.fs.readFile(file.real);
  if (bytes.subarray(0, 8000).includes(0)) throw new VltError('USAGE', `${rel} is a binary file`);
  const lines = new TextDecoder('utf-8').decode(bytes).split(/\r?\n/);
  if (start > lines.length) throw new VltError('USAGE', `${rel} has ${lines.length} lines; start_line ${start} is past its end`);
  const last = Math.min(lines.length, end ?? start + 99, start + MAX_READ_LINES - 1);
  if (last < start) throw new VltError('USAGE', `end_line ${end} is before start_line ${start}`);
  const width = String(last).length;
  const text = lines
    .slice(start - 1, last)
    .map((l, i) => `${String(start + i).padStart(width)}│ ${l}`)
    .join('\n');
  return { path: file.rel, start_line: start, end_line: last, total_lines: lines.length, text };
}
