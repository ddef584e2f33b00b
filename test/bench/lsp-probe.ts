/**
 * Language-server probe: starts typescript-language-server on rxjs's sources and pyright on
 * Django (both real servers over stdio, through src/node/lsp), then prints time to the first
 * answer, time to "ready", and p50/p95 of 50 definition and 50 references requests at real
 * identifier positions (call sites found by the tree-sitter parser, spread over the corpus).
 *
 *   npx esbuild test/bench/lsp-probe.ts --bundle --platform=node --format=cjs \
 *     --outfile=.bench/lsp-probe.js --log-level=warning && node .bench/lsp-probe.js [ts|py]...
 *
 * Corpora: node_modules/rxjs/src (rxjs 7.8.2, a devDependency) and
 * /usr/lib/python3/dist-packages/django (Debian's python3-django).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { LanguageServers, LspAnswer, SourcePosition } from '../../src/core/intel/lsp';
import { languageForPath } from '../../src/core/parse/languages';
import { createCodeParser, type CodeParser } from '../../src/core/parse/parser';
import type { Logger } from '../../src/core/ports';
import { createLanguageServers, defaultServerSpecs } from '../../src/node/lsp';

const REQUESTS = 50;
const CALL = { timeoutMs: 60_000 };

interface Corpus {
  key: string;
  server: string;
  root: string;
  ext: string;
  skip: (rel: string) => boolean;
}

const CORPORA: Corpus[] = [
  {
    key: 'ts',
    server: 'typescript-language-server',
    root: path.resolve('node_modules/rxjs/src'),
    ext: '.ts',
    skip: (rel) => rel.endsWith('.d.ts'),
  },
  {
    key: 'py',
    server: 'pyright',
    root: '/usr/lib/python3/dist-packages/django',
    ext: '.py',
    skip: (rel) => rel.includes('/migrations/') || rel.startsWith('conf/app_template') || rel.startsWith('conf/project_template'),
  },
];

function walk(dir: string, ext: string, out: string[]): void {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory() && e.name !== '__pycache__' && !e.name.startsWith('.')) walk(p, ext, out);
    else if (e.isFile() && p.endsWith(ext)) out.push(p);
  }
}

/**
 * Call sites, one per file, from files visited in an order spread evenly over the sorted
 * corpus (every k-th file, then the ones in between): the first `count` for definitions, the
 * next `count` for references.
 */
function callSites(parser: CodeParser, c: Corpus, count: number): [SourcePosition[], SourcePosition[]] {
  const files: string[] = [];
  walk(c.root, c.ext, files);
  const rels = files
    .map((f) => path.relative(c.root, f).split(path.sep).join('/'))
    .filter((r) => !c.skip(r))
    .sort();
  const step = Math.max(1, Math.floor(rels.length / count));
  const order: string[] = [];
  for (let phase = 0; phase < step; phase++) for (let i = phase; i < rels.length; i += step) order.push(rels[i]!);
  const out: SourcePosition[] = [];
  for (const rel of order) {
    if (out.length === 2 * count) break;
    const language = languageForPath(rel);
    if (!language) continue;
    const parsed = parser.parse(rel, language, fs.readFileSync(path.join(c.root, rel), 'utf8'));
    // A call from the middle of the file: past the imports, a name the server must resolve.
    const calls = parsed.refs.filter((r) => r.kind === 'call' && r.name.length > 2);
    const ref = calls[Math.floor(calls.length / 2)];
    if (ref) out.push({ path: rel, line: ref.line, col: ref.col });
  }
  return [out.slice(0, count), out.slice(count)];
}

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function summary(label: string, answers: LspAnswer<unknown[]>[]): string {
  const ok = answers.filter((a) => a.ok);
  const ms = ok.map((a) => a.ms).sort((a, b) => a - b);
  const nonEmpty = ok.filter((a) => a.ok && a.value.length > 0).length;
  const failures = new Map<string, number>();
  for (const a of answers) if (!a.ok) failures.set(a.failure, (failures.get(a.failure) ?? 0) + 1);
  const failed = [...failures].map(([k, n]) => `${k} ${n}`).join(', ') || 'none';
  const results = ok.reduce((n, a) => n + (a.ok ? a.value.length : 0), 0);
  return (
    `  ${label.padEnd(10)} ok ${ok.length}/${answers.length} (non-empty ${nonEmpty}, ${results} locations), failed: ${failed}; ` +
    `p50 ${percentile(ms, 50)} ms, p95 ${percentile(ms, 95)} ms, max ${ms[ms.length - 1] ?? NaN} ms`
  );
}

async function probe(parser: CodeParser, c: Corpus): Promise<void> {
  if (!fs.existsSync(c.root)) {
    console.log(`${c.server}: ${c.root} is missing, skipped`);
    return;
  }
  const [defs, refs] = callSites(parser, c, REQUESTS);
  // Found as the hosts find it; for Django (a package folder) the root puts its parent on
  // pyright's search path, so that `from django.x import y` resolves.
  const spec = defaultServerSpecs({ root: c.root }).find((s) => s.name === c.server);
  if (!spec || spec.missing) {
    console.log(`${c.server}: not installed (${spec?.missing ?? 'unknown'}), skipped`);
    return;
  }
  const warnings: string[] = [];
  const logger: Logger = { debug() {}, info() {}, warn: (m) => warnings.push(m), error: (m) => warnings.push(m) };
  const lsp: LanguageServers = createLanguageServers({ root: c.root, logger, servers: [spec], readyTimeoutMs: 120_000 });
  try {
    const t0 = performance.now();
    const first = await lsp.definition(defs[0]!, { timeoutMs: 180_000 });
    const firstMs = Math.round(performance.now() - t0);
    const state = lsp.status()[0]?.state;
    console.log(`${c.server} on ${c.root} (${defs.length} + ${refs.length} positions)`);
    console.log(`  first answer (spawn, initialize, project load, request): ${firstMs} ms, ${first.ok ? 'ok' : `${first.failure}: ${first.reason}`}; state then: ${state}`);
    const defAnswers: LspAnswer<unknown[]>[] = [];
    for (const p of defs) defAnswers.push(await lsp.definition(p, CALL));
    console.log(summary('definition', defAnswers));
    const refAnswers: LspAnswer<unknown[]>[] = [];
    for (const p of refs) refAnswers.push(await lsp.references(p, { ...CALL, includeDeclaration: true }));
    console.log(summary('references', refAnswers));
    if (warnings.length) console.log(`  warnings: ${warnings.slice(0, 3).join(' | ')}`);
  } finally {
    const t = performance.now();
    await lsp.dispose();
    console.log(`  dispose: ${Math.round(performance.now() - t)} ms`);
  }
}

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  const parser = await createCodeParser({ queriesDir: path.resolve('src/core/parse/queries') });
  for (const c of CORPORA) if (!only.length || only.includes(c.key)) await probe(parser, c);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
