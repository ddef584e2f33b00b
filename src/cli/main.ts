/**
 * The `vlt` command line: the CLI host's one wiring file. It builds the engine's ports
 * (Node file system, stderr logger, progress), runs one command, prints results to stdout
 * and maps errors to exit codes: 0 success, 1 failure, 2 usage error.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import * as path from 'node:path';
import { Engine, type SearchOutput, type StatusReport } from '../core/engine';
import { isVltError, VltError, toVltError } from '../core/errors';
import type { DryRunReport, IndexReport } from '../core/indexer';
import { LANGUAGES } from '../core/types';
import { nodeWorkspaceFs } from '../node/fs';
import { ProgressReporter, formatBytes, formatSeconds, stderrLogger, type LogLevel } from './progress';

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

function summarizeIndex(r: IndexReport): string {
  const secs = r.ms.total / 1000;
  const parts = [
    `indexed ${r.filesParsed} files (${r.filesUnchanged} unchanged, ${r.filesRemoved} removed, ${r.filesSkipped} skipped)`,
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
  if (s.skipped_dirs.length) out(`skipped dirs  ${s.skipped_dirs.slice(0, 10).map((d) => `${d.path}/ (${d.reason})`).join(', ')}${s.skipped_dirs.length > 10 ? ` … ${s.skipped_dirs.length - 10} more` : ''}`);
  out(`config        ${s.config ?? 'defaults (no vlt.toml)'}`);
}

function printSearch(res: SearchOutput, explain: boolean): void {
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
        if (o.json) json(s);
        else printStatus(s);
      } finally {
        await engine.close();
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
        if (o.json) json(o.explain ? { hits: res.hits, explain: res.explain } : res.hits);
        else printSearch(res, Boolean(o.explain));
      } finally {
        await engine.close();
      }
    });

  program
    .command('mcp')
    .description('serve the agent tools (search_code, index_status) over MCP on stdin/stdout; logs go to stderr')
    .action(async () => {
      // The global -C/--workspace is read here, so `vlt mcp --workspace DIR` and `vlt -C DIR mcp` agree.
      const { logger, progress } = wiring(globals());
      // Loaded on demand, so that other commands do not pay for initialising the MCP SDK (~5 ms).
      const { runMcpStdio } = await import('../mcp/main');
      await runMcpStdio({ workspace: root(), logger, onProgress: progress.sink });
    });

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
  main(process.argv.slice(2)).then(exit, (e: unknown) => {
    process.stderr.write(`vlt: ${String(e)}\n`);
    exit(1);
  });
}
