/**
 * `get_repo_map`: the repository map as an agent tool. The map itself lives in
 * `src/core/intel/repomap.ts`; this file is its contract with the model: the schema, the
 * description, and the rule that the whole answer, JSON and all, stays within `max_tokens`
 * as counted by a real tokenizer.
 */
import { z } from 'zod';
import { VltError } from '../errors';
import { DEFAULT_MAP_TOKENS, loadTokenCounter, repoMapperFor, SAMPLE_CURSOR } from '../intel/repomap';
import { MAX_ANSWER_TOKENS } from './budget';
import { defineTool, strictArgs, type ToolContext } from './definitions';
import { repoMapOutput } from './outputs';

/** The smallest budget accepted: a path line and a handful of signatures. */
const MIN_MAP_TOKENS = 100;
/** Slack for tokens that merge differently where the map meets the JSON around it. */
const SEAM_TOKENS = 4;

const repoMapInput = strictArgs({
  scope: z
    .string()
    .min(1)
    .max(1000)
    .optional()
    .describe('Only show files under this workspace-relative directory (e.g. "src/core" or "net/http"), or this one file. Ranking still uses the whole repository.'),
  max_tokens: z
    .number()
    .int()
    .min(MIN_MAP_TOKENS)
    .max(MAX_ANSWER_TOKENS)
    .default(DEFAULT_MAP_TOKENS)
    .describe(`Upper bound on the size of this answer, in tokens (counted with a real tokenizer), ${MIN_MAP_TOKENS}-${MAX_ANSWER_TOKENS}. Lower-ranked definitions that do not fit move to the next page.`),
  focus: z
    .array(z.string().min(1).max(2000))
    .max(50)
    .optional()
    .describe(
      'What to rank around: file paths or directories ("src/store.ts", "net/http"), symbol names ("parseConfig", "Writer.Close"), or the words of a question ("how are retries scheduled"). Each item is matched as a path first, then as a symbol, then as words.',
    ),
  cursor: z
    .string()
    .max(300)
    .optional()
    .describe('The next_cursor of a previous answer, to get the next-ranked definitions; pass it with exactly the same scope and focus.'),
}).meta({ examples: [{"scope": "net/http", "max_tokens": 2000, "focus": ["Client.Do"]}] });

export interface RepoMapToolResult {
  /**
   * The map: a `path:` line per file, then one `L<line> <signature>` line per definition
   * (members indented under their type), most important files and definitions first.
   */
  map: string;
  /** Tokens of `map`. */
  tokens: number;
  /** More definitions rank below this page (see next_cursor), or an entry was shortened. */
  truncated: boolean;
  /** Pass back as `cursor`, with the same scope and focus, for the next page. */
  next_cursor?: string;
}

type RepoMapInput = z.output<typeof repoMapInput>;

export const repoMapTool = defineTool({
  name: 'get_repo_map',
  title: 'Repository map',
  description: [
    "Get a map of this workspace's code: files with their most important definitions (one signature per line, with its line number), ranked by how much the rest of the code uses them (PageRank over the definition-reference graph).",
    'Use it first to orient yourself in an unfamiliar codebase, or with focus to see what surrounds given files, symbols or a question before reading code.',
    'Each "L<line> <signature>" line belongs to the "path:" line above it, so you can cite path:line and open exactly that place. Files without definitions appear as a bare path at the end.',
    'Focus items that match nothing are reported as "note:" lines at the top. scope restricts the files shown (not the ranking).',
    'The answer stays within max_tokens. When next_cursor is set, more ranked definitions follow: call again with the same scope and focus plus cursor.',
  ].join(' '),
  inputSchema: repoMapInput,
  outputSchema: repoMapOutput,
  // Read-only from the workspace's point of view: the first call may build the index, which
  // only writes the tool's own cache folder (.vlt/), never the user's files.
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: getRepoMap,
});

async function getRepoMap(ctx: ToolContext, input: RepoMapInput): Promise<RepoMapToolResult> {
  const engine = await ctx.getEngine();
  const mapper = repoMapperFor(engine);
  const count = await loadTokenCounter();
  // The answer is measured after rendering anyway; sizing the envelope first makes a second
  // rendering rare.
  const envelope = count(JSON.stringify({ map: '', tokens: input.max_tokens, truncated: true, next_cursor: SAMPLE_CURSOR }));
  let budget = input.max_tokens - envelope - SEAM_TOKENS;
  // The map is sized as JSON-escaped text; the envelope is measured on the real answer and the
  // map shrunk by any overshoot, so that the answer as sent never exceeds max_tokens.
  for (let attempt = 0; attempt < 4 && budget > 0; attempt++) {
    if (ctx.signal?.aborted) throw new VltError('CANCELLED', 'the call was cancelled');
    const res = await mapper.render({
      maxTokens: budget,
      countJsonEscaped: true,
      ...(input.scope !== undefined ? { scope: input.scope } : {}),
      ...(input.focus !== undefined ? { focus: input.focus } : {}),
      ...(input.cursor !== undefined ? { cursor: input.cursor } : {}),
    });
    const answer: RepoMapToolResult = { map: res.text, tokens: count(res.text), truncated: res.truncated };
    if (res.next_cursor !== undefined) answer.next_cursor = res.next_cursor;
    const size = count(JSON.stringify(answer));
    if (size <= input.max_tokens) return answer;
    budget -= size - input.max_tokens + 8;
  }
  throw new VltError('USAGE', `max_tokens ${input.max_tokens} is too small for a repository map page; ask for more tokens`);
}
