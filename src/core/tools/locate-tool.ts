/**
 * `locate_files`: the locate mode (src/core/locate/locate.ts) as an agent tool. An agent pastes
 * the bug report it was given and gets the files to open first, each with the evidence that put
 * it there, instead of searching chunk by chunk.
 */
import { z } from 'zod';
import { VltError } from '../errors';
import { locatorFor, type LocatedFile, type LocateResult } from '../locate/locate';
import { strictArgs, type ToolContext, defineTool } from './definitions';
import { locateOutput } from './outputs';

/** The most files one call ranks. */
export const MAX_LOCATE_LIMIT = 100;

const locateInput = strictArgs({
  report: z
    .string()
    .min(1)
    .max(100_000)
    .describe('The bug report as given: the issue text, an error message, a stack trace or traceback, or a commit-style description of the fix. Paste it whole; frames, quoted messages and code identifiers in it are evidence.'),
  limit: z.number().int().min(1).max(MAX_LOCATE_LIMIT).default(10).describe(`How many files to return, best first (1-${MAX_LOCATE_LIMIT}).`),
  explain: z.boolean().default(false).describe("Also give each file's score per kind of evidence (channels) and the multiplier a test, doc or vendored file got (prior), and each channel's time in milliseconds."),
}).meta({ examples: [{"report": "Saving an unbound form crashes:\nTraceback …\nValueError: cannot save an unbound form", "limit": 5}] });

export interface LocateToolResult {
  files: Array<Pick<LocatedFile, 'path' | 'line' | 'score' | 'reasons'> & Partial<Pick<LocatedFile, 'channels' | 'prior'>>>;
  notes?: string[];
  /** With `explain`: the whole call's milliseconds, and each channel's. */
  ms?: number;
  timings?: LocateResult['timings'];
}

export const locateFilesTool = defineTool({
  name: 'locate_files',
  title: 'Locate files for a bug report',
  description: [
    'Given a bug report, error message or stack trace, rank the files of this workspace that most likely have to change to fix it, each with its reasons',
    '("frame 2 of the traceback", "defines `Mod.eval` named in the report", "holds the message ...", "its tests are named in the report").',
    'Evidence is added up per file (whole-file text match, search hits, definitions of the identifiers, traceback frames, error messages found verbatim, named tests, import neighbours);',
    'tests, docs, examples and vendored code rank lower unless the report is about them.',
    'Use it first for "where do I fix this?"; then read the top files, or call find_definition / find_references on what they name.',
  ].join(' '),
  inputSchema: locateInput,
  outputSchema: locateOutput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler(ctx: ToolContext, input: z.output<typeof locateInput>): Promise<LocateToolResult> {
    if (!input.report.trim()) throw new VltError('USAGE', 'report is blank; paste the issue text, error message or stack trace');
    const engine = await ctx.getEngine();
    const history = await ctx.locateHistory?.(engine, ctx.signal);
    const res = await locatorFor(engine).locate(input.report, { k: input.limit, ...(history ? { history } : {}), ...(ctx.signal ? { signal: ctx.signal } : {}) });
    const files = res.files.map((f) => ({
      path: f.path,
      ...(f.line !== undefined ? { line: f.line } : {}),
      score: f.score,
      reasons: f.reasons,
      ...(input.explain ? { channels: f.channels, ...(f.prior !== undefined ? { prior: f.prior } : {}) } : {}),
    }));
    return { files, ...(res.notes.length ? { notes: res.notes } : {}), ...(input.explain ? { ms: res.ms, timings: res.timings } : {}) };
  },
});
