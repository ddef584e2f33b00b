/**
 * `locate_files`: the locate mode (src/core/locate/locate.ts) as an agent tool. An agent pastes
 * the bug report it was given and gets the files to open first, each with the evidence that put
 * it there, instead of searching chunk by chunk.
 */
import { z } from 'zod';
import { VltError } from '../errors';
import { locatorFor, type LocatedFile } from '../locate/locate';
import { strictArgs, type ToolContext, defineTool } from './definitions';
import { locateOutput } from './outputs';

const locateInput = strictArgs({
  report: z
    .string()
    .min(1)
    .max(100_000)
    .describe('The bug report as given: the issue text, an error message, a stack trace or traceback, or a commit-style description of the fix. Paste it whole; frames, quoted messages and code identifiers in it are evidence.'),
  limit: z.number().int().min(1).max(50).default(10).describe('How many files to return, best first.'),
}).meta({ examples: [{"report": "Saving an unbound form crashes:\nTraceback …\nValueError: cannot save an unbound form", "limit": 5}] });

export interface LocateToolResult {
  files: Array<Pick<LocatedFile, 'path' | 'line' | 'score' | 'reasons'>>;
  notes?: string[];
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
    return { files: res.files.map((f) => ({ path: f.path, ...(f.line !== undefined ? { line: f.line } : {}), score: f.score, reasons: f.reasons })), ...(res.notes.length ? { notes: res.notes } : {}) };
  },
});
