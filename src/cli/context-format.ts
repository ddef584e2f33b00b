/**
 * Text answers of the Context Oracle's commands (`vlt ctx`, `vlt routes`, `vlt lint`); `vlt why`
 * renders with core/context/impact.ts. `--json` prints the core's values as they are.
 */
import type { ContextBundle, Route } from '../core/context/model';
import type { LintReport } from '../core/context/rules';

function clip(s: string, n: number): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
}

function focusLines(b: ContextBundle): string[] {
  return b.focus_nodes.map((f) => {
    const act = f.activity ? ` · ${f.activity.level}, ${f.activity.commits_30d} commits in 30 days` : '';
    return `${f.ref_id} (${f.kind})${act}${f.summary ? ` — ${clip(f.summary, 120)}` : ''}`;
  });
}

/** A bundle as Markdown: for pasting into a prompt or a pull request, and the terminal's view. */
export function formatBundleMarkdown(b: ContextBundle): string {
  const lines: string[] = [`# Context: ${b.focus_nodes.map((f) => f.ref_id).join(', ')}`, ''];
  for (const l of focusLines(b)) lines.push(`- ${l}`);
  for (const f of b.focus_nodes) for (const link of f.links ?? []) lines.push(`  - [${link.label}](${link.url})`);
  if (b.warning) lines.push('', `> ${b.warning}`);
  lines.push('', `## Graph (${b.graph.nodes.length} nodes, ${b.graph.edges.length} edges)`, '');
  const focusIds = new Set(b.focus_nodes.map((f) => f.ref_id));
  for (const e of b.graph.edges) {
    if (!focusIds.has(e.src) && !focusIds.has(e.dst)) continue;
    lines.push(`- \`${e.src}\` ${e.kind} \`${e.dst}\``);
  }
  const others = b.graph.edges.filter((e) => !focusIds.has(e.src) && !focusIds.has(e.dst)).length;
  if (others) lines.push(`- and ${others} edges between the other nodes (--json lists them)`);
  if (b.code_symbols.length) {
    lines.push('', '## Code', '');
    for (const s of b.code_symbols) {
      const ann = s.annotations ? ` (${Object.entries(s.annotations).map(([k, v]) => `${k}=${v}`).join(', ')})` : '';
      lines.push(`- ${s.file_path}:${s.line_start}-${s.line_end} ${s.kind} \`${s.symbol_name}\`${ann}`);
    }
  }
  if (b.text_chunks.length) {
    lines.push('', '## Docs', '');
    for (const c of b.text_chunks) lines.push(`### ${c.heading} (${c.section}; ${c.doc_path}:${c.line})`, '', c.content, '');
  }
  if (b.sync_status.stale_docs.length) {
    lines.push('', '## Stale docs', '');
    for (const s of b.sync_status.stale_docs) lines.push(`- ${s.doc_path} (last changed ${s.doc_changed.slice(0, 10)}) describes ${s.ref_id}, changed ${s.code_changed.slice(0, 10)} in ${s.code_file}`);
  }
  if (b.constraints.length) {
    lines.push('', '## Constraints', '');
    for (const c of b.constraints) lines.push(`- ${c.rule} (${c.type}): ${c.description}`);
  }
  if (b.routes.length) {
    lines.push('', '## Routes', '');
    for (const r of b.routes) lines.push(`- ${r.method} ${r.path} → ${r.handler} (${r.file}:${r.line}, ${r.framework})`);
  }
  if (b.tests) {
    lines.push('', '## Tests', '', `${b.tests.framework ?? 'no framework found'}: ${b.tests.test_files.length} test files, ${b.tests.test_count} tests, coverage ${b.tests.coverage_estimate}`);
    for (const t of b.tests.test_files.slice(0, 20)) lines.push(`- ${t}`);
    if (b.tests.test_files.length > 20) lines.push(`- and ${b.tests.test_files.length - 20} more`);
  }
  lines.push('', `Index updated ${b.sync_status.last_reindex ?? 'never'}; history: ${b.sync_status.history}.`);
  return lines.join('\n').replace(/\n{3,}/g, '\n\n');
}

export function formatRoutes(routes: readonly Route[]): string {
  if (routes.length === 0) return 'no routes found';
  // A loop, not Math.max(...list): a spread of 100,000 arguments overflows the stack.
  const w = Math.min(12, routes.reduce((m, r) => Math.max(m, r.method.length), 0));
  const p = Math.min(50, routes.reduce((m, r) => Math.max(m, r.path.length), 0));
  return routes.map((r) => `${r.method.padEnd(w)}  ${r.path.padEnd(p)}  ${r.handler}  ${r.file}:${r.line}  [${r.framework}]`).join('\n');
}

export function formatLint(r: LintReport, format: 'rich' | 'porcelain'): string {
  if (format === 'porcelain') return r.violations.map((v) => [v.severity, v.rule, v.file ? `${v.file}:${v.line ?? 1}` : v.ref_id, v.message].join('\t')).join('\n');
  const lines = r.violations.map((v) => `${v.severity === 'error' ? '✗ error' : '⚠ warn '}  ${v.rule}: ${v.message}${v.file ? ` (${v.file}:${v.line ?? 1})` : ''}`);
  lines.push(`${r.rules} rule${r.rules === 1 ? '' : 's'} over ${r.components} component${r.components === 1 ? '' : 's'}: ${r.errors} error${r.errors === 1 ? '' : 's'}, ${r.warnings} warning${r.warnings === 1 ? '' : 's'}`);
  if (r.rules === 0) lines.push('no rules: declare [[architecture.component]] and [[architecture.rule]] in vlt.toml (docs/cli.md, "The Context Oracle")');
  return lines.join('\n');
}
