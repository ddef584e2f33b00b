/**
 * The code-intelligence gold format, and the baseline every smarter answer must beat:
 * Universal Ctags for definitions, ctags+grep for references.
 *
 * The gold files (`gold-rxjs.json`, `gold-zod.json`, `gold-django.json`, `gold-go.json`) are written by
 * `build-gold.ts` from real language servers; `intelGoldSchema` is their one schema, shared by
 * the generator, this baseline, the benchmark and `test/quality/intel-gold.test.ts`.
 *
 * Method, as a ctags-only tool answers:
 * - Definitions: run `ctags` once over the corpus (timed), index its tags by name, read the
 *   identifier at each case's `at` from the file, and answer with the tag of that name in the
 *   same file if there is one, else the first tag in sorted-tags-file order (path, then line).
 *   Correct = same path and line as any gold entry (ctags reports the declaration's line, not
 *   its column). Precision = correct / answered; coverage = answered / total.
 * - References: ctags has none, so the baseline is a word-boundary grep for the name over the
 *   corpus files of the same language (`ctags+grep`). Recall per case = gold hits found /
 *   gold hits (same path, line and column); `referenceRecall` is the mean over cases.
 * - A second definition baseline, `grepDefinition`: the first line that declares the name by
 *   keyword (`function NAME`, `class NAME`, `def NAME`, `NAME =` ...), same file first.
 *
 * CLI (results as JSON on stdout, progress on stderr):
 *   npx esbuild test/bench/intel/ctags-baseline.ts --bundle --platform=node --format=cjs \
 *     --outfile=.bench/ctags-baseline.js && node .bench/ctags-baseline.js [GOLD.json ...]
 * Relative corpus roots resolve against the repository root (the current directory).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { VltError } from '../../../src/core/errors';

// Go adds `qualified` (the name in `pkg.Name`), `promoted` (a field or method reached through an
// embedded field) and `embedded` (a type embedded in a struct or interface).
export const DEFINITION_KINDS = ['call', 'type', 'property', 'import', 'identifier', 'decorator', 'superclass', 'qualified', 'promoted', 'embedded'] as const;
export type DefinitionKind = (typeof DEFINITION_KINDS)[number];

export const REFERENCE_KINDS = ['function', 'class', 'type', 'method', 'const'] as const;
export type ReferenceKind = (typeof REFERENCE_KINDS)[number];

const location = z.object({
  path: z.string().min(1).describe('corpus-root-relative POSIX path'),
  line: z.number().int().positive().describe('1-based line'),
  col: z.number().int().positive().describe('1-based column in UTF-16 code units'),
});

export const intelGoldSchema = z.object({
  corpus: z.string().min(1),
  root: z.string().min(1).describe('corpus root: relative to the repository root, or absolute'),
  language: z.enum(['typescript', 'python', 'go']),
  corpusVersion: z.string(),
  seed: z.number().int(),
  generator: z.object({ tool: z.string(), version: z.string(), script: z.string(), date: z.string() }),
  notes: z.array(z.string()).optional(),
  analysed: z
    .array(z.string())
    .optional()
    .describe('the corpus files the server analysed (Go: one build configuration of one module); a reference elsewhere is neither right nor wrong'),
  definitions: z.array(
    z.object({
      id: z.string().regex(/^[a-z]+-d-\d+$/),
      at: location.describe('a use of the identifier, never its declaration'),
      name: z.string().min(1),
      kind: z.enum(DEFINITION_KINDS),
      gold: z.array(location).min(1).describe('every definition the language server gives; any one counts'),
    }),
  ),
  references: z.array(
    z.object({
      id: z.string().regex(/^[a-z]+-r-\d+$/),
      name: z.string().min(1),
      kind: z.enum(REFERENCE_KINDS),
      qualified: z.string().optional().describe('the name as a query spells it: `fmt.Sprintf`, `http.Server.Serve`; one symbol in the corpus'),
      definition: location,
      gold: z.array(location).min(1).describe('every reference in the corpus, declarations excluded'),
    }),
  ),
});

export type IntelGold = z.infer<typeof intelGoldSchema>;
export type GoldLocation = z.infer<typeof location>;
export type GoldDefinitionCase = IntelGold['definitions'][number];
export type GoldReferenceCase = IntelGold['references'][number];

/** Validates parsed JSON as a gold file; a bad file is a clear `USAGE` error naming the field. */
export function parseIntelGold(json: unknown, source = 'gold file'): IntelGold {
  const r = intelGoldSchema.safeParse(json);
  if (!r.success) throw new VltError('USAGE', `${source} is not a valid intel gold file:\n${z.prettifyError(r.error)}`);
  return r.data;
}

/** Reads and validates a gold file. */
export function loadIntelGold(file: string): IntelGold {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new VltError('PATH_NOT_FOUND', `cannot read gold file ${file}`, undefined, { cause: e });
  }
  return parseIntelGold(JSON.parse(text) as unknown, file);
}

/** The corpus root of a gold file as an absolute path. */
export function goldRoot(gold: IntelGold, repoRoot: string = process.cwd()): string {
  return path.isAbsolute(gold.root) ? gold.root : path.join(repoRoot, gold.root);
}

const EXTENSIONS: Record<IntelGold['language'], string[]> = { typescript: ['.ts', '.tsx', '.mts', '.cts'], python: ['.py'], go: ['.go'] };
const CTAGS_LANGUAGE: Record<IntelGold['language'], string> = { typescript: 'TypeScript', python: 'Python', go: 'Go' };
// Identifier characters per language; `$` is legal in JavaScript names, not in Python ones.
const IDENT: Record<IntelGold['language'], RegExp> = {
  typescript: /^[\p{ID_Continue}$\u200c\u200d]+/u,
  python: /^[\p{ID_Continue}]+/u,
  go: /^[\p{L}\p{Nd}_]+/u,
};

/** Whether a reference at `p` is judged: the server analysed its file (every file when the gold does not say). */
export function judged(gold: IntelGold): (p: string) => boolean {
  if (!gold.analysed) return () => true;
  const files = new Set(gold.analysed);
  return (p) => files.has(p);
}

/** Text of one corpus file split in lines, memoised: the baseline reads each file once. */
class CorpusFiles {
  private readonly cache = new Map<string, string[]>();
  constructor(readonly root: string) {}
  lines(rel: string): string[] {
    let l = this.cache.get(rel);
    if (!l) {
      l = readFileSync(path.join(this.root, rel), 'utf8').split('\n');
      this.cache.set(rel, l);
    }
    return l;
  }
  /** The identifier starting at a 1-based line and UTF-16 column (JS strings are UTF-16). */
  identifierAt(rel: string, line: number, col: number, ident: RegExp): string | undefined {
    const text = this.lines(rel)[line - 1];
    return text === undefined ? undefined : ident.exec(text.slice(col - 1))?.[0];
  }
}

/** Corpus files of one language, root-relative POSIX paths, sorted. */
export function corpusFiles(root: string, language: IntelGold['language']): string[] {
  const exts = EXTENSIONS[language];
  const out: string[] = [];
  const walk = (dir: string, rel: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(path.join(dir, e.name), r);
      else if (e.isFile() && exts.some((x) => e.name.endsWith(x)) && !e.name.endsWith('.d.ts')) out.push(r);
    }
  };
  walk(root, '');
  return out.sort();
}

interface Tag {
  path: string;
  line: number;
  kind: string;
}

function runCtags(root: string, language: IntelGold['language']): { tags: Map<string, Tag[]>; count: number; ms: number; version: string } {
  const version = execFileSync('ctags', ['--version'], { encoding: 'utf8' }).split('\n')[0] ?? 'ctags';
  const t0 = performance.now();
  // cwd = root so that ctags prints root-relative paths, as the gold has them.
  const r = spawnSync(
    'ctags',
    ['--output-format=json', '--fields=+nKzSe', `--languages=${CTAGS_LANGUAGE[language]}`, '--sort=no', '-R', '-f', '-', '.'],
    { cwd: root, encoding: 'utf8', maxBuffer: 1 << 30 },
  );
  const ms = performance.now() - t0;
  if (r.error) throw new VltError('IO', `cannot run ctags: ${r.error.message}`, undefined, { cause: r.error });
  if (r.status !== 0) throw new VltError('IO', `ctags failed (${r.status}): ${r.stderr.slice(0, 500)}`);
  const tags = new Map<string, Tag[]>();
  let count = 0;
  for (const line of r.stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    const t = JSON.parse(line) as { _type?: string; name?: string; path?: string; line?: number; kind?: string };
    if (t._type !== 'tag' || !t.name || !t.path || !t.line) continue;
    const tag = { path: t.path.replace(/^\.\//, '').split(path.sep).join('/'), line: t.line, kind: t.kind ?? '' };
    const list = tags.get(t.name);
    if (list) list.push(tag);
    else tags.set(t.name, [tag]);
    count++;
  }
  // A sorted tags file orders equal names by path; "the first" candidate means that order.
  for (const list of tags.values()) list.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line));
  return { tags, count, ms, version };
}

/** The choice every ctags-only tool makes: a tag in the current file, else the first. */
function pick<T extends { path: string }>(candidates: readonly T[] | undefined, fromPath: string): T | undefined {
  return candidates?.find((c) => c.path === fromPath) ?? candidates?.[0];
}

function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? 0;
}

const ratio = (a: number, b: number): number => (b === 0 ? 0 : a / b);
const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Per definition kind: how many cases, answered, and answered correctly. */
export interface KindScore {
  total: number;
  answered: number;
  correct: number;
  precision: number;
  coverage: number;
}

export interface BaselineResult {
  corpus: string;
  ctagsVersion: string;
  /** Wall time of the one ctags run over the corpus. */
  ctagsIndexMs: number;
  tags: number;
  /** Correct top answers / answered cases. */
  definitionPrecision: number;
  /** Answered cases / all cases. */
  definitionCoverage: number;
  answered: number;
  total: number;
  /** Latency of one definition lookup on the built tag map (reading the name at `at` included). */
  p50Ms: number;
  p95Ms: number;
  perKind: Record<string, KindScore>;
  /** The tool behind the reference numbers: ctags has no references, so a word grep stands in. */
  referenceTool: 'ctags+grep';
  /** Mean over reference cases of (gold references found / gold references). */
  referenceRecall: number;
  /** All gold references found / all gold references. */
  referenceRecallMicro: number;
  /** Gold references among all grep hits in judged files (the declarations themselves excluded). */
  referencePrecision: number;
  referenceP50Ms: number;
  referenceP95Ms: number;
  /** Plain keyword grep for the declaring line (`def NAME`, `function NAME`, ...). */
  grepDefinition: { definitionPrecision: number; definitionCoverage: number; answered: number; p50Ms: number; p95Ms: number };
}

function declarationPattern(language: IntelGold['language'], name: string): RegExp {
  const n = escapeRegExp(name);
  if (language === 'go') {
    // `func Name(`, `func (r *T) Name(`, `type Name`, `const/var Name`, and a name alone at the
    // start of a line inside a `const (` / `var (` / `type (` block or a struct.
    return new RegExp(`^func\\s+(?:\\([^)]*\\)\\s*)?${n}\\b|^(?:type|const|var)\\s+${n}\\b|^\\s+${n}(?:\\s*,\\s*\\w+)*\\s+(?:=|[\\w*\\[(])`);
  }
  return language === 'python'
    ? new RegExp(`^\\s*(?:(?:async\\s+)?def|class)\\s+${n}\\b|^\\s*(?:self\\.)?${n}\\s*(?::[^=]*)?=[^=]`)
    : new RegExp(
        `\\b(?:function\\*?|class|interface|type|enum|const|let|var|namespace)\\s+${n}\\b|` +
          `^\\s*(?:(?:public|private|protected|static|readonly|abstract|async|override|get|set|declare)\\s+)*#?${n}\\s*[?!]?\\s*[(<:=]`,
      );
}

/**
 * Scores Universal Ctags (definitions) and ctags+grep (references) on a gold file. Needs
 * `ctags` on PATH and the corpus at the gold's root.
 */
export async function ctagsBaseline(gold: IntelGold, opts: { repoRoot?: string } = {}): Promise<BaselineResult> {
  const root = goldRoot(gold, opts.repoRoot);
  if (!existsSync(root)) throw new VltError('PATH_NOT_FOUND', `corpus ${gold.corpus} is not installed at ${root}`);
  const files = new CorpusFiles(root);
  const ident = IDENT[gold.language];
  const ctags = runCtags(root, gold.language);
  const sameLine = (a: { path: string; line: number }, b: { path: string; line: number }): boolean => a.path === b.path && a.line === b.line;

  const perKind: Record<string, KindScore> = {};
  const latencies: number[] = [];
  let answered = 0;
  let correct = 0;
  for (const c of gold.definitions) {
    const t0 = performance.now();
    const name = files.identifierAt(c.at.path, c.at.line, c.at.col, ident);
    const answer = name === undefined ? undefined : pick(ctags.tags.get(name), c.at.path);
    latencies.push(performance.now() - t0);
    const k = (perKind[c.kind] ??= { total: 0, answered: 0, correct: 0, precision: 0, coverage: 0 });
    k.total++;
    if (!answer) continue;
    answered++;
    k.answered++;
    if (c.gold.some((g) => sameLine(g, answer))) {
      correct++;
      k.correct++;
    }
  }
  for (const k of Object.values(perKind)) {
    k.precision = ratio(k.correct, k.answered);
    k.coverage = ratio(k.answered, k.total);
  }

  // Both grep baselines scan the same files; reading them all once first keeps the timings
  // about matching, as they would be for a grep tool with a warm page cache.
  const paths = corpusFiles(root, gold.language);
  for (const p of paths) files.lines(p);

  const grepDef = { answered: 0, correct: 0, latencies: [] as number[] };
  for (const c of gold.definitions) {
    const t0 = performance.now();
    const name = files.identifierAt(c.at.path, c.at.line, c.at.col, ident);
    let answer: { path: string; line: number } | undefined;
    if (name !== undefined) {
      const re = declarationPattern(gold.language, name);
      const hits: Array<{ path: string; line: number }> = [];
      for (const p of paths) {
        const lines = files.lines(p);
        for (let i = 0; i < lines.length; i++) if (re.test(lines[i]!)) hits.push({ path: p, line: i + 1 });
      }
      answer = pick(hits, c.at.path);
    }
    grepDef.latencies.push(performance.now() - t0);
    if (!answer) continue;
    grepDef.answered++;
    if (c.gold.some((g) => sameLine(g, answer))) grepDef.correct++;
  }

  const isJudged = judged(gold);
  let recallSum = 0;
  let goldTotal = 0;
  let goldFound = 0;
  let hitsTotal = 0;
  let hitsInGold = 0;
  const refLatencies: number[] = [];
  for (const c of gold.references) {
    const t0 = performance.now();
    // The identifier boundary is the language's, not \b: `$` is part of a TypeScript name.
    const re = new RegExp(`(?<![\\p{ID_Continue}$])${escapeRegExp(c.name)}(?![\\p{ID_Continue}$])`, 'gu');
    const hits = new Set<string>();
    for (const p of paths) {
      const lines = files.lines(p);
      for (let i = 0; i < lines.length; i++) {
        const text = lines[i]!;
        if (!text.includes(c.name)) continue;
        re.lastIndex = 0;
        for (let m = re.exec(text); m; m = re.exec(text)) hits.add(`${p}:${i + 1}:${m.index + 1}`);
      }
    }
    refLatencies.push(performance.now() - t0);
    hits.delete(`${c.definition.path}:${c.definition.line}:${c.definition.col}`);
    const found = c.gold.filter((g) => hits.has(`${g.path}:${g.line}:${g.col}`)).length;
    recallSum += ratio(found, c.gold.length);
    goldTotal += c.gold.length;
    goldFound += found;
    for (const h of hits) if (isJudged(h.slice(0, h.indexOf(':')))) hitsTotal++;
    hitsInGold += found;
  }

  return {
    corpus: gold.corpus,
    ctagsVersion: ctags.version,
    ctagsIndexMs: ctags.ms,
    tags: ctags.count,
    definitionPrecision: ratio(correct, answered),
    definitionCoverage: ratio(answered, gold.definitions.length),
    answered,
    total: gold.definitions.length,
    p50Ms: percentile(latencies, 50),
    p95Ms: percentile(latencies, 95),
    perKind,
    referenceTool: 'ctags+grep',
    referenceRecall: ratio(recallSum, gold.references.length),
    referenceRecallMicro: ratio(goldFound, goldTotal),
    referencePrecision: ratio(hitsInGold, hitsTotal),
    referenceP50Ms: percentile(refLatencies, 50),
    referenceP95Ms: percentile(refLatencies, 95),
    grepDefinition: {
      definitionPrecision: ratio(grepDef.correct, grepDef.answered),
      definitionCoverage: ratio(grepDef.answered, gold.definitions.length),
      answered: grepDef.answered,
      p50Ms: percentile(grepDef.latencies, 50),
      p95Ms: percentile(grepDef.latencies, 95),
    },
  };
}

async function main(argv: string[]): Promise<void> {
  const here = 'test/bench/intel';
  const goldFiles = argv.length > 0 ? argv : ['rxjs', 'zod', 'django', 'go'].map((c) => path.join(here, `gold-${c}.json`));
  const results: BaselineResult[] = [];
  for (const file of goldFiles) {
    const gold = loadIntelGold(file);
    if (!existsSync(goldRoot(gold))) {
      process.stderr.write(`skip ${gold.corpus}: corpus not installed at ${goldRoot(gold)}\n`);
      continue;
    }
    process.stderr.write(`ctags baseline on ${gold.corpus}…\n`);
    results.push(await ctagsBaseline(gold));
  }
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
}

// Run as a CLI only when this file is the entry point (bundled as ctags-baseline.js or run
// directly), never when the benchmark or a test imports it.
if (/ctags-baseline\.(?:c?js|ts)$/.test(process.argv[1] ?? '')) {
  main(process.argv.slice(2)).catch((e: unknown) => {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  });
}
