/**
 * find_definition and find_references: the navigation chain (src/core/intel/navigate.ts) as
 * agent tools; get_diagnostics: a file's diagnostics (and a hover) from its language server. Each location comes back with a `citation` (`path:line`), the source line read
 * live, its provenance (`lsp|ctags|graph|search`) and whether it is exact.
 */
import { z } from 'zod';
import * as path from 'node:path';
import { readableFile } from '../access';
import { VltError } from '../errors';
import type { NavAnswer, NavLocation } from '../intel/navigate';
import { charsForTokens } from '../tokens';
import { MAX_ANSWER_TOKENS, decodeCursor, encodeCursor, requestFingerprint } from './budget';
import { defineTool, maxTokensArg, strictArgs, type ToolContext } from './definitions';
import { diagnosticsOutput, navOutput } from './outputs';

const LINE_CHARS = 200;

const target = {
  symbol: z
    .string()
    .min(1)
    .max(500)
    .optional()
    .describe('A symbol name: a bare identifier (parseConfig) or a qualified one (Writer.Close). Give either symbol, or file+line+col.'),
  file: z.string().min(1).max(1000).optional().describe('Workspace-relative path of the file holding the identifier; use with line and col.'),
  line: z.number().int().min(1).optional().describe('1-based line of the identifier in file.'),
  col: z.number().int().min(1).optional().describe('1-based column of (any character of) the identifier in file.'),
  no_lsp: z.boolean().default(false).describe('Skip language servers and answer from the index alone (faster, not type-aware).'),
  lsp_timeout_ms: z.number().int().min(100).max(120_000).optional().describe("Upper bound for the language server's answer, in milliseconds; past it the index answers. Default: the server's own."),
};

function queryOf(input: { symbol?: string | undefined; file?: string | undefined; line?: number | undefined; col?: number | undefined }): string {
  const pos = input.file !== undefined || input.line !== undefined || input.col !== undefined;
  if (input.symbol !== undefined && pos) throw new VltError('USAGE', 'give either symbol, or file+line+col, not both');
  if (input.symbol !== undefined) return input.symbol;
  if (input.file === undefined || input.line === undefined || input.col === undefined) {
    throw new VltError('USAGE', 'give symbol, or all three of file, line and col');
  }
  return `${input.file}:${input.line}:${input.col}`;
}

export interface NavToolLocation extends NavLocation {
  citation: string;
  /** The source line, read now (trimmed, shortened). */
  text: string;
}

export interface NavToolResult extends Omit<NavAnswer, 'locations' | 'definition'> {
  locations: NavToolLocation[];
  definition?: NavToolLocation;
  next_cursor?: string;
}

async function withLines(ctx: ToolContext, root: string, locs: readonly NavLocation[]): Promise<NavToolLocation[]> {
  const files = new Map<string, Promise<string[] | undefined>>();
  const out: NavToolLocation[] = [];
  for (const l of locs) {
    let f = files.get(l.path);
    if (!f) {
      f = ctx.fs
        .readFile(path.isAbsolute(l.path) ? l.path : path.join(root, l.path))
        .then((b) => new TextDecoder().decode(b).split('\n'))
        .catch(() => undefined);
      files.set(l.path, f);
    }
    const raw = ((await f)?.[l.line - 1] ?? '').trim();
    out.push({ ...l, citation: `${l.path}:${l.line}`, text: raw.length > LINE_CHARS ? `${raw.slice(0, LINE_CHARS)}…` : raw });
  }
  return out;
}

async function navigator(ctx: ToolContext) {
  const engine = await ctx.getEngine();
  return { engine, nav: engine.navigator(ctx.intel?.(engine) ?? {}) };
}

const findDefinitionInput = strictArgs(target).meta({ examples: [{"file": "src/service.ts", "line": 11, "col": 20}, {"symbol": "Writer.Close"}] });

export const findDefinitionTool = defineTool({
  name: 'find_definition',
  title: 'Find definition',
  description: [
    'Find where a symbol is defined. Give a position (file, line, col of a use) for the most precise answer, or a symbol name.',
    'Answers come from a chain: the language server (exact, type-aware) when one runs for the language, then Universal Ctags, then the index (scopes, imports, class members resolved from syntax), then search.',
    'Each location has provenance (lsp|ctags|graph|search), exact (true only for language-server answers), confidence, a citation path:line and the source line.',
    'When several definitions match and none can be chosen, ambiguous is true and all are listed, nearest first. When nothing matches, suggestions lists similar names.',
  ].join(' '),
  inputSchema: findDefinitionInput,
  outputSchema: navOutput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler(ctx, input): Promise<NavToolResult> {
    const { engine, nav } = await navigator(ctx);
    const a = await nav.definition(queryOf(input), { noLsp: input.no_lsp, ...(input.lsp_timeout_ms !== undefined ? { lspTimeoutMs: input.lsp_timeout_ms } : {}), ...(ctx.signal ? { signal: ctx.signal } : {}) });
    const locations = await withLines(ctx, engine.root, a.locations.slice(0, 50));
    if (a.locations.length > 50) a.notes.push(`${a.locations.length - 50} more candidates not listed`);
    const { definition: _d, ...rest } = a;
    void _d;
    return { ...rest, locations };
  },
});

const findReferencesInput = strictArgs({
  ...target,
  limit: z.number().int().min(1).max(5000).default(200).describe('How many references to list in all, across pages (total still counts every one).'),
  max_tokens: maxTokensArg('References that do not fit move to the next page.'),
  cursor: z.string().max(200).optional().describe('The next_cursor of a previous answer, with exactly the same other arguments, for the next page.'),
  budget_ms: z
    .number()
    .int()
    .min(100)
    .max(600_000)
    .optional()
    .describe('Without a language server: stop resolving uses after this many milliseconds and answer with those found so far, nearest to the definition first; notes then say the list is partial. Default: no limit.'),
}).meta({ examples: [{"symbol": "parseConfig", "limit": 100}] });

export const findReferencesTool = defineTool({
  name: 'find_references',
  title: 'Find references',
  description: [
    'Find where a symbol is used. Give the position of the definition or of any use (file, line, col), or a symbol name.',
    'With a language server the list is exact. Without one, the index finds every use in the files that can see the definition (its importers, its package) and resolves each: confidence high when the use resolves to this definition, medium or low when it cannot be resolved but names it.',
    'Each reference has a citation path:line and the source line; total is the exact number of references when every candidate file was searched, and the list is ranked (non-test files first, then nearest the definition).',
    'The answer stays within max_tokens; follow next_cursor for more. An answer with no references has a reason saying why (not-defined, no-uses, budget, lsp-failed).',
  ].join(' '),
  inputSchema: findReferencesInput,
  outputSchema: navOutput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler(ctx, input): Promise<NavToolResult> {
    const query = queryOf(input);
    const fingerprint = requestFingerprint([query, input.limit, input.no_lsp, input.budget_ms ?? null]);
    const offset = input.cursor !== undefined ? decodeCursor(input.cursor, fingerprint, input.limit) : 0;
    const { engine, nav } = await navigator(ctx);
    const a = await nav.references(query, { noLsp: input.no_lsp, ...(input.lsp_timeout_ms !== undefined ? { lspTimeoutMs: input.lsp_timeout_ms } : {}), limit: input.limit, ...(input.budget_ms !== undefined ? { budgetMs: input.budget_ms } : {}), ...(ctx.signal ? { signal: ctx.signal } : {}) });
    const budget = charsForTokens(Math.min(input.max_tokens, MAX_ANSWER_TOKENS));
    const definition = a.definition ? (await withLines(ctx, engine.root, [a.definition]))[0] : undefined;
    const { definition: _d, locations: all, ...rest } = a;
    void _d;
    if (a.total !== undefined && a.total > all.length) rest.notes = [...rest.notes, `${a.total} references in all; the first ${all.length} (limit) are listed across pages, ranked: non-test files first, then nearest the definition; raise limit for more`];
    const base: NavToolResult = { ...rest, locations: [], ...(definition ? { definition } : {}) };
    let used = JSON.stringify({ ...base, next_cursor: encodeCursor(all.length, fingerprint) }).length;
    const page: NavToolLocation[] = [];
    let next = offset;
    for (; next < all.length; next++) {
      const [loc] = await withLines(ctx, engine.root, [all[next]!]);
      const size = JSON.stringify(loc).length + 1;
      if (used + size > budget && page.length > 0) break;
      page.push(loc!);
      used += size;
    }
    const out: NavToolResult = { ...base, locations: page };
    if (next < all.length) out.next_cursor = encodeCursor(next, fingerprint);
    return out;
  },
});

const getDiagnosticsInput = strictArgs({
  file: z.string().min(1).max(1000).describe('Workspace-relative path of the file to check, e.g. "src/service.ts".'),
  line: z.number().int().min(1).optional().describe('With col: also return the hover text (type, documentation) at this 1-based line.'),
  col: z.number().int().min(1).optional().describe('With line: the 1-based column to hover at.'),
  timeout_ms: z.number().int().min(1000).max(120_000).default(30_000).describe('Upper bound for the language server, start-up included (1000-120000 ms).'),
}).meta({ examples: [{"file": "src/service.ts"}, {"file": "src/service.ts", "line": 11, "col": 20}] });

export interface DiagnosticsToolResult {
  file: string;
  /** The language server that answered. */
  server: string;
  diagnostics: Array<{ citation: string; line: number; col: number; end_line: number; end_col: number; severity: string; message: string; code?: string; source?: string }>;
  /** The hover text at line:col when asked for; null when the server had none. */
  hover?: string | null;
}

export const getDiagnosticsTool = defineTool({
  name: 'get_diagnostics',
  title: 'Get diagnostics',
  description: [
    "A file's diagnostics from its language server: type errors, warnings and hints, each with severity, message, the server's code and a citation path:line.",
    'Use it for "why does this fail?" or "what is wrong with this file?" before reading the code. With line and col it also returns the hover text there (the type of an expression, a signature).',
    'Needs a language server for the file\'s language; without one (or in an untrusted workspace) the answer is an LSP_UNAVAILABLE error saying why.',
  ].join(' '),
  inputSchema: getDiagnosticsInput,
  outputSchema: diagnosticsOutput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler(ctx, input): Promise<DiagnosticsToolResult> {
    if ((input.line === undefined) !== (input.col === undefined)) throw new VltError('USAGE', 'give line and col together, or neither');
    const engine = await ctx.getEngine();
    const { rel: file } = await readableFile(engine.root, input.file, { fs: ctx.fs, deny: engine.config.security.deny });
    const lsp = ctx.intel?.(engine).lsp;
    if (!lsp) throw new VltError('LSP_UNAVAILABLE', 'no language server can run here (an untrusted workspace, or a host without language servers)');
    const call = { timeoutMs: input.timeout_ms, ...(ctx.signal ? { signal: ctx.signal } : {}) };
    const d = await lsp.diagnostics(file, call);
    if (!d.ok) throw new VltError('LSP_UNAVAILABLE', `no diagnostics for ${file}: ${d.failure} (${d.reason})`);
    const diagnostics = d.value.map((x) => ({
      citation: `${x.range.path}:${x.range.startLine}`,
      line: x.range.startLine,
      col: x.range.startCol,
      end_line: x.range.endLine,
      end_col: x.range.endCol,
      severity: x.severity,
      message: x.message,
      ...(x.code ? { code: x.code } : {}),
      ...(x.source ? { source: x.source } : {}),
    }));
    const out: DiagnosticsToolResult = { file, server: d.server, diagnostics };
    if (input.line !== undefined && input.col !== undefined) {
      const h = await lsp.hover({ path: file, line: input.line, col: input.col }, call);
      out.hover = h.ok ? h.value : null;
    }
    return out;
  },
});
