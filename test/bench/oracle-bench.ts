/**
 * Oracle benchmark: answer quality and latency of `Oracle.ask` on the hand-verified question set
 * in test/bench/oracle/questions.json (see test/bench/oracle/README.md), over two corpora: the
 * Go standard library (`go`) and this repository (`self`).
 *
 * Measured, in one process:
 * - Recall@5 of cited files: |answer.files[0..5) ∩ gold| / |gold|, averaged over answerable
 *   questions, extractive mode (`noLlm: true`), per corpus, per question type and overall;
 *   no-context accuracy (no-answer questions answered `noContext: true`) and the false
 *   no-context rate (answerable questions answered `noContext: true`).
 * - The same Recall@5 for ripgrep on the same questions and the same file tree (see
 *   {@link rgRank} for exactly what it runs): the naive baseline an agent would otherwise use.
 * - Extractive latency p50/p95 over all questions after one warm-up (target p95 ≤ 1 s).
 * - With a fake OpenAI-compatible model that answers at once, citing the first `[path:line]` of
 *   its context: the oracle's time beyond the model's own (target ≤ 200 ms). Model time is what
 *   the ChatModel calls took as seen through a timing decorator, so the client's HTTP work counts
 *   as model time and the overhead figure is the oracle's own.
 * - 10 concurrent extractive asks through one engine: errors (target 0) and p95 against the
 *   single-query p95 (target ≤ 3×).
 *
 * Per-question misses go to stderr; the result is one JSON object on stdout.
 *
 * Run through `npm run bench -- oracle` (test/bench/run.mjs), or alone from the repository root:
 *   npx esbuild test/bench/oracle-bench.ts --bundle --platform=node --format=cjs --target=node20 \
 *     --outfile=.bench/oracle-bench.cjs && node .bench/oracle-bench.cjs [--corpus go|self] [--rounds N]
 * `VLT_BENCH_SELFTEST=1 node .bench/oracle-bench.cjs` checks the scoring and the ripgrep
 * baseline on a tiny fake instead.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Engine } from '../../src/core/engine';
import type { ChatModel, ChatRequest, ChatResult, ChatStreamEvent } from '../../src/core/llm/chat';
import { OpenAIChatModel } from '../../src/core/llm/openai-chat';
import { PromptLibrary } from '../../src/core/llm/prompts';
import { Oracle, type AskOptions } from '../../src/core/oracle/oracle';
import { QUESTION_TYPES, type OracleAnswer, type QuestionType } from '../../src/core/oracle/types';
import { silentLogger } from '../../src/core/ports';
import { nodeWorkspaceFs } from '../../src/node/fs';
import { startFakeOpenAI, type FakeChatRequest, type FakeChatReply } from '../helpers/fake-openai';

export type CorpusName = 'go' | 'self';
export const CORPUS_NAMES: readonly CorpusName[] = ['go', 'self'];
/** Every corpus {@link openCorpus} can open: the question set's two, and Django and the copied ones for the no-context set. */
export type BenchCorpus = CorpusName | 'django' | CopiedCorpus;

/**
 * Corpora copied from sources this machine has installed, indexed once under `.bench/<name>` and
 * reused: no threshold was set on them; their no-context questions were written after.
 */
export const COPIED_CORPORA = {
  /** zod's TypeScript sources, as its npm package ships them. */
  zod: { src: (repoRoot: string) => path.join(repoRoot, 'node_modules', 'zod', 'src'), prune: [] as string[] },
  /** RxJS's TypeScript sources, as its npm package ships them. */
  rxjs: { src: (repoRoot: string) => path.join(repoRoot, 'node_modules', 'rxjs', 'src'), prune: [] as string[] },
  /** Python's standard library (Debian's python3), without its test suite, IDLE and lib2to3. */
  pystd: { src: () => pythonStdlib(), prune: ['test', 'idlelib', 'lib2to3', 'site-packages', 'dist-packages', 'lib-dynload', '__pycache__', 'tests'] },
  /** The Rust standard library's `std` crate (Debian's rust-src). */
  ruststd: { src: () => '/usr/lib/rustlib/src/rust/library/std/src', prune: [] as string[] },
} as const;
export type CopiedCorpus = keyof typeof COPIED_CORPORA;

function pythonStdlib(): string {
  const base = '/usr/lib';
  const found = existsSync(base) ? readdirSync(base).filter((d) => /^python3\.\d+$/.test(d) && existsSync(path.join(base, d, 'os.py'))).sort() : [];
  const last = found[found.length - 1];
  if (!last) throw new Error('no Python 3 standard library under /usr/lib (install python3)');
  return path.join(base, last);
}

export interface OracleQuestion {
  id: string;
  corpus: CorpusName;
  question: string;
  type: QuestionType;
  /** Files a correct answer must cite, relative to the corpus root; empty for no-answer questions. */
  gold: string[];
  noAnswer: boolean;
  /** How the gold was verified by hand. */
  why: string;
}

export interface QuestionResult {
  id: string;
  corpus: CorpusName;
  type: QuestionType;
  noAnswer: boolean;
  /** Recall@5 of the oracle's cited files; null for no-answer questions. */
  recall: number | null;
  rgRecall: number | null;
  noContext: boolean;
  mode: OracleAnswer['mode'] | 'error';
  error?: string;
  /** The first five cited files. */
  files: string[];
  rgFiles: string[];
  /** Fastest extractive run. */
  ms: number;
}

export interface Latency {
  n: number;
  p50: number;
  p95: number;
  max: number;
}

export interface CorpusResult {
  root: string;
  files: number;
  /** Time to bring the index up to date before asking (a reused index only checks for changes). */
  indexMs: number;
  reusedIndex: boolean;
  answerable: number;
  noAnswer: number;
  recallAt5: number;
  rgRecallAt5: number;
  noContextCorrect: number;
  falseNoContext: number;
  /** No-answer questions where ripgrep found no file at all (its only way to say "nothing"). */
  rgEmptyOnNoAnswer: number;
  latency: Latency;
  rgLatency: Latency;
}

export interface OracleBenchResult {
  questions: { total: number; answerable: number; noAnswer: number; perCorpus: Record<string, { answerable: number; noAnswer: number }> };
  corpora: Partial<Record<CorpusName, CorpusResult>>;
  extractive: {
    recallAt5: number;
    rgRecallAt5: number;
    perType: Record<string, { n: number; recallAt5: number; rgRecallAt5: number }>;
    /** No-answer questions answered `noContext: true`, as a fraction of no-answer questions. */
    noContextAccuracy: number;
    /** Answerable questions answered `noContext: true`, as a fraction of answerable questions. */
    falseNoContextRate: number;
    errors: number;
    rounds: number;
    latency: Latency;
    rgLatency: Latency;
    /** Median of each phase the answers report in `timings`. */
    phasesP50: Record<string, number>;
  };
  llm: {
    asked: number;
    /** Answers for which the model was called at least once. */
    modelAnswered: number;
    modes: Record<string, number>;
    degraded: number;
    errors: number;
    total: Latency;
    model: Latency;
    /** Total minus model time, over the answers that called the model. */
    overhead: Latency;
  } | null;
  concurrency: { corpus: CorpusName; concurrent: number; batches: number; asks: number; errors: number; errorSamples: string[]; latency: Latency; singleP95: number; ratioP95: number } | null;
  perQuestion: QuestionResult[];
}

/** Where the corpora come from and where their indexed copies live. */
export interface CorpusOptions {
  /** The repository root (prompts/, test/bench/oracle/, and the `self` corpus). */
  repoRoot: string;
  /** The Go tree to copy when `goDir` holds no copy yet; default /usr/share/go-1.19/src. */
  goSrc?: string;
  /** Where the indexed Go copy lives; default `<repoRoot>/.bench/go`, the copy `npm run bench` makes. */
  goDir?: string;
  /** The Django package to copy when `djangoDir` holds no copy yet; default /usr/lib/python3/dist-packages/django. */
  djangoSrc?: string;
  /**
   * Where the indexed Django copy lives: the package sits in its `django/` folder, as in the copy
   * `npm run bench` makes; default `<repoRoot>/.bench/django`.
   */
  djangoDir?: string;
  /** Where each copied corpus lives; default `<repoRoot>/.bench/<name>`. */
  corpusDirs?: Partial<Record<CopiedCorpus, string>>;
}

export interface OracleBenchOptions extends CorpusOptions {
  corpora?: readonly CorpusName[];
  /** Timed extractive rounds over every question; default 3. */
  rounds?: number;
  concurrent?: number;
  concurrencyBatches?: number;
  /** Skip the fake-model measurement. */
  noLlm?: boolean;
  /** Questions file; default test/bench/oracle/questions.json under repoRoot. */
  questionsFile?: string;
}

const ASK_TIMEOUT_MS = 60_000;
const K = 5;

// ---------------------------------------------------------------------------------------------
// Questions and scoring
// ---------------------------------------------------------------------------------------------

export function loadQuestions(file: string): OracleQuestion[] {
  const raw = JSON.parse(readFileSync(file, 'utf8')) as unknown;
  if (!Array.isArray(raw)) throw new Error(`${file}: expected an array of questions`);
  const seen = new Set<string>();
  return raw.map((x: unknown, i) => {
    const q = x as Partial<OracleQuestion>;
    const where = `${file}[${i}]${typeof q.id === 'string' ? ` (${q.id})` : ''}`;
    // A malformed entry would silently score 0 or 1; refuse it instead.
    if (typeof q.id !== 'string' || seen.has(q.id)) throw new Error(`${where}: missing or duplicate id`);
    seen.add(q.id);
    if (q.corpus !== 'go' && q.corpus !== 'self') throw new Error(`${where}: corpus must be go or self`);
    if (typeof q.question !== 'string' || q.question.trim() === '') throw new Error(`${where}: empty question`);
    if (!q.type || !QUESTION_TYPES.includes(q.type)) throw new Error(`${where}: type must be one of ${QUESTION_TYPES.join(', ')}`);
    if (!Array.isArray(q.gold) || q.gold.some((g) => typeof g !== 'string')) throw new Error(`${where}: gold must be an array of paths`);
    if (typeof q.noAnswer !== 'boolean' || q.noAnswer !== (q.gold.length === 0)) throw new Error(`${where}: noAnswer must be true exactly when gold is empty`);
    if (q.gold.length > 4) throw new Error(`${where}: at most 4 gold files`);
    if (typeof q.why !== 'string' || q.why === '') throw new Error(`${where}: why is required`);
    return q as OracleQuestion;
  });
}

/** A cited path as a corpus-relative, forward-slash path, so that `./a/b.go` and `/root/a/b.go` score as `a/b.go`. */
export function normalizePath(p: string, root?: string): string {
  let s = p.replace(/\\/g, '/');
  if (root && path.isAbsolute(s)) s = path.relative(root, s).replace(/\\/g, '/');
  return s.replace(/^(\.\/)+/, '');
}

/** Recall@k: the share of gold files among the first `k` distinct cited files. */
export function recallAtK(files: readonly string[], gold: readonly string[], k = K, root?: string): number {
  if (gold.length === 0) return 0;
  const top = new Set<string>();
  for (const f of files) {
    if (top.size >= k) break;
    top.add(normalizePath(f, root));
  }
  return gold.filter((g) => top.has(normalizePath(g))).length / gold.length;
}

export function pct(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? 0;
}

export function latency(xs: readonly number[]): Latency {
  return { n: xs.length, p50: pct(xs, 50), p95: pct(xs, 95), max: xs.length ? Math.max(...xs) : 0 };
}

const mean = (xs: readonly number[]): number => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

// ---------------------------------------------------------------------------------------------
// The ripgrep baseline
// ---------------------------------------------------------------------------------------------

/**
 * English function words and question words. Everything else in the question is searched for,
 * identifiers and paths included (split at punctuation), because that is what a person or an
 * agent typing the question into grep would do.
 */
const STOP_WORDS = new Set(
  `a an the is are was were be been being am do does did doing done what where when why how who whom whose which that this these those
  it its it's in on of to for from with without by as at and or nor not no yes if then than there here into onto inside out up down
  about over under again once should would could can will shall may might must has have had having get gets got me my we our us you
  your they them their he she his her i so such any all some each every other another same only just also too very before after
  while between both either neither doesn don isn aren wasn weren won t s d ll re ve m let lets make makes instead`.split(/\s+/),
);

/** The words the baseline searches for: identifier-like tokens of the question, stop words removed, deduplicated ignoring case. */
export function contentWords(question: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const m of question.matchAll(/\b[A-Za-z_][A-Za-z0-9_]*\b/g)) {
    const w = m[0];
    const lower = w.toLowerCase();
    if (w.length < 2 || STOP_WORDS.has(lower) || seen.has(lower)) continue;
    seen.add(lower);
    out.push(w);
  }
  return out;
}

/**
 * The baseline: `rg --count-matches -i -w -F -e W1 -e W2 … .` in the corpus root, where the Ws
 * are {@link contentWords} of the question; files ranked by their number of matches (any word,
 * case-insensitive, whole words, fixed strings), ties by path. ripgrep's own defaults apply:
 * hidden files (so `.vlt/`) and binary files are skipped; `.gitignore` rules apply only inside
 * a git repository, which neither corpus copy is.
 */
export function rgRank(dir: string, question: string): { files: string[]; ms: number; words: string[] } {
  const words = contentWords(question);
  if (words.length === 0) return { files: [], ms: 0, words };
  const args = ['--count-matches', '-i', '-w', '-F', '--no-messages', ...words.flatMap((w) => ['-e', w]), '.'];
  const t0 = performance.now();
  const r = spawnSync('rg', args, { cwd: dir, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = performance.now() - t0;
  if (r.error) throw r.error;
  // Exit status 1 is "no match"; 2 is an error (but output may still be partial and valid).
  if (r.status === 2 && !r.stdout) throw new Error(`rg failed in ${dir}: ${r.stderr}`);
  const counts: Array<{ file: string; n: number }> = [];
  for (const line of r.stdout.split('\n')) {
    const i = line.lastIndexOf(':');
    if (i <= 0) continue;
    const n = Number(line.slice(i + 1));
    if (Number.isFinite(n)) counts.push({ file: normalizePath(line.slice(0, i)), n });
  }
  counts.sort((a, b) => b.n - a.n || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  return { files: counts.map((c) => c.file), ms, words };
}

// ---------------------------------------------------------------------------------------------
// The fake model and the timing decorator
// ---------------------------------------------------------------------------------------------

/** Wraps a ChatModel and records when it was busy, so that model time can be taken out of the total. */
export class TimedChatModel implements ChatModel {
  private intervals: Array<[number, number]> = [];
  private calls = 0;

  constructor(private readonly inner: ChatModel) {}

  get model(): string {
    return this.inner.model;
  }

  async complete(request: ChatRequest): Promise<ChatResult> {
    this.calls++;
    const t0 = performance.now();
    try {
      return await this.inner.complete(request);
    } finally {
      this.intervals.push([t0, performance.now()]);
    }
  }

  async *stream(request: ChatRequest): AsyncIterable<ChatStreamEvent> {
    this.calls++;
    const it = this.inner.stream(request)[Symbol.asyncIterator]();
    let done = false;
    try {
      for (;;) {
        // Only the wait for the next event is model time; what the consumer does with an event
        // between two pulls is the oracle's.
        const t0 = performance.now();
        const r = await it.next();
        this.intervals.push([t0, performance.now()]);
        if (r.done) {
          done = true;
          return;
        }
        yield r.value;
      }
    } finally {
      if (!done) await it.return?.();
    }
  }

  /** Calls and busy time (the union of the call intervals, so parallel calls are not counted twice) since the last take. */
  take(): { calls: number; ms: number } {
    const iv = [...this.intervals].sort((a, b) => a[0] - b[0]);
    let ms = 0;
    let end = -Infinity;
    for (const [s, e] of iv) {
      if (e <= end) continue;
      ms += e - Math.max(s, end);
      end = e;
    }
    const calls = this.calls;
    this.intervals = [];
    this.calls = 0;
    return { calls, ms };
  }
}

function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p: unknown) => (typeof p === 'object' && p !== null && 'text' in p ? String((p as { text: unknown }).text) : '')).join('');
  return '';
}

/** The fake's scripted reply: at once, citing the first `[path:line]` (or `[path:a-b]`) the request's context holds. */
export function citeFirst(req: FakeChatRequest): FakeChatReply {
  // The evidence headers of the user message (`### [path:12-40] (primary)`); the system prompt's
  // own example citations are not evidence.
  for (const m of (req.messages ?? []).filter((x) => x.role === 'user')) {
    const hit = /^### \[([^\s[\]]+):(\d+)(?:-\d+)?\]/m.exec(messageText(m.content));
    if (hit) return { content: `The code that answers this is at [${hit[1]}:${hit[2]}].` };
  }
  return { content: 'The context does not show the answer.' };
}

// ---------------------------------------------------------------------------------------------
// Corpora
// ---------------------------------------------------------------------------------------------

const deps = { fs: nodeWorkspaceFs, logger: silentLogger, embeddingProvider: null } as const;

/**
 * Paths of this repository that are left out of the `self` corpus: the benchmark's own question
 * sets and benches (they hold every question and its gold, so any question would be "answered"
 * by quoting them), and oracle tests, which carry example questions of the same kind.
 */
export function excludedFromSelf(rel: string): boolean {
  const p = rel.replace(/\\/g, '/');
  if (p === 'test/bench/oracle' || p.startsWith('test/bench/oracle/') || p.startsWith('test/bench/oracle-bench') || p.startsWith('test/bench/no-context-bench')) return true;
  return p.startsWith('test/') && (/(^|\/)oracle[^/]*$/.test(p) || p.startsWith('test/core/oracle/') || p.startsWith('test/fixtures/oracle/'));
}

const SELF_PARTS = ['src', 'prompts', 'test', 'README.md', 'ARCHITECTURE.md', 'package.json'];

/** A temporary copy of this repository's sources, so that indexing never writes `.vlt/` into the checkout. */
function copySelf(repoRoot: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'vlt-oracle-self-'));
  for (const part of SELF_PARTS) {
    const from = path.join(repoRoot, part);
    if (!existsSync(from)) continue;
    cpSync(from, path.join(dir, part), {
      recursive: true,
      dereference: true,
      filter: (src) => !excludedFromSelf(path.relative(repoRoot, src)),
    });
  }
  return dir;
}

/** Copies `src` to `dest` unless `dest` exists. */
function copyOnce(src: string, dest: string, prune: readonly string[] = []): void {
  if (existsSync(dest)) return;
  if (!existsSync(src)) throw new Error(`${src} is missing: install the package that ships it (see docs/benchmarks.md)`);
  process.stderr.write(`[oracle] copying ${src} → ${dest}\n`);
  mkdirSync(path.dirname(dest), { recursive: true });
  // Pruned folder names are left out wherever they occur.
  cpSync(src, dest, { recursive: true, dereference: true, filter: (from) => !prune.includes(path.basename(from)) || from === src });
}

/**
 * Opens a corpus in write mode and brings its index up to date: the Go, Django and zod copies
 * are made once and their indexes reused, the `self` copy is made afresh (and removed by `cleanup`).
 */
export async function openCorpus(name: BenchCorpus, opts: CorpusOptions): Promise<{ engine: Engine; root: string; indexMs: number; reused: boolean; cleanup: () => void }> {
  let root: string;
  let cleanup = () => {};
  let reused = false;
  if (name === 'go') {
    root = path.resolve(opts.goDir ?? path.join(opts.repoRoot, '.bench', 'go'));
    reused = existsSync(path.join(root, '.vlt', 'index.db'));
    copyOnce(opts.goSrc ?? '/usr/share/go-1.19/src', root);
  } else if (name === 'django') {
    root = path.resolve(opts.djangoDir ?? path.join(opts.repoRoot, '.bench', 'django'));
    reused = existsSync(path.join(root, '.vlt', 'index.db'));
    copyOnce(opts.djangoSrc ?? '/usr/lib/python3/dist-packages/django', path.join(root, 'django'));
  } else if (name in COPIED_CORPORA) {
    const spec = COPIED_CORPORA[name as CopiedCorpus];
    root = path.resolve(opts.corpusDirs?.[name as CopiedCorpus] ?? path.join(opts.repoRoot, '.bench', name));
    reused = existsSync(path.join(root, '.vlt', 'index.db'));
    copyOnce(spec.src(opts.repoRoot), root, spec.prune);
  } else {
    root = copySelf(opts.repoRoot);
    const dir = root;
    cleanup = () => rmSync(dir, { recursive: true, force: true });
  }
  process.stderr.write(`[oracle ${name}] ${reused ? 'checking the index of' : 'indexing'} ${root}…\n`);
  const t0 = performance.now();
  // Write mode and an incremental index run: a reused index (the one `npm run bench` built) is
  // only checked for changes, and the engine then serves the oracle as a long-lived host would.
  const engine = await Engine.open(root, deps, 'write');
  try {
    await engine.index();
  } catch (e) {
    await engine.close();
    cleanup();
    throw e;
  }
  return { engine, root, indexMs: performance.now() - t0, reused, cleanup };
}

// ---------------------------------------------------------------------------------------------
// The bench
// ---------------------------------------------------------------------------------------------

export function firstLine(s: string, max = 90): string {
  const l = s.split('\n').find((x) => x.trim() !== '') ?? '';
  return l.length > max ? `${l.slice(0, max - 1)}…` : l;
}

/** One timed ask that never throws: an error comes back as its message. */
export async function ask(oracle: Oracle, question: string, noLlm: boolean, extra: Pick<AskOptions, 'explain'> = {}): Promise<{ ans?: OracleAnswer; error?: string; ms: number }> {
  const t0 = performance.now();
  try {
    const ans = await oracle.ask(question, { ...extra, noLlm, noLog: true, signal: AbortSignal.timeout(ASK_TIMEOUT_MS) });
    return { ans, ms: performance.now() - t0 };
  } catch (e) {
    return { error: e instanceof Error ? `${e.name}: ${e.message}` : String(e), ms: performance.now() - t0 };
  }
}

export async function runOracleBench(opts: OracleBenchOptions): Promise<OracleBenchResult> {
  const rounds = Math.max(1, opts.rounds ?? 3);
  const concurrent = opts.concurrent ?? 10;
  const batches = opts.concurrencyBatches ?? 3;
  const wanted = opts.corpora ?? CORPUS_NAMES;
  const all = loadQuestions(opts.questionsFile ?? path.join(opts.repoRoot, 'test/bench/oracle/questions.json'));
  const questions = all.filter((q) => wanted.includes(q.corpus));
  const prompts = new PromptLibrary(path.join(opts.repoRoot, 'prompts'));

  const perQuestion: QuestionResult[] = [];
  const corpora: OracleBenchResult['corpora'] = {};
  const allMs: number[] = [];
  const allRgMs: number[] = [];
  const phases: Record<string, number[]> = {};
  let errors = 0;
  let llm: OracleBenchResult['llm'] = null;
  let concurrency: OracleBenchResult['concurrency'] = null;
  // Model-path samples over both corpora; the result reports their percentiles together.
  const llmTotals: number[] = [];
  const llmModels: number[] = [];
  const llmOverheads: number[] = [];

  const fake = opts.noLlm ? undefined : await startFakeOpenAI();
  try {
    for (const name of wanted) {
      const qs = questions.filter((q) => q.corpus === name);
      if (qs.length === 0) continue;
      const c = await openCorpus(name, opts);
      try {
        const oracle = new Oracle({ engine: c.engine, fs: nodeWorkspaceFs, logger: silentLogger, prompts });

        // Warm-up: the first ask loads the symbol table, grammars and the tokenizer; it is not a question.
        process.stderr.write(`[oracle ${name}] warm-up…\n`);
        await ask(oracle, 'Where is the main entry point defined?', true);
        rgRank(c.root, 'warm up the page cache main');

        process.stderr.write(`[oracle ${name}] ${qs.length} questions × ${rounds} rounds, extractive, and ripgrep…\n`);
        const best = new Map<string, number>();
        const first = new Map<string, { ans?: OracleAnswer; error?: string }>();
        const rgFirst = new Map<string, string[]>();
        const ms: number[] = [];
        const rgMs: number[] = [];
        for (let round = 0; round < rounds; round++) {
          for (const q of qs) {
            const r = await ask(oracle, q.question, true);
            ms.push(r.ms);
            best.set(q.id, Math.min(best.get(q.id) ?? Infinity, r.ms));
            if (round === 0) {
              first.set(q.id, r);
              for (const [k, v] of Object.entries(r.ans?.timings ?? {})) (phases[k] ??= []).push(v);
            }
            const rg = rgRank(c.root, q.question);
            rgMs.push(rg.ms);
            if (round === 0) rgFirst.set(q.id, rg.files);
          }
        }

        const recalls: number[] = [];
        const rgRecalls: number[] = [];
        let noContextCorrect = 0;
        let falseNoContext = 0;
        let rgEmpty = 0;
        for (const q of qs) {
          const r = first.get(q.id)!;
          const files = (r.ans?.files ?? []).map((f) => normalizePath(f, c.root));
          const rgFiles = rgFirst.get(q.id) ?? [];
          const noContext = r.ans?.noContext ?? false;
          if (r.error) errors++;
          const res: QuestionResult = {
            id: q.id,
            corpus: q.corpus,
            type: q.type,
            noAnswer: q.noAnswer,
            recall: q.noAnswer ? null : recallAtK(files, q.gold),
            rgRecall: q.noAnswer ? null : recallAtK(rgFiles, q.gold),
            noContext,
            mode: r.ans?.mode ?? 'error',
            ...(r.error ? { error: r.error } : {}),
            files: files.slice(0, K),
            rgFiles: rgFiles.slice(0, K),
            ms: best.get(q.id) ?? 0,
          };
          perQuestion.push(res);
          const tag = `[oracle] ${q.id} (${q.type}) "${firstLine(q.question)}"`;
          if (r.error) process.stderr.write(`${tag}: ERROR ${r.error}\n`);
          if (q.noAnswer) {
            if (noContext) noContextCorrect++;
            else process.stderr.write(`${tag}: no-answer question answered with context; cited ${files.slice(0, K).join(', ') || '(nothing)'}\n`);
            if (rgFiles.length === 0) rgEmpty++;
            continue;
          }
          recalls.push(res.recall!);
          rgRecalls.push(res.rgRecall!);
          if (noContext) falseNoContext++;
          if (res.recall! < 1) {
            const missing = q.gold.filter((g) => !files.slice(0, K).includes(g));
            process.stderr.write(
              `${tag}: recall@5 ${res.recall!.toFixed(2)}${noContext ? ' (answered no-context)' : ''}; missing ${missing.join(', ')}; cited ${files.slice(0, K).join(', ') || '(nothing)'}; rg recall ${res.rgRecall!.toFixed(2)}\n`,
            );
          }
        }
        allMs.push(...ms);
        allRgMs.push(...rgMs);
        corpora[name] = {
          root: name === 'self' ? '(temporary copy of this repository)' : c.root,
          files: c.engine.status().files,
          indexMs: c.indexMs,
          reusedIndex: c.reused,
          answerable: recalls.length,
          noAnswer: qs.length - recalls.length,
          recallAt5: mean(recalls),
          rgRecallAt5: mean(rgRecalls),
          noContextCorrect,
          falseNoContext,
          rgEmptyOnNoAnswer: rgEmpty,
          latency: latency(ms),
          rgLatency: latency(rgMs),
        };

        // Concurrency: batches of `concurrent` asks at once through this one engine, on the
        // bigger corpus, each timed on its own.
        if (name === 'go' || (concurrency === null && !wanted.includes('go'))) {
          process.stderr.write(`[oracle ${name}] ${batches} batches of ${concurrent} concurrent asks…\n`);
          const times: number[] = [];
          const errs: string[] = [];
          let n = 0;
          for (let b = 0; b < batches; b++) {
            const batch = Array.from({ length: concurrent }, () => qs[n++ % qs.length]!);
            const rs = await Promise.all(batch.map((q) => ask(oracle, q.question, true)));
            for (const [i, r] of rs.entries()) {
              times.push(r.ms);
              if (r.error) errs.push(`${batch[i]!.id}: ${r.error}`);
            }
          }
          const single = pct(ms, 95);
          const lat = latency(times);
          concurrency = { corpus: name, concurrent, batches, asks: times.length, errors: errs.length, errorSamples: errs.slice(0, 5), latency: lat, singleP95: single, ratioP95: single > 0 ? lat.p95 / single : 0 };
        }

        // The model path: a fake endpoint that answers at once; the oracle's own time is the
        // total minus what the model calls took.
        if (fake) {
          process.stderr.write(`[oracle ${name}] with the fake model…\n`);
          const timed = new TimedChatModel(new OpenAIChatModel({ baseUrl: fake.baseURL, model: 'fake', maxRetries: 0 }));
          const withModel = new Oracle({ engine: c.engine, fs: nodeWorkspaceFs, logger: silentLogger, chat: timed, prompts });
          const refill = () => {
            // Every request the oracle makes gets the citing reply, however many it makes.
            fake.script.chat.length = 0;
            for (let i = 0; i < 32; i++) fake.script.chat.push(citeFirst);
          };
          refill();
          await ask(withModel, qs[0]!.question, false);
          timed.take();
          const acc = (llm ??= { asked: 0, modelAnswered: 0, modes: {}, degraded: 0, errors: 0, total: latency([]), model: latency([]), overhead: latency([]) });
          for (const q of qs) {
            refill();
            const r = await ask(withModel, q.question, false);
            const m = timed.take();
            acc.asked++;
            if (r.error) {
              acc.errors++;
              process.stderr.write(`[oracle] ${q.id} with the fake model: ERROR ${r.error}\n`);
              continue;
            }
            acc.modes[r.ans!.mode] = (acc.modes[r.ans!.mode] ?? 0) + 1;
            if (r.ans!.degraded) acc.degraded++;
            if (m.calls === 0) continue;
            acc.modelAnswered++;
            llmTotals.push(r.ms);
            llmModels.push(m.ms);
            llmOverheads.push(r.ms - m.ms);
          }
          acc.total = latency(llmTotals);
          acc.model = latency(llmModels);
          acc.overhead = latency(llmOverheads);
        }
      } finally {
        await c.engine.close();
        c.cleanup();
      }
    }
  } finally {
    await fake?.close();
  }

  const answerable = perQuestion.filter((q) => !q.noAnswer);
  const noAnswer = perQuestion.filter((q) => q.noAnswer);
  const perType: OracleBenchResult['extractive']['perType'] = {};
  for (const t of QUESTION_TYPES) {
    const qs = answerable.filter((q) => q.type === t);
    if (qs.length) perType[t] = { n: qs.length, recallAt5: mean(qs.map((q) => q.recall!)), rgRecallAt5: mean(qs.map((q) => q.rgRecall!)) };
  }
  const perCorpus: OracleBenchResult['questions']['perCorpus'] = {};
  for (const q of questions) {
    const e = (perCorpus[q.corpus] ??= { answerable: 0, noAnswer: 0 });
    if (q.noAnswer) e.noAnswer++;
    else e.answerable++;
  }
  return {
    questions: { total: questions.length, answerable: questions.filter((q) => !q.noAnswer).length, noAnswer: questions.filter((q) => q.noAnswer).length, perCorpus },
    corpora,
    extractive: {
      recallAt5: mean(answerable.map((q) => q.recall!)),
      rgRecallAt5: mean(answerable.map((q) => q.rgRecall!)),
      perType,
      noContextAccuracy: noAnswer.length ? noAnswer.filter((q) => q.noContext).length / noAnswer.length : 0,
      falseNoContextRate: answerable.length ? answerable.filter((q) => q.noContext).length / answerable.length : 0,
      errors,
      rounds,
      latency: latency(allMs),
      rgLatency: latency(allRgMs),
      phasesP50: Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, pct(v, 50)])),
    },
    llm,
    concurrency,
    perQuestion,
  };
}

// ---------------------------------------------------------------------------------------------
// Self-check of the scoring and the baseline (VLT_BENCH_SELFTEST=1)
// ---------------------------------------------------------------------------------------------

function check(cond: boolean, what: string): void {
  if (!cond) throw new Error(`self-check failed: ${what}`);
  process.stderr.write(`ok - ${what}\n`);
}

export async function selfTest(): Promise<void> {
  check(normalizePath('./net/http/server.go') === 'net/http/server.go', 'normalizePath strips ./');
  check(normalizePath('/r/net/http/fs.go', '/r') === 'net/http/fs.go', 'normalizePath relativises absolute paths');
  check(normalizePath('src\\core\\engine.ts') === 'src/core/engine.ts', 'normalizePath turns backslashes into slashes');
  check(recallAtK(['a.go', 'b.go', 'c.go'], ['a.go', 'c.go']) === 1, 'recall counts every gold file found');
  check(recallAtK(['x', 'y', 'z', 'w', 'v', 'a.go'], ['a.go']) === 0, 'recall looks at the first five files only');
  check(recallAtK(['x', 'x', 'x', 'x', 'y', 'a.go'], ['a.go']) === 1, 'recall counts distinct files (a repeated path takes one place)');
  check(recallAtK(['x', 'y', 'z', 'a.go', 'w', 'b.go'], ['a.go', 'b.go']) === 0.5, 'recall of two gold files, one in the first five');
  check(recallAtK(['./a.go'], ['a.go']) === 1, 'recall normalises cited paths');
  check(recallAtK(['a.go'], []) === 0, 'recall of a no-answer question is 0, not NaN');
  check(JSON.stringify(contentWords("Where is http.Error's caller? Where is ParseDuration defined")) === JSON.stringify(['http', 'Error', 'caller', 'ParseDuration', 'defined']), 'contentWords drops stop words and duplicates');
  check(!contentWords('0xc0000a4000 +0x3a').includes('xc0000a4000'), 'contentWords skips hex addresses');
  check(pct([5, 1, 4, 2, 3], 50) === 3 && pct([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20], 95) === 19, 'pct is nearest-rank');
  check(excludedFromSelf('test/bench/oracle/questions.json') && excludedFromSelf('test/bench/oracle-bench.ts') && excludedFromSelf('test/core/oracle.test.ts') && excludedFromSelf('test/core/oracle'), 'the self corpus leaves out the question set and oracle tests');
  check(excludedFromSelf('test/bench/no-context-bench.ts'), '… and the no-context bench');
  check(!excludedFromSelf('src/core/oracle/oracle.ts') && !excludedFromSelf('test/core/engine.test.ts') && !excludedFromSelf('test/bench/intel-bench.ts'), '… and nothing else');
  check(citeFirst({ messages: [{ role: 'system', content: 'x' }, { role: 'user', content: 'ctx\n### [net/http/server.go:1842-1900] (primary)\n### [io/io.go:83] (neighbour)' }] }).content === 'The code that answers this is at [net/http/server.go:1842].', 'the fake cites the first [path:line] of its context');

  const dir = mkdtempSync(path.join(tmpdir(), 'vlt-oracle-selftest-'));
  try {
    mkdirSync(path.join(dir, 'time'));
    mkdirSync(path.join(dir, '.vlt'));
    writeFileSync(path.join(dir, 'time/format.go'), 'func ParseDuration(s string) {}\n// ParseDuration parses a duration\n');
    writeFileSync(path.join(dir, 'time/sleep.go'), 'func Sleep(d Duration) {} // parseduration is not a word here: ParseDurations\n');
    writeFileSync(path.join(dir, 'other.go'), 'nothing to see\n');
    writeFileSync(path.join(dir, '.vlt/index.txt'), 'ParseDuration ParseDuration ParseDuration\n');
    const r = rgRank(dir, 'Where is ParseDuration defined?');
    check(JSON.stringify(r.words) === JSON.stringify(['ParseDuration', 'defined']), 'rgRank searches the content words');
    check(r.files[0] === 'time/format.go', 'rgRank ranks the file with the most matches first');
    check(r.files.includes('time/sleep.go') && !r.files.includes('other.go'), 'rgRank matches whole words case-insensitively');
    check(!r.files.some((f) => f.startsWith('.vlt')), 'rgRank skips hidden directories');
    check(rgRank(dir, 'kubernetes scheduler').files.length === 0, 'rgRank returns nothing when nothing matches');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const t = new TimedChatModel({
    model: 'm',
    complete: async () => {
      await new Promise((r) => setTimeout(r, 20));
      return { text: 'x', toolCalls: [], finishReason: 'stop' };
    },
    async *stream() {
      await new Promise((r) => setTimeout(r, 20));
      yield { type: 'text', text: 'x' };
      yield { type: 'done', result: { text: 'x', toolCalls: [], finishReason: 'stop' } };
    },
  });
  await Promise.all([t.complete({ messages: [] }), t.complete({ messages: [] })]);
  const par = t.take();
  check(par.calls === 2 && par.ms >= 18 && par.ms < 35, `TimedChatModel counts parallel calls once (${par.ms.toFixed(1)} ms)`);
  for await (const ev of t.stream({ messages: [] })) {
    if (ev.type === 'text') await new Promise((r) => setTimeout(r, 40));
  }
  const st = t.take();
  check(st.calls === 1 && st.ms >= 18 && st.ms < 35, `TimedChatModel leaves the consumer's time out of a stream (${st.ms.toFixed(1)} ms)`);
}

if (process.argv[1]?.endsWith('oracle-bench.cjs')) {
  const args = process.argv.slice(2);
  const arg = (name: string): string | undefined => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const corpus = arg('--corpus');
  if (corpus !== undefined && !CORPUS_NAMES.includes(corpus as CorpusName)) throw new Error(`--corpus must be one of ${CORPUS_NAMES.join(', ')}`);
  const run =
    process.env.VLT_BENCH_SELFTEST === '1'
      ? selfTest().then(() => undefined)
      : runOracleBench({
          repoRoot: path.resolve(arg('--repo') ?? process.cwd()),
          ...(arg('--go-dir') ? { goDir: arg('--go-dir') } : {}),
          ...(corpus ? { corpora: [corpus as CorpusName] } : {}),
          ...(arg('--rounds') ? { rounds: Number(arg('--rounds')) } : {}),
          noLlm: args.includes('--no-llm'),
        });
  run
    .then((r) => {
      if (r) process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
      process.exit(0);
    })
    .catch((e: unknown) => {
      process.stderr.write(`${String(e instanceof Error ? e.stack : e)}\n`);
      process.exit(1);
    });
}
