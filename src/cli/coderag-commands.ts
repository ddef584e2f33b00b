/**
 * `vlt coderag`: index a workspace and ask it. `search`, `locate`, `def`, `refs` and `diag` run
 * the agent tools (search_code, locate_files, find_definition, find_references,
 * get_diagnostics), so their `--json` is the tool's answer over MCP, with the same paging,
 * budgets and errors. `map` and `status` read the engine: a terminal's map has no token cap and
 * its `--json` is the structured map the tool renders as text; status answers without opening
 * the index and lists every skipped folder.
 */
import { Option, type Command } from 'commander';
import { DEFAULT_MAP_TOKENS, RepoMapper } from '../core/intel/repomap';
import { VltError } from '../core/errors';
import { CHUNK_KINDS, type ChunkKindFilter } from '../core/search/rank';
import { MAX_ANSWER_TOKENS } from '../core/tools/budget';
import { MAX_SEARCH_LIMIT, type SearchCodeResult } from '../core/tools/definitions';
import { MAX_LOCATE_LIMIT } from '../core/tools/locate-tool';
import { LANGUAGES, type LanguageId } from '../core/types';
import { nodeWorkspaceFs } from '../node/fs';
import type { CommandContext } from './command-context';
import { formatDryRun, formatLocate, formatNavAnswer, formatSearch } from './format';
import { chunkKinds, intIn, positiveInt } from './options';
import { summarizeIndexLine } from './runtime';
import { renderStatus } from './status-output';

/** A navigation command's target, `FILE:LINE:COL` or a symbol name, as the tools take it. */
function navTarget(target: string): { symbol: string } | { file: string; line: number; col: number } {
  const m = /^(.+):(\d+):(\d+)$/.exec(target);
  return m?.[1] && m[2] && m[3] ? { file: m[1], line: Number(m[2]), col: Number(m[3]) } : { symbol: target };
}

/** The options of `def` and `refs` that reach the navigation tools. */
function navInput(o: { lsp?: boolean; lspTimeout?: number }) {
  return { no_lsp: o.lsp === false, ...(o.lspTimeout !== undefined ? { lsp_timeout_ms: o.lspTimeout } : {}) };
}

export function registerCoderagCommands(program: Command, c: CommandContext): void {
  const coderag = program.command('coderag').description('index and search the code of a workspace').exitOverride();
  registerIndexCommands(coderag, c);
  registerQueryCommands(coderag, c);
  registerNavigationCommands(coderag, c);
}

/** `init`, `sync`, `status`, `watch`: building the index and keeping it current. */
function registerIndexCommands(coderag: Command, c: CommandContext): void {
  const { io, out, json } = c;

  /** `init` and `sync`: an incremental index run with progress. */
  const indexCommand = async (p: string | undefined, o: { json?: boolean; force?: boolean }): Promise<void> => {
    const r = await c.workspace(p).index(o.force ? { force: true } : {});
    if (o.json) json(r);
    else out(summarizeIndexLine(r));
  };

  coderag
    .command('init')
    .description('index a workspace (incremental when an index exists)')
    .argument('[path]', 'workspace root')
    .option('--dry-run', 'show what would be indexed, write nothing')
    .option('--list-skipped', 'with --dry-run: every file that would be skipped, and why')
    .option('--json', 'machine-readable output')
    .action(async (p: string | undefined, o: { dryRun?: boolean; listSkipped?: boolean; json?: boolean }) => {
      if (o.listSkipped && !o.dryRun) throw new VltError('USAGE', '--list-skipped goes with --dry-run (or `vlt coderag status --list-skipped` for the index)');
      if (!o.dryRun) return indexCommand(p, o);
      const r = await c.workspace(p).dryRun({ listSkipped: Boolean(o.listSkipped) });
      if (o.json) json(r);
      else out(formatDryRun(r));
    });

  coderag
    .command('sync')
    .description('re-index changed files now')
    .option('--force', 'parse every file again, changed or not; the index committed before keeps answering until the run commits (a stopped run resumes)')
    .option('--json', 'machine-readable output')
    .action((o: { json?: boolean; force?: boolean }) => indexCommand(undefined, o));

  coderag
    .command('status')
    .description('what the index holds, and what was skipped and why')
    .option('--list-skipped', 'every skipped file and folder, and why')
    .option('--json', 'machine-readable output')
    .action(async (o: { json?: boolean; listSkipped?: boolean }) => {
      await c.workspace().existing(async (engine) => {
        io.stdout.write(renderStatus(engine.status(), { json: o.json === true, ...(o.listSkipped ? { skippedFiles: engine.store.getSkipped() } : {}) }));
      });
    });

  coderag
    .command('watch')
    .description('keep the index current while files change: edits are indexed as they happen and committed in batches (vlt.toml [index] queue_*); Ctrl-C commits what is queued')
    .option('--json', 'one JSON line per commit on stdout')
    .action(async (o: { json?: boolean }) => {
      c.here('coderag watch');
      const { logger, progress } = c.wiring();
      const deps = { fs: nodeWorkspaceFs, logger };
      const { WorkspaceServer } = await import('../server/workspace');
      const { watchWorkspace } = await import('../server/watch');
      // The queue's thresholds come from vlt.toml ([index] queue_*).
      const ws = await WorkspaceServer.open({ workspace: c.root(), logger, onProgress: progress.sink, deps, writer: true, hostName: 'vlt coderag watch' });
      const stop = new AbortController();
      for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(sig, () => stop.abort());
      try {
        await watchWorkspace(ws, {
          logger,
          signal: stop.signal,
          onCommit: (s) => (o.json ? out(JSON.stringify({ committed: s.lastCommit, commits: s.commits })) : out(`committed at ${s.lastCommit ?? '?'} (${s.commits} commit${s.commits === 1 ? '' : 's'} so far)`)),
        });
      } finally {
        await ws.close();
      }
    });
}

/** `search`, `locate`, `map`: asking the index in words, with a report, or for its map. */
function registerQueryCommands(coderag: Command, c: CommandContext): void {
  const { io, out, json } = c;

  coderag
    .command('search')
    .description('hybrid code search (BM25 + symbols + paths, and vectors when configured): the search_code tool')
    .argument('<query...>', 'what to look for: words, identifiers, or a pasted bug report')
    .option('-k, --limit <n>', 'number of results', intIn(1, MAX_SEARCH_LIMIT), 10)
    .addOption(new Option('--lang <language>', 'only this language').choices([...LANGUAGES]))
    .option('--path <glob>', 'only paths matching this glob (e.g. "net/http/**")')
    .option('--kind <kinds>', `only these kinds, comma-separated: ${CHUNK_KINDS.join(', ')}`, chunkKinds)
    .option('--json', "machine-readable output: search_code's hits (stable contract, see docs/cli.md)")
    .option('--explain', 'show each retriever and the fusion')
    .action((words: string[], o: SearchOptions) => searchCommand(c, words, o));

  coderag
    .command('locate')
    .description('the files to change for a bug report, stack trace or issue text, each with its reasons (the locate_files tool)')
    .argument('[report...]', 'the report, or - (or nothing) to read it from stdin')
    .option('-k, --limit <n>', 'number of files', intIn(1, MAX_LOCATE_LIMIT), 10)
    .option('--json', "machine-readable output: locate_files' answer")
    .option('--explain', "each channel's share of each file's score, and each channel's time")
    .action(async (words: string[], o: { limit: number; json?: boolean; explain?: boolean }) => {
      let report = words.join(' ');
      if (report.trim() === '' || report.trim() === '-') {
        report = (await io.readStdin()) ?? '';
        if (!report.trim()) throw new VltError('USAGE', 'no report given: pass it as arguments or on stdin (vlt coderag locate - < issue.txt)');
      }
      const w = c.wiring();
      const res = await c.runtime.workspace(c.root(), w).tool('locate_files', { report, limit: o.limit, explain: Boolean(o.explain) });
      for (const n of res.notes ?? []) w.logger.warn(n);
      if (o.json) json(res);
      else out(formatLocate(res));
    });

  coderag
    .command('map')
    .description('repository map: files and their most important definitions, ranked by use (PageRank), within a token budget')
    .option('--scope <dir>', 'only files under this directory (ranking still uses the whole repository)')
    .option('--tokens <n>', 'token budget of the map', positiveInt, DEFAULT_MAP_TOKENS)
    .option('--focus <item>', 'rank around a file, directory, symbol or words (repeatable)', (v: string, prev: string[]) => [...prev, v], [] as string[])
    .option('--cursor <cursor>', 'continue after a previous map (its next_cursor)')
    .option('--json', 'machine-readable output')
    .action(async (o: { scope?: string; tokens: number; focus: string[]; cursor?: string; json?: boolean }) => {
      const w = c.wiring();
      // A person at a terminal asked for this many tokens: no cap (the agent tool has one).
      const res = await c.runtime.workspace(c.root(), w).query((engine) =>
        new RepoMapper(engine).render({
          maxTokens: o.tokens,
          allowLarge: true,
          ...(o.scope !== undefined ? { scope: o.scope } : {}),
          ...(o.focus.length ? { focus: o.focus } : {}),
          ...(o.cursor !== undefined ? { cursor: o.cursor } : {}),
        }),
      );
      if (o.json) json(res);
      else {
        out(res.text || '(no definitions to show)');
        if (res.next_cursor) w.logger.info(`more definitions rank below; continue with --cursor ${res.next_cursor}`);
      }
    });
}

interface SearchOptions {
  limit: number;
  lang?: LanguageId;
  path?: string;
  kind?: ChunkKindFilter[];
  json?: boolean;
  explain?: boolean;
}

/** `vlt coderag search`: search_code's hits, every page of them, as the documented array or a list. */
async function searchCommand(c: CommandContext, words: string[], o: SearchOptions): Promise<void> {
  const { io, out, json } = c;
  const query = words.join(' ');
  if (!query.trim()) throw new VltError('USAGE', 'the search query is empty');
  const w = c.wiring();
  const ws = c.runtime.workspace(c.root(), w);
  const input = { query, limit: o.limit, ...(o.lang ? { language: o.lang } : {}), ...(o.path ? { path: o.path } : {}), ...(o.kind ? { kind: o.kind } : {}) };
  // A terminal has no context window to spare: every page of the tool's answer, joined, over
  // one opened index.
  const hits: SearchCodeResult['hits'] = [];
  let notes: string[] = [];
  await ws.tools(async (call) => {
    let cursor: string | undefined;
    do {
      const page = await call('search_code', { ...input, max_tokens: MAX_ANSWER_TOKENS, ...(cursor !== undefined ? { cursor } : {}) });
      hits.push(...page.hits);
      notes = page.notes ?? notes;
      cursor = page.next_cursor;
    } while (cursor !== undefined);
  });
  // How the hits were ranked is the engine's own report, asked for again: the tool has no room for it.
  const explain = o.explain
    ? (await ws.query((engine) => engine.search(query, { k: o.limit, ...(o.lang ? { language: o.lang } : {}), ...(o.path ? { pathGlob: o.path } : {}), ...(o.kind ? { kinds: o.kind } : {}), signal: io.signal }))).explain
    : undefined;
  if (o.json) {
    // The --json contract is the list of hits; what to know about them goes to stderr.
    for (const n of notes) w.logger.warn(n);
    json(explain ? { hits, notes, explain } : hits);
  } else out(formatSearch({ hits, notes }, explain));
}

/** `def`, `refs`, `diag`: the navigation tools. */
function registerNavigationCommands(coderag: Command, c: CommandContext): void {
  const { out, json } = c;

  coderag
    .command('def')
    .description('where a symbol is defined: language server first, then ctags, the index, search (the find_definition tool)')
    .argument('<target>', 'a symbol name (Writer.Close) or FILE:LINE:COL')
    .option('--json', "machine-readable output: find_definition's answer")
    .option('--explain', 'which providers ran, which were skipped and why, and how long each took')
    .option('--no-lsp', 'do not start language servers (the fallback chain alone)')
    .option('--lsp-timeout <ms>', 'upper bound for the language server', intIn(100, 120_000))
    .action(async (target: string, o: { json?: boolean; explain?: boolean; lsp?: boolean; lspTimeout?: number }) => {
      const a = await c.workspace().tool('find_definition', { ...navTarget(target), ...navInput(o) }, { lsp: o.lsp !== false });
      if (o.json) json(a);
      else out(formatNavAnswer(a, 'definition', Boolean(o.explain)));
    });

  coderag
    .command('refs')
    .description('where a symbol is used: language server first, then the index resolving each use (the find_references tool)')
    .argument('<target>', 'a symbol name or FILE:LINE:COL')
    .option('-k, --limit <n>', 'most references listed, across pages (the total counts them all)', intIn(1, 5000), 200)
    .option('--max-tokens <n>', 'size of one page, in tokens; the rest is on the next pages', intIn(100, MAX_ANSWER_TOKENS), MAX_ANSWER_TOKENS)
    .option('--cursor <cursor>', 'the next page: the cursor a previous answer printed, with the same other arguments')
    .option('--budget <ms>', 'without a language server: answer with what was found after this long, saying the list is partial', intIn(100, 600_000))
    .option('--json', "machine-readable output: find_references' answer")
    .option('--explain', 'which providers ran, which were skipped and why, and how long each took')
    .option('--no-lsp', 'do not start language servers (the fallback chain alone)')
    .option('--lsp-timeout <ms>', 'upper bound for the language server', intIn(100, 120_000))
    .action(async (target: string, o: { limit: number; maxTokens: number; cursor?: string; budget?: number; json?: boolean; explain?: boolean; lsp?: boolean; lspTimeout?: number }) => {
      const a = await c.workspace().tool(
        'find_references',
        { ...navTarget(target), ...navInput(o), limit: o.limit, max_tokens: o.maxTokens, ...(o.cursor !== undefined ? { cursor: o.cursor } : {}), ...(o.budget !== undefined ? { budget_ms: o.budget } : {}) },
        { lsp: o.lsp !== false },
      );
      if (o.json) json(a);
      else out(formatNavAnswer(a, 'references', Boolean(o.explain)));
    });

  coderag
    .command('diag')
    .description("a file's diagnostics (type errors, warnings) from its language server; with LINE:COL, the hover text there too (the get_diagnostics tool)")
    .argument('<file>', 'FILE or FILE:LINE:COL')
    .option('--json', "machine-readable output: get_diagnostics' answer")
    .option('--timeout <ms>', 'upper bound for the language server', intIn(1000, 120_000), 30_000)
    .action(async (target: string, o: { json?: boolean; timeout: number }) => {
      const m = /^(.+):(\d+):(\d+)$/.exec(target);
      const d = await c.workspace().tool('get_diagnostics', { file: m?.[1] ?? target, ...(m?.[2] && m[3] ? { line: Number(m[2]), col: Number(m[3]) } : {}), timeout_ms: o.timeout }, { lsp: true });
      if (o.json) json(d);
      else {
        const lines = d.diagnostics.map((x) => `${x.citation}:${x.col}  ${x.severity}  ${x.message.split('\n')[0] ?? ''}${x.code ? `  [${x.code}]` : ''}`);
        out([`${d.file}: ${d.diagnostics.length} diagnostic${d.diagnostics.length === 1 ? '' : 's'} from ${d.server}`, ...lines, ...(d.hover ? ['', 'hover:', d.hover] : [])].join('\n'));
      }
    });
}
