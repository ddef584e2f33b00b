/**
 * The CLI's human-readable output: one function per answer type, each returning the text that
 * goes to stdout (the `--json` forms print the answer objects themselves).
 */
import type { SearchOutput, StatusReport } from '../core/engine';
import type { DryRunReport } from '../core/indexer';
import type { NavAnswer } from '../core/intel/navigate';
import type { OracleExplain } from '../core/oracle/types';
import type { SearchCodeResult } from '../core/tools/definitions';
import type { LocateToolResult } from '../core/tools/locate-tool';
import { readerOf, type LanguageReader } from '../core/parse/languages';
import { LANGUAGES, type LanguageId } from '../core/types';
import { formatBytes } from './progress';
import { formatMoney } from '../core/embeddings';

export function formatNavAnswer(a: NavAnswer & { next_cursor?: string }, what: 'definition' | 'references', explain: boolean): string {
  const lines: string[] = [];
  const head = what === 'definition' ? `definition of ${a.symbol || a.query}` : `references to ${a.symbol || a.query}`;
  const count =
    a.locations.length === 0 && a.reason
      ? `none (${a.reason.message})`
      : a.total !== undefined && a.total !== a.locations.length
        ? `${a.total} in all, ${a.locations.length} on this page`
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

export function formatDryRun(r: DryRunReport): string {
  const lines: string[] = [];
  const out = (l: string) => lines.push(l);
  out(`would index ${r.files} files (${formatBytes(r.bytes)})`);
  for (const [lang, v] of Object.entries(r.languages).sort((a, b) => b[1].files - a[1].files)) out(`  ${lang.padEnd(12)} ${String(v.files).padStart(7)} files  ${formatBytes(v.bytes).padStart(9)}  ${READ_AS[readerName(lang)]}`);
  if (r.skippedDirs.length) {
    // Grouped by reason: a Python tree has hundreds of __pycache__ folders.
    const byReason = new Map<string, typeof r.skippedDirs>();
    for (const d of r.skippedDirs) byReason.set(d.reason, [...(byReason.get(d.reason) ?? []), d]);
    out(`skipped folders (${r.skippedDirs.length}):`);
    for (const [reason, dirs] of byReason) {
      // Every folder when the list was asked for; else the first five of each reason.
      const all = r.skippedFiles !== undefined;
      const shown = (all ? dirs : dirs.slice(0, 5)).map((d) => `${d.path}/`).join(', ');
      out(`  ${reason} ${dirs.length}: ${shown}${!all && dirs.length > 5 ? `, … ${dirs.length - 5} more` : ''}`);
    }
  }
  const skipped = Object.entries(r.skipped);
  if (skipped.length) out(`skipped files: ${skipped.map(([k, v]) => `${k} ${v}`).join(', ')}`);
  if (r.skippedFiles) out(formatSkippedFiles(r.skippedFiles));
  if (r.navigationOnly) out(`generated files for navigation only (definitions and references, not search): ${r.navigationOnly}`);
  out(`files in no supported language: ${r.unsupportedFiles}${unsupportedList(r.unsupportedExtensions)}`);
  const cost = r.estimatedEmbeddingCost !== undefined ? `, about ${formatMoney(r.estimatedEmbeddingCost)} at the configured price` : '';
  out(`estimated embedding tokens: ${r.estimatedEmbeddingTokens.toLocaleString('en-US')}${cost} (embeddings: ${r.embeddings})`);
  if (r.embeddingCap?.exceeded) out(`  over ${r.embeddingCap.setting} (${r.embeddingCap.tokens.toLocaleString('en-US')} tokens): a build would index text and symbols and embed nothing; raise the cap or exclude folders`);
  if (r.suggestedExcludes.length) {
    out('to index less, leave out (vlt.toml: [index] exclude = [...]):');
    for (const s of r.suggestedExcludes) out(`  ${JSON.stringify(s.glob).padEnd(34)} ${String(s.files).padStart(7)} files  ${formatBytes(s.bytes).padStart(9)}  ${s.why}`);
  }
  return lines.join('\n');
}

const READ_AS = { grammar: 'syntax tree', headings: 'headings', text: 'text (definitions by line patterns)' } as const;

function readerName(language: string): LanguageReader {
  return (LANGUAGES as readonly string[]).includes(language) ? readerOf(language as LanguageId) : 'text';
}

/** ` (.txt 80, .yaml 30, …)`: what the files no language reads are, most first. */
function unsupportedList(byExt: Record<string, number> | undefined): string {
  const top = Object.entries(byExt ?? {}).slice(0, 6);
  return top.length ? ` (${top.map(([k, v]) => `${k} ${v}`).join(', ')}${Object.keys(byExt ?? {}).length > top.length ? ', …' : ''})` : '';
}

/** One line per skipped file: `path  reason (detail)`, sorted by path. */
export function formatSkippedFiles(files: ReadonlyArray<{ path: string; reason: string; detail?: string }>): string {
  if (files.length === 0) return 'no skipped files';
  return [...files]
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map((f) => `  ${f.path}  ${f.reason}${f.detail ? ` (${f.detail})` : ''}`)
    .join('\n');
}

/** The status text; `allDirs`: every skipped folder, not the first ten. */
export function formatStatus(s: StatusReport, allDirs = false): string {
  const lines: string[] = [];
  const out = (l: string) => lines.push(l);
  out(`workspace     ${s.workspace}`);
  out(`index         ${s.index_path} (${formatBytes(s.bytes_on_disk)})`);
  out(`last update   ${s.last_update ?? 'never'}`);
  out(`files         ${s.files}`);
  out(`chunks        ${s.chunks}`);
  out(`symbols       ${s.symbols}`);
  out(`references    ${s.references}`);
  out(`vectors       ${s.vectors.enabled ? `${s.vectors.count} × ${s.vectors.dimensions ?? '?'} dims (${s.vectors.model})` : s.vectors.note}`);
  out(`languages     ${Object.entries(s.languages).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}${s.language_readers[k] === 'text' ? ' (text)' : ''}`).join(', ') || '-'}`);
  if (Object.values(s.language_readers).includes('text')) out('              (text: no grammar; definitions from line patterns, no references)');
  if (s.unsupported_files) out(`not indexed   ${s.unsupported_files} files in no supported language${unsupportedList(s.unsupported_extensions)}`);
  const skipped = Object.entries(s.skipped_by_reason);
  out(`skipped       ${skipped.length ? skipped.map(([k, v]) => `${k} ${v}`).join(', ') : 'none'}`);
  out(`generated     ${s.generated.files} files, ${s.generated.navigation_only} navigation-only (definitions and references, not search) ([index] generated = "${s.generated.mode}")`);
  if (s.go_vendor.dirs.length) out(`go vendor     ${s.go_vendor.files} Go files in ${s.go_vendor.dirs.join(', ')}, navigation-only (definitions and references, not search)`);
  const dirs = allDirs ? s.skipped_dirs : s.skipped_dirs.slice(0, 10);
  if (s.skipped_dirs.length) out(`skipped dirs  ${dirs.map((d) => `${d.path}/ (${d.reason})`).join(', ')}${s.skipped_dirs.length > dirs.length ? ` … ${s.skipped_dirs.length - dirs.length} more (--list-skipped)` : ''}`);
  out(`config        ${s.config ?? 'defaults (no vlt.toml)'}`);
  out(`trust         ${trustLine(s.trust)}`);
  return lines.join('\n');
}

function trustLine(t: StatusReport['trust']): string {
  const by = t.source === 'host' ? 'by the editor' : t.source === 'vlt-trust' ? 'by `vlt trust`' : '';
  if (t.trusted) return `trusted ${by}`.trim();
  const ignored = t.ignored.length ? `; ignored from vlt.toml: ${t.ignored.join(', ')}` : '';
  const fix = t.stale ? 'vlt.toml changed since `vlt trust`: run `vlt trust` again to allow them' : 'run `vlt trust` to allow them';
  return `not trusted${ignored}${t.ignored.length ? ` (${fix})` : ''}`;
}

/** search_code's hits as a list, with the engine's report of how they were ranked when asked for. */
export function formatSearch(res: Pick<SearchCodeResult, 'hits' | 'notes'>, explain?: SearchOutput['explain']): string {
  const lines: string[] = [];
  const out = (l: string) => lines.push(l);
  for (const n of res.notes ?? []) out(`note: ${n}`);
  if (res.hits.length === 0) out('no results');
  res.hits.forEach((h, i) => {
    const sym = h.symbol ? `  ${h.symbol} (${h.kind})` : `  (${h.kind})`;
    const found = 'first_line' in h ? '' : `  [${h.retrievers.join(',')}]  ${h.score.toFixed(4)}`;
    out(`${String(i + 1).padStart(2)}. ${h.path}:${h.start_line}-${h.end_line}${sym}${found}${h.stale_index ? '  (changed since indexed)' : ''}`);
    const text = 'first_line' in h ? h.first_line : h.snippet;
    for (const line of text.split('\n').slice(0, 3)) out(`      ${line.slice(0, 160)}`);
  });
  if (!explain) return lines.join('\n');
  const e = explain;
  out('');
  out(`explain (${e.ms} ms) — ${e.vectors}`);
  out(`  query: identifiers=${JSON.stringify(e.analysis.identifiers)} paths=${JSON.stringify(e.analysis.paths)} terms=${e.analysis.terms.length}${e.analysis.isLong ? ' (long query)' : ''}`);
  for (const r of e.retrievers) {
    out(`  ${r.name} (${r.ms} ms)${r.skipped ? `: skipped, ${r.skipped}` : ''}`);
    for (const t of r.top) out(`    ${String(t.rank).padStart(2)}. ${t.path}:${t.line}  ${t.score}${t.why ? `  ${t.why}` : ''}`);
  }
  out(`  ranking (query intent: ${e.rank.intent}): ${e.rank.stages.map((st) => `${st.stage} ${st.changed}${st.note ? ` (${st.note})` : ''}`).join(', ')}`);
  out('  final order (weighted reciprocal-rank fusion, then the ranking stages):');
  for (const f of e.fusion) out(`    ${f.path}:${f.line}  ${f.score}  ${Object.entries(f.ranks).map(([k, v]) => `${k}#${v}`).join(' ')}`);
  return lines.join('\n');
}

export function formatExplain(e: OracleExplain): string {
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
  const co = e.threshold.cooccurrence;
  const measure = co
    ? `co-occurrence ${e.threshold.best} (best chunk ${co.chunk}${co.where ? ` in ${co.where}` : ''}, best file ${co.file}; no-context below ${e.threshold.min}) of ${co.concepts.join(', ')}`
    : `evidence coverage ${e.threshold.best} (no-context below ${e.threshold.min})`;
  lines.push(`${measure}; weight of terms the index never mentions ${e.threshold.absent} (no-context from ${e.threshold.maxAbsent})${e.threshold.unknownSymbols.length ? `; names the index never mentions: ${e.threshold.unknownSymbols.join(', ')}` : ''}`);
  const t = e.threshold;
  if (t.named !== undefined) lines.push(`weight on words the code names things with ${t.named}, ${t.namedWords ?? 0} of its words (no-context below ${t.minNamed} with at most one)${t.scoped !== undefined ? `; co-occurrence in the named folder ${t.scoped}` : ''}${t.ownAbsent ? `; weight of the user's own words the index never mentions ${t.ownAbsent}` : ''}${t.ordinary?.length ? `; common words the index lacks, not counted as absent: ${t.ordinary.join(', ')}` : ''}`);
  lines.push(`decision: ${t.why ? `no relevant context: ${t.why}` : 'context found'}`);
  lines.push(`context: ${e.context.tokens}/${e.context.budget} tokens`);
  for (const i of e.context.items) lines.push(`  ${i.tier.padEnd(12)} ${String(i.tokens).padStart(5)}  ${i.citation}`);
  for (const d of e.context.dropped) lines.push(`  dropped      ${String(d.tokens).padStart(5)}  ${d.citation} (${d.tier})`);
  return lines.join('\n');
}

/** locate_files' answer as a list; with its `explain` fields when the call asked for them. */
export function formatLocate(r: LocateToolResult): string {
  if (r.files.length === 0) return '(no files)';
  const lines: string[] = [];
  r.files.forEach((f, i) => {
    lines.push(`${String(i + 1).padStart(2)}. ${f.path}${f.line !== undefined ? `:${f.line}` : ''}  (${f.score.toFixed(2)})`);
    for (const why of f.reasons) lines.push(`      ${why}`);
    if (f.channels) lines.push(`      channels: ${Object.entries(f.channels).map(([c, v]) => `${c} ${v.toFixed(2)}`).join(', ')}`);
  });
  if (r.ms !== undefined && r.timings) lines.push(`${r.ms.toFixed(0)} ms: ${Object.entries(r.timings).map(([c, v]) => `${c} ${v.toFixed(1)}`).join(', ')}`);
  return lines.join('\n');
}
