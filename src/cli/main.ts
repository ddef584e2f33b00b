/**
 * The `vlt` command line: the CLI host's one wiring file. It builds the engine's ports
 * (Node file system, stderr logger, progress), runs one command, prints results to stdout
 * and maps errors to exit codes: 0 success, 1 failure, 2 usage error.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import * as path from 'node:path';
import { Engine, type SearchOutput, type StatusReport } from '../core/engine';
import type { LanguageServers } from '../core/intel/lsp';
import { DEFAULT_MAP_TOKENS, RepoMapper } from '../core/intel/repomap';
import type { NavAnswer, Navigator } from '../core/intel/navigate';
import { CtagsProvider } from '../node/ctags';
import { createLanguageServers } from '../node/lsp';
import { isVltError, VltError, toVltError } from '../core/errors';
import type { DryRunReport, IndexReport } from '../core/indexer';
import { LANGUAGES } from '../core/types';
import { nodeWorkspaceFs } from '../node/fs';
import { ProgressReporter, formatBytes, formatSeconds, stderrLogger, type LogLevel } from './progress';
import { registerMemoryCommands } from './memory-commands';
import { registerTrustCommands } from './trust-commands';
import { SOURCE_FAMILIES, type SourceFamily } from '../core/oracle/oracle';
import type { OracleExplain } from '../core/oracle/types';
import type { ToolContext } from '../core/tools/definitions';
import { decodeCursor, encodeCursor, requestFingerprint } from '../core/tools/budget';
import { openMemory } from '../node/memory';
import { createNodeOracle } from '../node/oracle';

const VERSION = '0.1.0';

interface GlobalOpts {
  workspace?: string;
  verbose?: boolean;
  quiet?: boolean;
}

function parsePositiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

function out(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

function json(value: unknown): void {
  out(JSON.stringify(value, null, 2));
}

function wiring(g: GlobalOpts) {
  const level: LogLevel = g.quiet ? 'error' : g.verbose ? 'debug' : 'info';
  const progress = new ProgressReporter(process.stderr, !g.quiet);
  const logger = stderrLogger(level, () => progress.clear());
  return { logger, progress, deps: { fs: nodeWorkspaceFs, logger } };
}

/** Opens the index for reading; if there is none yet, builds it first with progress. */
async function openForQuery(root: string, g: GlobalOpts): Promise<Engine> {
  const { logger, progress, deps } = wiring(g);
  const reader = await Engine.open(root, deps, 'read');
  if (!reader.isEmpty) return reader;
  await reader.close();
  logger.info(`no index in ${root} yet; building it first`);
  const writer = await Engine.open(root, deps, 'write');
  try {
    const report = await writer.index({ onProgress: progress.sink });
    logger.info(summarizeIndex(report));
  } catch (e) {
    await writer.close();
    throw e;
  }
  return writer;
}

function formatNavAnswer(a: NavAnswer & { next_cursor?: string; offset?: number }, what: 'definition' | 'references', explain: boolean): string {
  const lines: string[] = [];
  const head = what === 'definition' ? `definition of ${a.symbol || a.query}` : `references to ${a.symbol || a.query}`;
  const count =
    a.locations.length === 0 && a.reason
      ? `none (${a.reason.message})`
      : a.total !== undefined && a.total !== a.locations.length
        ? `${a.total} in all, ${(a.offset ?? 0) + 1}-${(a.offset ?? 0) + a.locations.length} listed`
        : `${a.locations.length}${a.truncated ? '+' : ''}`;
  lines.push(`${head}${a.ambiguous ? ' (ambiguous: every candidate listed)' : ''}: ${count}`);
  if (a.definition && what === 'references') lines.push(`  defined at ${a.definition.path}:${a.definition.line}:${a.definition.col}`);
  for (const l of a.locations) {
    const tag = `${l.provenance}${l.exact ? ', exact' : `, ${l.confidence}`}`;
    lines.push(`  ${l.path}:${l.line}:${l.col}  ${l.kind ?? ''}${l.signature ? `  ${l.signature}` : ''}  (${tag})`.replace(/ {3,}\(/, '  ('));
  }
  if (a.locations.length === 0 && a.suggestions?.length) lines.push(`  did you mean: ${a.suggestions.join(', ')}?`);
  for (const n of a.notes) if (n !== a.reason?.message) lines.push(`note: ${n}`);
  if (a.next_cursor) lines.push(`more: continue with --cursor ${a.next_cursor}`);
  if (explain) {
    lines.push('providers:');
    for (const p of a.providers) lines.push(`  ${p.provider.padEnd(6)} ${p.status.padEnd(8)} ${p.ms.toFixed(1).padStart(8)} ms  ${p.reason ?? ''}`);
  }
  return lines.join('\n');
}

function summarizeIndex(r: IndexReport): string {
  const secs = r.ms.total / 1000;
  const parts = [
    `indexed ${r.filesParsed} files (${r.filesUnchanged} unchanged, ${r.filesRemoved} removed, ${r.filesSkipped} skipped${r.filesNavigationOnly ? `, ${r.filesNavigationOnly} generated for navigation only` : ''})`,
    `${r.chunksAdded} chunks`,
  ];
  if (r.embedded || r.embeddingCacheHits) parts.push(`${r.embedded} embedded, ${r.embeddingCacheHits} from cache`);
  parts.push(`in ${secs < 10 ? `${r.ms.total.toFixed(0)} ms` : formatSeconds(secs)}`);
  return parts.join(', ');
}

function printDryRun(r: DryRunReport): void {
  out(`would index ${r.files} files (${formatBytes(r.bytes)})`);
  for (const [lang, v] of Object.entries(r.languages).sort((a, b) => b[1].files - a[1].files)) out(`  ${lang.padEnd(12)} ${String(v.files).padStart(7)} files  ${formatBytes(v.bytes)}`);
  if (r.skippedDirs.length) {
    // Grouped by reason: a Python tree has hundreds of __pycache__ folders.
    const byReason = new Map<string, typeof r.skippedDirs>();
    for (const d of r.skippedDirs) byReason.set(d.reason, [...(byReason.get(d.reason) ?? []), d]);
    out(`skipped folders (${r.skippedDirs.length}):`);
    for (const [reason, dirs] of byReason) {
      const shown = dirs.slice(0, 5).map((d) => `${d.path}/`).join(', ');
      out(`  ${reason} ${dirs.length}: ${shown}${dirs.length > 5 ? `, … ${dirs.length - 5} more` : ''}`);
    }
  }
  const skipped = Object.entries(r.skipped);
  if (skipped.length) out(`skipped files: ${skipped.map(([k, v]) => `${k} ${v}`).join(', ')}`);
  if (r.navigationOnly) out(`generated files for navigation only (definitions and references, not search): ${r.navigationOnly}`);
  out(`files in no supported language: ${r.unsupportedFiles}`);
  out(`estimated embedding tokens: ${r.estimatedEmbeddingTokens.toLocaleString('en-US')} (embeddings: ${r.embeddings})`);
}

function printStatus(s: StatusReport): void {
  out(`workspace     ${s.workspace}`);
  out(`index         ${s.index_path} (${formatBytes(s.bytes_on_disk)})`);
  out(`last update   ${s.last_update ?? 'never'}`);
  out(`files         ${s.files}`);
  out(`chunks        ${s.chunks}`);
  out(`symbols       ${s.symbols}`);
  out(`references    ${s.references}`);
  out(`vectors       ${s.vectors.enabled ? `${s.vectors.count} × ${s.vectors.dimensions ?? '?'} dims (${s.vectors.model})` : s.vectors.note}`);
  out(`languages     ${Object.entries(s.languages).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(', ') || '-'}`);
  const skipped = Object.entries(s.skipped_by_reason);
  out(`skipped       ${skipped.length ? skipped.map(([k, v]) => `${k} ${v}`).join(', ') : 'none'}`);
  out(`generated     ${s.generated.files} files, ${s.generated.navigation_only} navigation-only (definitions and references, not search) ([index] generated = "${s.generated.mode}")`);
  if (s.skipped_dirs.length) out(`skipped dirs  ${s.skipped_dirs.slice(0, 10).map((d) => `${d.path}/ (${d.reason})`).join(', ')}${s.skipped_dirs.length > 10 ? ` … ${s.skipped_dirs.length - 10} more` : ''}`);
  out(`config        ${s.config ?? 'defaults (no vlt.toml)'}`);
  out(`trust         ${trustLine(s.trust)}`);
}

function trustLine(t: StatusReport['trust']): string {
  const by = t.source === 'host' ? 'by the editor' : t.source === 'vlt-trust' ? 'by `vlt trust`' : '';
  if (t.trusted) return `trusted ${by}`.trim();
  const ignored = t.ignored.length ? `; ignored from vlt.toml: ${t.ignored.join(', ')}` : '';
  const fix = t.stale ? 'vlt.toml changed since `vlt trust`: run `vlt trust` again to allow them' : 'run `vlt trust` to allow them';
  return `not trusted${ignored}${t.ignored.length ? ` (${fix})` : ''}`;
}

function printSearch(res: SearchOutput, explain: boolean): void {
  for (const n of res.notes) out(`note: ${n}`);
  if (res.hits.length === 0) out('no results');
  res.hits.forEach((h, i) => {
    const sym = h.symbol ? `  ${h.symbol} (${h.kind})` : `  (${h.kind})`;
    out(`${String(i + 1).padStart(2)}. ${h.path}:${h.start_line}-${h.end_line}${sym}  [${h.retrievers.join(',')}]  ${h.score.toFixed(4)}`);
    for (const line of h.snippet.split('\n').slice(0, 3)) out(`      ${line.slice(0, 160)}`);
  });
  if (!explain) return;
  const e = res.explain;
  out('');
  out(`explain (${e.ms} ms) — ${e.vectors}`);
  out(`  query: identifiers=${JSON.stringify(e.analysis.identifiers)} paths=${JSON.stringify(e.analysis.paths)} terms=${e.analysis.terms.length}${e.analysis.isLong ? ' (long query)' : ''}`);
  for (const r of e.retrievers) {
    out(`  ${r.name} (${r.ms} ms)${r.skipped ? `: skipped, ${r.skipped}` : ''}`);
    for (const t of r.top) out(`    ${String(t.rank).padStart(2)}. ${t.path}:${t.line}  ${t.score}${t.why ? `  ${t.why}` : ''}`);
  }
  out('  fusion (weighted reciprocal rank, k=60):');
  for (const f of e.fusion) out(`    ${f.path}:${f.line}  ${f.score}  ${Object.entries(f.ranks).map(([k, v]) => `${k}#${v}`).join(' ')}`);
}

function parseSources(v: string): SourceFamily[] {
  const list = v.split(',').map((x) => x.trim()).filter(Boolean);
  const bad = list.filter((x) => !(SOURCE_FAMILIES as readonly string[]).includes(x));
  if (bad.length || list.length === 0) throw new InvalidArgumentError(`expected a comma-separated list of ${SOURCE_FAMILIES.join(', ')}; got ${bad.join(', ') || 'nothing'}`);
  return list as SourceFamily[];
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function formatExplain(e: OracleExplain): string {
  const lines: string[] = ['', `explain — question type ${e.analysis.type} (${e.analysis.typeReason})`];
  lines.push(`  symbols=${JSON.stringify(e.analysis.symbols)} paths=${JSON.stringify(e.analysis.paths)} terms=${JSON.stringify(e.analysis.terms)}`);
  lines.push('retrieval paths:');
  for (const r of e.runs) {
    lines.push(`  ${r.name.padEnd(10)} ${r.status.padEnd(7)} ${r.ms.toFixed(1).padStart(8)} ms  ${r.reason ?? `${r.results.length} results`}`);
    for (const x of r.results.slice(0, 8)) lines.push(`      ${x.citation}  ${x.method}  ${x.score}`);
  }
  lines.push('fusion and rerank (score = fused / best fused + features):');
  for (const x of e.ranked) {
    const ranks = Object.entries(x.ranks).map(([k, v]) => `${k}#${v}`).join(' ');
    const feats = Object.entries(x.features).map(([k, v]) => `${k}${v >= 0 ? '+' : ''}${v}`).join(' ');
    lines.push(`  ${x.score.toFixed(3)}  ${x.citation}  [${ranks}]${feats ? `  ${feats}` : ''}`);
  }
  lines.push(`evidence coverage ${e.threshold.best} (no-context below ${e.threshold.min}); weight of terms the index never mentions ${e.threshold.absent} (no-context from ${e.threshold.maxAbsent})${e.threshold.unknownSymbols.length ? `; names the index never mentions: ${e.threshold.unknownSymbols.join(', ')}` : ''}`);
  lines.push(`context: ${e.context.tokens}/${e.context.budget} tokens`);
  for (const i of e.context.items) lines.push(`  ${i.tier.padEnd(12)} ${String(i.tokens).padStart(5)}  ${i.citation}`);
  for (const d of e.context.dropped) lines.push(`  dropped      ${String(d.tokens).padStart(5)}  ${d.citation} (${d.tier})`);
  return lines.join('\n');
}

export function buildProgram(): Command {
  const program = new Command('vlt')
    .description('Vlt Oracle: codebase context for AI coding agents')
    .version(VERSION)
    .option('-C, --workspace <dir>', 'workspace root (default: current directory)')
    .option('-v, --verbose', 'debug logs on stderr')
    .option('-q, --quiet', 'only errors on stderr')
    .showHelpAfterError()
    .exitOverride();
  const globals = (): GlobalOpts => program.opts<GlobalOpts>();
  const root = (p?: string) => path.resolve(p ?? globals().workspace ?? process.cwd());

  /** `init` and `sync`: an incremental index run with progress. */
  const indexCommand = async (workspace: string, o: { json?: boolean }): Promise<void> => {
    const { progress, deps } = wiring(globals());
    const engine = await Engine.open(workspace, deps, 'write');
    try {
      // A rebuild reason was already logged once by the engine when it opened the store.
      const r = await engine.index({ onProgress: progress.sink });
      if (o.json) json(r);
      else out(summarizeIndex(r));
    } finally {
      await engine.close();
    }
  };

  const coderag = program.command('coderag').description('index and search the code of a workspace').exitOverride();

  coderag
    .command('init')
    .description('index a workspace (incremental when an index exists)')
    .argument('[path]', 'workspace root')
    .option('--dry-run', 'show what would be indexed, write nothing')
    .option('--json', 'machine-readable output')
    .action(async (p: string | undefined, o: { dryRun?: boolean; json?: boolean }) => {
      if (!o.dryRun) return indexCommand(root(p), o);
      const { progress, deps } = wiring(globals());
      const engine = await Engine.open(root(p), deps, 'read');
      try {
        const r = await engine.dryRun(progress.sink);
        if (o.json) json(r);
        else printDryRun(r);
      } finally {
        await engine.close();
      }
    });

  coderag
    .command('sync')
    .description('re-index changed files now')
    .option('--json', 'machine-readable output')
    .action((o: { json?: boolean }) => indexCommand(root(), o));

  coderag
    .command('status')
    .description('what the index holds, and what was skipped and why')
    .option('--json', 'machine-readable output')
    .action(async (o: { json?: boolean }) => {
      const { deps } = wiring(globals());
      const engine = await Engine.open(root(), deps, 'read');
      try {
        if (engine.isEmpty) throw new VltError('INDEX_MISSING', `no index in ${engine.root}; run \`vlt coderag init\``);
        const s = engine.status();
        const { readQueue } = await import('../server/queue-state');
        const q = readQueue(engine.root);
        const queue = q ? { host: q.host, pid: q.pid, ...q.queue } : null;
        if (o.json) json({ ...s, queue });
        else {
          printStatus(s);
          out(
            queue
              ? `queue: ${queue.host} (pid ${queue.pid}): ${queue.pending} pending, ${queue.uncommittedFiles} file(s) / ~${queue.uncommittedLines} line(s) not yet committed; ${queue.commits} commit(s)${queue.lastCommit ? `, last ${queue.lastCommit}` : ''}${queue.error ? `; last error ${queue.error.code}: ${queue.error.message}` : ''}`
              : 'queue: no editor or watch process is keeping this index current',
          );
        }
      } finally {
        await engine.close();
      }
    });

  coderag
    .command('watch')
    .description('keep the index current while files change: edits are indexed as they happen and committed in batches (vlt.toml [index] queue_*); Ctrl-C commits what is queued')
    .option('--json', 'one JSON line per commit on stdout')
    .action(async (o: { json?: boolean }) => {
      const { logger, progress, deps } = wiring(globals());
      const { WorkspaceServer } = await import('../server/workspace');
      const { watchWorkspace } = await import('../server/watch');
      // The queue's thresholds come from vlt.toml ([index] queue_*).
      const ws = await WorkspaceServer.open({ workspace: root(), logger, onProgress: progress.sink, deps, writer: true, hostName: 'vlt coderag watch' });
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

  coderag
    .command('search')
    .description('hybrid code search (BM25 + symbols + paths, and vectors when configured)')
    .argument('<query...>', 'what to look for: words, identifiers, or a pasted bug report')
    .option('-k, --limit <n>', 'number of results', parsePositiveInt, 10)
    .addOption(new Option('--lang <language>', 'only this language').choices([...LANGUAGES]))
    .option('--path <glob>', 'only paths matching this glob (e.g. "net/http/**")')
    .option('--json', 'machine-readable output (stable contract, see README)')
    .option('--explain', 'show each retriever and the fusion')
    .action(async (words: string[], o: { limit: number; lang?: string; path?: string; json?: boolean; explain?: boolean }) => {
      const query = words.join(' ');
      if (!query.trim()) throw new VltError('USAGE', 'the search query is empty');
      const engine = await openForQuery(root(), globals());
      try {
        const res = await engine.search(query, { k: o.limit, ...(o.lang ? { language: o.lang } : {}), ...(o.path ? { pathGlob: o.path } : {}) });
        if (o.json) {
          // The --json contract is the list of hits; what to know about them goes to stderr.
          for (const n of res.notes) wiring(globals()).logger.warn(n);
          json(o.explain ? { hits: res.hits, notes: res.notes, explain: res.explain } : res.hits);
        }
        else printSearch(res, Boolean(o.explain));
      } finally {
        await engine.close();
      }
    });

  coderag
    .command('map')
    .description('repository map: files and their most important definitions, ranked by use (PageRank), within a token budget')
    .option('--scope <dir>', 'only files under this directory (ranking still uses the whole repository)')
    .option('--tokens <n>', 'token budget of the map', parsePositiveInt, DEFAULT_MAP_TOKENS)
    .option('--focus <item>', 'rank around a file, directory, symbol or words (repeatable)', (v: string, prev: string[]) => [...prev, v], [] as string[])
    .option('--cursor <cursor>', 'continue after a previous map (its next_cursor)')
    .option('--json', 'machine-readable output')
    .action(async (o: { scope?: string; tokens: number; focus: string[]; cursor?: string; json?: boolean }) => {
      const engine = await openForQuery(root(), globals());
      try {
        // A person at a terminal asked for this many tokens: no cap (the agent tool has one).
        const res = await new RepoMapper(engine).render({
          maxTokens: o.tokens,
          allowLarge: true,
          ...(o.scope !== undefined ? { scope: o.scope } : {}),
          ...(o.focus.length ? { focus: o.focus } : {}),
          ...(o.cursor !== undefined ? { cursor: o.cursor } : {}),
        });
        if (o.json) json(res);
        else {
          out(res.text || '(no definitions to show)');
          if (res.next_cursor) wiring(globals()).logger.info(`more definitions rank below; continue with --cursor ${res.next_cursor}`);
        }
      } finally {
        await engine.close();
      }
    });

  /** Opens the index, language servers and ctags for one navigation command; closes them all. */
  /**
   * Opens the index and runs `fn` with a navigator over it. Language servers are wired only when
   * the call may use them (not with --no-lsp); ctags is wired always, but it is spawned or its
   * cached tags read only when the chain consults it (the index could not settle the name).
   */
  const withNavigator = async <T>(opts: { lsp: boolean }, fn: (nav: Navigator, engine: Engine, lsp: LanguageServers | undefined) => Promise<T>): Promise<T> => {
    const g = globals();
    const { logger } = wiring(g);
    const engine = await openForQuery(root(), g);
    const trusted = engine.config.trust.trusted;
    const lsp = opts.lsp ? createLanguageServers({ root: engine.root, logger, trusted }) : undefined;
    const tags = new CtagsProvider({
      root: engine.root,
      files: () => engine.store.listFiles().map((f) => f.path),
      generation: () => engine.store.generation,
      logger,
      trusted,
    });
    try {
      return await fn(engine.navigator({ ...(lsp ? { lsp } : {}), tags }), engine, lsp);
    } finally {
      await lsp?.dispose();
      await engine.close();
    }
  };

  const navOptions = (o: { lsp?: boolean; lspTimeout?: number }) => ({ noLsp: o.lsp === false, ...(o.lspTimeout !== undefined ? { lspTimeoutMs: o.lspTimeout } : {}) });

  coderag
    .command('def')
    .description('where a symbol is defined: language server first, then ctags, the index, search')
    .argument('<target>', 'a symbol name (Writer.Close) or FILE:LINE:COL')
    .option('--json', 'machine-readable output')
    .option('--explain', 'which providers ran, which were skipped and why, and how long each took')
    .option('--no-lsp', 'do not start language servers (the fallback chain alone)')
    .option('--lsp-timeout <ms>', 'upper bound for the language server', parsePositiveInt)
    .action(async (target: string, o: { json?: boolean; explain?: boolean; lsp?: boolean; lspTimeout?: number }) => {
      await withNavigator({ lsp: o.lsp !== false }, async (nav) => {
        const a = await nav.definition(target, navOptions(o));
        if (o.json) json(a);
        else out(formatNavAnswer(a, 'definition', Boolean(o.explain)));
      });
    });

  coderag
    .command('refs')
    .description('where a symbol is used: language server first, then the index resolving each use')
    .argument('<target>', 'a symbol name or FILE:LINE:COL')
    .option('-k, --limit <n>', 'most references listed on this page (the total counts them all)', parsePositiveInt, 200)
    .option('--cursor <cursor>', 'the next page: the cursor a previous answer printed, with the same other arguments')
    .option('--budget <ms>', 'without a language server: answer with what was found after this long, saying the list is partial', parsePositiveInt)
    .option('--json', 'machine-readable output')
    .option('--explain', 'which providers ran, which were skipped and why, and how long each took')
    .option('--no-lsp', 'do not start language servers (the fallback chain alone)')
    .option('--lsp-timeout <ms>', 'upper bound for the language server', parsePositiveInt)
    .action(async (target: string, o: { limit: number; cursor?: string; budget?: number; json?: boolean; explain?: boolean; lsp?: boolean; lspTimeout?: number }) => {
      const fingerprint = requestFingerprint([target, o.lsp !== false, o.budget ?? null, o.limit]);
      const offset = o.cursor !== undefined ? decodeCursor(o.cursor, fingerprint, Number.MAX_SAFE_INTEGER) : 0;
      await withNavigator({ lsp: o.lsp !== false }, async (nav) => {
        const a = await nav.references(target, { ...navOptions(o), limit: offset + o.limit, ...(o.budget !== undefined ? { budgetMs: o.budget } : {}) });
        const page = { ...a, locations: a.locations.slice(offset), offset };
        const more = a.total !== undefined ? a.total > offset + o.limit : a.locations.length >= offset + o.limit;
        const answer = more ? { ...page, next_cursor: encodeCursor(offset + o.limit, fingerprint) } : page;
        if (o.json) json(answer);
        else out(formatNavAnswer(answer, 'references', Boolean(o.explain)));
      });
    });

  coderag
    .command('diag')
    .description("a file's diagnostics (type errors, warnings) from its language server; with LINE:COL, the hover text there too")
    .argument('<file>', 'FILE or FILE:LINE:COL')
    .option('--json', 'machine-readable output')
    .option('--timeout <ms>', 'upper bound for the language server', parsePositiveInt, 30_000)
    .action(async (target: string, o: { json?: boolean; timeout: number }) => {
      await withNavigator({ lsp: true }, async (nav, engine, lsp) => {
        if (!lsp) throw new VltError('INTERNAL', 'diag runs without language servers');
        const m = /^(.+):(\d+):(\d+)$/.exec(target);
        const file = nav.relPath(m?.[1] ?? target);
        const st = await nodeWorkspaceFs.stat(path.join(engine.root, file)).catch(() => undefined);
        if (!st) throw new VltError('PATH_NOT_FOUND', `${file} does not exist in the workspace`);
        const d = await lsp.diagnostics(file, { timeoutMs: o.timeout });
        if (!d.ok) throw new VltError('LSP_UNAVAILABLE', `no diagnostics for ${file}: ${d.failure} (${d.reason})`);
        let hover: string | null | undefined;
        if (m?.[2] && m[3]) {
          const h = await lsp.hover({ path: file, line: Number(m[2]), col: Number(m[3]) }, { timeoutMs: o.timeout });
          hover = h.ok ? h.value : null;
        }
        if (o.json) json({ file, server: d.server, diagnostics: d.value, ...(hover !== undefined ? { hover } : {}) });
        else {
          const lines = d.value.map((x) => `${x.range.path}:${x.range.startLine}:${x.range.startCol}  ${x.severity}  ${x.message.split('\n')[0] ?? ''}${x.code ? `  [${x.code}]` : ''}`);
          out([`${file}: ${d.value.length} diagnostic${d.value.length === 1 ? '' : 's'} from ${d.server}`, ...lines, ...(hover ? ['', 'hover:', hover] : [])].join('\n'));
        }
      });
    });

  const mcp = program
    .command('mcp')
    .description("serve every agent tool (search_code, find_definition, find_references, ask_oracle, notes, threads, …) over MCP on stdin/stdout; logs go to stderr")
    .exitOverride()
    .action(async () => {
      // The global -C/--workspace is read here, so `vlt mcp --workspace DIR` and `vlt -C DIR mcp` agree.
      const { logger, progress } = wiring(globals());
      // Loaded on demand, so that other commands do not pay for initialising the MCP SDK (~5 ms).
      const { runMcpStdio } = await import('../mcp/main');
      await runMcpStdio({ workspace: root(), logger, onProgress: progress.sink });
    });

  mcp
    .command('info')
    .description('the MCP server of this workspace: HTTP address, bearer token, and configuration for Claude Code, Cursor and VS Code')
    .option('--json', 'machine-readable output')
    .action(async (o: { json?: boolean }) => {
      const { logger } = wiring(globals());
      const { mcpInfo, formatMcpInfo } = await import('../mcp/info');
      const info = await mcpInfo(root(), logger);
      if (o.json) json(info);
      else out(formatMcpInfo(info));
    });

  program
    .command('lsp')
    .description('serve the workspace to an editor over the Language Server Protocol on stdin/stdout (workspace symbols, navigation, vlt/* requests, the MCP endpoint)')
    .option('--stdio', 'talk over stdin/stdout (the default and only transport)')
    // Clients add their own arguments (vscode-languageclient: --clientProcessId=PID).
    .allowUnknownOption(true)
    .allowExcessArguments(true)
    .action(async () => {
      // The workspace comes from the client's initialize request; the LSP log goes to the client.
      const { runLspServer } = await import('../lsp/main');
      await runLspServer();
      process.exit(0);
    });

  program
    .command('serve')
    .description('serve the agent tools over MCP Streamable HTTP and the chat in a browser (bearer token, loopback only); prints {"url","chat_url",...} as one JSON line on stdout')
    .option('--mcp-port <n>', 'port of the MCP endpoint (default 7457; 0 picks a free one)', (v: string) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0 || n > 65_535) throw new InvalidArgumentError('expected a port number, 0-65535');
      return n;
    })
    .option('--host <address>', 'address to listen on (default 127.0.0.1; non-loopback needs --allow-remote)')
    .option('--allow-remote', 'permit a --host other machines can reach (anyone with the token can then read the code)')
    .option('--no-chat', 'do not serve the browser chat at /chat/ (its one-time login link is printed as chat_url)')
    .action(async (o: { mcpPort?: number; host?: string; allowRemote?: boolean; chat?: boolean }) => {
      const { logger, progress } = wiring(globals());
      const { runMcpHttp } = await import('../mcp/main');
      await runMcpHttp({
        workspace: root(),
        logger,
        onProgress: progress.sink,
        ...(o.mcpPort !== undefined ? { port: o.mcpPort } : {}),
        ...(o.host !== undefined ? { host: o.host } : {}),
        allowRemote: Boolean(o.allowRemote),
        chat: o.chat !== false,
        onListening: (l) => out(JSON.stringify({ url: l.url, token_file: l.token_file, pid: l.pid, ...(l.chat_url ? { chat_url: l.chat_url } : {}) })),
      });
    });

  program
    .command('oracle')
    .description('answer a question about the codebase: short, cited [path:line]; an extractive evidence brief without a language model')
    .argument('<question...>', 'the question, or a pasted bug report (quote it, or pass - to read it from stdin)')
    .option('--source <list>', `sources to consult, comma-separated: ${SOURCE_FAMILIES.join(',')}`, parseSources)
    .option('--explain', 'each retrieval path with its results and timing, the fusion and rerank, and the context with token counts')
    .option('--json', 'machine-readable output (the whole answer object)')
    .option('--session <id>', 'the shared conversation context to read follow-ups from and record into')
    .option('--no-llm', 'the extractive evidence brief even when a language model is configured')
    .option('--agent', 'let the language model call search and navigation tools in a loop')
    .option('--max-turns <n>', 'agent mode: most model turns', parsePositiveInt)
    .option('--tokens <n>', 'context budget in tokens (default by question type)', parsePositiveInt)
    .option('--lsp', 'ask language servers and ctags for definitions and references (slower to start)')
    .action(async (words: string[], o: { source?: SourceFamily[]; explain?: boolean; json?: boolean; session?: string; llm?: boolean; agent?: boolean; maxTurns?: number; tokens?: number; lsp?: boolean }) => {
      const g = globals();
      const { logger, progress } = wiring(g);
      const question = words.length === 1 && words[0] === '-' ? await readStdin() : words.join(' ');
      const engine = await openForQuery(root(), g);
      const trusted = engine.config.trust.trusted;
      const lsp = o.lsp ? createLanguageServers({ root: engine.root, logger, trusted }) : undefined;
      const tags = o.lsp ? new CtagsProvider({ root: engine.root, files: () => engine.store.listFiles().map((f) => f.path), generation: () => engine.store.generation, logger, trusted }) : undefined;
      const memory = openMemory(engine.root, logger);
      memory.catch(() => undefined);
      const ctx: ToolContext = { getEngine: () => Promise.resolve(engine), fs: nodeWorkspaceFs, logger, author: 'user', ...(lsp && tags ? { intel: () => ({ lsp, tags }) } : {}) };
      const oracle = createNodeOracle({ engine, logger, getMemory: () => memory, toolContext: ctx, noLlm: o.llm === false, ...(lsp && tags ? { intel: { lsp, tags } } : {}) });
      let streamed = false;
      try {
        const ans = await oracle.ask(question, {
          ...(o.source ? { sources: o.source } : {}),
          explain: Boolean(o.explain),
          ...(o.session !== undefined ? { session: o.session } : {}),
          author: 'user',
          noLlm: o.llm === false,
          agent: Boolean(o.agent),
          ...(o.maxTurns ? { maxTurns: o.maxTurns } : {}),
          ...(o.tokens ? { budgetTokens: o.tokens } : {}),
          onEvent: (e) => {
            if (e.type === 'phase') progress.status(e.message);
            else if (e.type === 'tool') logger.info(`oracle: calling ${e.name} ${e.args.slice(0, 160)}`);
            else if (e.type === 'text' && !o.json) {
              if (!streamed) progress.clear();
              streamed = true;
              process.stdout.write(e.text);
            }
          },
        });
        progress.clear();
        if (o.json) json(ans);
        else {
          // A streamed answer is already on stdout; the brief and the no-context reply are not.
          if (!streamed || ans.mode === 'extractive') out(`${streamed ? '\n\n' : ''}${ans.answer}`);
          else out('');
          if (ans.degraded) logger.warn(`oracle: ${ans.degraded}`);
          if (o.explain && ans.explain) out(formatExplain(ans.explain));
        }
      } finally {
        await lsp?.dispose();
        await (await memory.catch(() => undefined))?.close();
        await engine.close();
      }
    });

  registerMemoryCommands(program, { workspace: () => root(), logger: () => wiring(globals()).logger });
  registerTrustCommands(program, { workspace: (p) => root(p) });

  return program;
}

export async function main(argv: string[]): Promise<number> {
  // `vlt … | head` closes stdout early; that is the reader's choice, not an error.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
  const program = buildProgram();
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (e) {
    if (e instanceof CommanderError) {
      // Help and version exit 0; every other commander error is a usage error.
      return e.exitCode === 0 || e.code === 'commander.helpDisplayed' || e.code === 'commander.version' ? 0 : 2;
    }
    const err = isVltError(e) ? e : toVltError(e);
    process.stderr.write(`vlt: ${err.message}${err.code === 'INTERNAL' && process.env.VLT_DEBUG ? `\n${(e as Error).stack}` : ''}\n`);
    return err.code === 'USAGE' ? 2 : 1;
  }
}

if (require.main === module) {
  // Exit explicitly once stdout is flushed: terminated parse workers otherwise keep the process
  // around for a few seconds while their WebAssembly heaps are torn down.
  const exit = (code: number) => process.stdout.write('', () => process.exit(code));
  // Never silent: a command whose work stopped on a promise that can no longer settle lets the
  // event loop run dry, and Node would exit 0 with nothing printed.
  let settled = false;
  process.once('beforeExit', () => {
    if (settled) return;
    process.stderr.write('vlt: internal error: the command stopped without an answer (please report it with the command line)\n');
    process.exit(1);
  });
  main(process.argv.slice(2)).then((code) => {
    settled = true;
    exit(code);
  }, (e: unknown) => {
    settled = true;
    process.stderr.write(`vlt: ${String(e)}\n`);
    exit(1);
  });
}
