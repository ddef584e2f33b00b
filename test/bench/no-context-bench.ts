/**
 * No-context benchmark: the oracle's "no relevant context" decision on questions it was not
 * calibrated on, test/bench/oracle/no-context.json (see test/bench/oracle/README.md), over the
 * corpora of {@link NO_CONTEXT_CORPORA}: the Go standard library, Django and this repository,
 * and the sources of zod, RxJS, Python's and Rust's standard libraries (`COPIED_CORPORA`), whose
 * questions were written after the thresholds were set.
 *
 * Every question is asked once through `Oracle.ask` without a model (`noLlm: true`, as
 * `vlt oracle --no-llm --json` answers), after one warm-up ask per corpus. With `--model`, the
 * model the user configured (`[llm]` in ~/.config/vlt/config.toml or VLT_LLM_*) answers
 * instead, and its verdict "not found in the provided context" counts as no context too; the
 * result then names the model and how many no-context answers were its verdict. Per corpus:
 * - off-topic questions answered `noContext: true`, as a share of the off-topic questions
 *   (target ≥ 95%), and by category;
 * - on-topic questions answered `noContext: true`, as a share of the on-topic questions
 *   (target ≤ 3%), and by category;
 * - every question answered the wrong way, with the first files an off-topic answer cited and
 *   the decision's measures (`explain.threshold`, from a second ask with `explain`);
 * - latency p50/p95 of the timed asks.
 *
 * Wrong answers go to stderr as they come; the result is one JSON object on stdout.
 *
 * Run through `npm run bench -- nocontext` (test/bench/run.mjs), or alone from the repository root:
 *   npx esbuild test/bench/no-context-bench.ts --bundle --platform=node --format=cjs --target=node20 \
 *     --outfile=.bench/no-context-bench.cjs && node .bench/no-context-bench.cjs \
 *     [--corpus NAME] [--go-dir DIR] [--django-dir DIR] [--bench-dir DIR] [--model]
 * `VLT_BENCH_SELFTEST=1 node .bench/no-context-bench.cjs` checks the loader and the scoring instead.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '../../src/core/config';
import type { ChatModel } from '../../src/core/llm/chat';
import { createChatModel } from '../../src/core/llm/openai-chat';
import { PromptLibrary } from '../../src/core/llm/prompts';
import { Oracle } from '../../src/core/oracle/oracle';
import type { OracleAnswer, OracleExplain } from '../../src/core/oracle/types';
import { silentLogger } from '../../src/core/ports';
import { nodeWorkspaceFs } from '../../src/node/fs';
import { ask, COPIED_CORPORA, firstLine, latency, normalizePath, openCorpus, type BenchCorpus, type CorpusOptions, type Latency } from './oracle-bench';

/** The first four set the thresholds (their halves, see the README); RxJS, Python and Rust were added after, their questions written blind. */
export const NO_CONTEXT_CORPORA: readonly BenchCorpus[] = ['go', 'django', 'self', 'zod', 'rxjs', 'pystd', 'ruststd'];
export const OFF_TOPIC_CATEGORIES = ['other-product', 'other-framework', 'general-knowledge', 'near-miss'] as const;
export const ON_TOPIC_CATEGORIES = ['definition', 'references', 'conceptual', 'behavioural', 'structural'] as const;
export type QuestionKind = 'off-topic' | 'on-topic';

/** The targets the set was made for. */
export const TARGETS = { offTopicNoContext: 0.95, onTopicFalseNoContext: 0.03 } as const;

export interface NoContextQuestion {
  id: string;
  corpus: BenchCorpus;
  question: string;
  kind: QuestionKind;
  /** For off-topic questions one of {@link OFF_TOPIC_CATEGORIES}, for on-topic ones the question type. */
  category: string;
  /** How the question was checked by hand against the corpus. */
  why: string;
}

/** One question answered the wrong way. */
export interface WrongAnswer {
  id: string;
  question: string;
  category: string;
  /** The first files the answer cited (an off-topic question answered with evidence). */
  files: string[];
  /** The no-context decision's measures; absent when the explaining ask failed. */
  threshold?: OracleExplain['threshold'];
  error?: string;
}

interface Tally {
  n: number;
  noContext: number;
}

export interface NoContextCorpusResult {
  root: string;
  files: number;
  indexMs: number;
  reusedIndex: boolean;
  offTopic: Tally & { rate: number; perCategory: Record<string, Tally> };
  onTopic: Tally & { rate: number; perCategory: Record<string, Tally> };
  /** Off-topic questions answered with evidence, and on-topic ones answered "no context". */
  wrong: { offTopicWithContext: WrongAnswer[]; onTopicNoContext: WrongAnswer[] };
  errors: number;
  /** With a model: the no-context answers that were its verdict, per kind (the rest were decided before it was asked). */
  modelVerdicts?: { offTopic: number; onTopic: number };
  latency: Latency;
  met: { offTopic: boolean; onTopic: boolean };
}

export interface NoContextBenchResult {
  targets: typeof TARGETS;
  /** The model that answered (`--model`), or null: extractive, the offline decision alone. */
  model: string | null;
  questions: Record<string, { offTopic: number; onTopic: number }>;
  corpora: Partial<Record<BenchCorpus, NoContextCorpusResult>>;
  all: { offTopic: Tally & { rate: number }; onTopic: Tally & { rate: number } };
}

export interface NoContextBenchOptions extends CorpusOptions {
  corpora?: readonly BenchCorpus[];
  /** Questions file; default test/bench/oracle/no-context.json under repoRoot. */
  questionsFile?: string;
  /** Answer with this model instead of extractively. */
  chat?: ChatModel;
}

// ---------------------------------------------------------------------------------------------
// Questions and scoring
// ---------------------------------------------------------------------------------------------

export function loadNoContextQuestions(file: string): NoContextQuestion[] {
  const raw = JSON.parse(readFileSync(file, 'utf8')) as unknown;
  if (!Array.isArray(raw)) throw new Error(`${file}: expected an array of questions`);
  const seen = new Set<string>();
  return raw.map((x: unknown, i) => {
    const q = x as Partial<NoContextQuestion>;
    const where = `${file}[${i}]${typeof q.id === 'string' ? ` (${q.id})` : ''}`;
    // A malformed entry would count on the wrong side; refuse it instead.
    if (typeof q.id !== 'string' || seen.has(q.id)) throw new Error(`${where}: missing or duplicate id`);
    seen.add(q.id);
    if (!q.corpus || !NO_CONTEXT_CORPORA.includes(q.corpus)) throw new Error(`${where}: corpus must be one of ${NO_CONTEXT_CORPORA.join(', ')}`);
    if (typeof q.question !== 'string' || q.question.trim() === '') throw new Error(`${where}: empty question`);
    if (q.kind !== 'off-topic' && q.kind !== 'on-topic') throw new Error(`${where}: kind must be off-topic or on-topic`);
    const categories: readonly string[] = q.kind === 'off-topic' ? OFF_TOPIC_CATEGORIES : ON_TOPIC_CATEGORIES;
    if (typeof q.category !== 'string' || !categories.includes(q.category)) throw new Error(`${where}: a ${q.kind} category must be one of ${categories.join(', ')}`);
    if (typeof q.why !== 'string' || q.why === '') throw new Error(`${where}: why is required`);
    return q as NoContextQuestion;
  });
}

const rate = (t: Tally): number => (t.n ? t.noContext / t.n : 0);

/** Counts `noContext` answers per kind and category; an ask that failed counts as answered with context. */
export function tally(qs: readonly NoContextQuestion[], noContext: ReadonlyMap<string, boolean>): Record<QuestionKind, Tally & { perCategory: Record<string, Tally> }> {
  const out: Record<QuestionKind, Tally & { perCategory: Record<string, Tally> }> = {
    'off-topic': { n: 0, noContext: 0, perCategory: {} },
    'on-topic': { n: 0, noContext: 0, perCategory: {} },
  };
  for (const q of qs) {
    const k = out[q.kind];
    const c = (k.perCategory[q.category] ??= { n: 0, noContext: 0 });
    const nc = noContext.get(q.id) === true;
    k.n++;
    c.n++;
    if (nc) {
      k.noContext++;
      c.noContext++;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The bench
// ---------------------------------------------------------------------------------------------

export async function runNoContextBench(opts: NoContextBenchOptions): Promise<NoContextBenchResult> {
  const wanted = opts.corpora ?? NO_CONTEXT_CORPORA;
  const all = loadNoContextQuestions(opts.questionsFile ?? path.join(opts.repoRoot, 'test/bench/oracle/no-context.json'));
  const prompts = new PromptLibrary(path.join(opts.repoRoot, 'prompts'));
  const questions: NoContextBenchResult['questions'] = {};
  for (const q of all) {
    const e = (questions[q.corpus] ??= { offTopic: 0, onTopic: 0 });
    if (q.kind === 'off-topic') e.offTopic++;
    else e.onTopic++;
  }

  const corpora: NoContextBenchResult['corpora'] = {};
  const overall = { off: { n: 0, noContext: 0 }, on: { n: 0, noContext: 0 } };
  for (const name of wanted) {
    const qs = all.filter((q) => q.corpus === name);
    if (qs.length === 0) continue;
    const c = await openCorpus(name, opts);
    try {
      const oracle = new Oracle({ engine: c.engine, fs: nodeWorkspaceFs, logger: silentLogger, prompts, ...(opts.chat ? { chat: opts.chat } : {}) });
      const noLlm = !opts.chat;
      // Warm-up: the first ask loads the symbol table, grammars and the tokenizer; it is not a question.
      process.stderr.write(`[nocontext ${name}] warm-up…\n`);
      await ask(oracle, 'Where is the main entry point defined?', noLlm);

      process.stderr.write(`[nocontext ${name}] ${qs.length} questions…\n`);
      const answers = new Map<string, { ans?: OracleAnswer; error?: string }>();
      const ms: number[] = [];
      for (const q of qs) {
        // With a model the measures come from this ask: a second model call could decide otherwise.
        const r = await ask(oracle, q.question, noLlm, opts.chat ? { explain: true } : {});
        ms.push(r.ms);
        answers.set(q.id, r);
      }

      const noContext = new Map(qs.map((q) => [q.id, answers.get(q.id)?.ans?.noContext === true] as const));
      const t = tally(qs, noContext);
      const wrong: NoContextCorpusResult['wrong'] = { offTopicWithContext: [], onTopicNoContext: [] };
      let errors = 0;
      const modelVerdicts = { offTopic: 0, onTopic: 0 };
      for (const q of qs) {
        const r = answers.get(q.id)!;
        if (r.error) errors++;
        const nc = noContext.get(q.id) === true;
        if (nc && r.ans?.mode !== 'extractive') modelVerdicts[q.kind === 'off-topic' ? 'offTopic' : 'onTopic']++;
        const isWrong = q.kind === 'off-topic' ? !nc : nc;
        if (!isWrong) continue;
        // Untimed: the same question again with `explain`, for the decision's measures (with a
        // model, the timed ask already explained itself).
        const ex = opts.chat ? r : await ask(oracle, q.question, true, { explain: true });
        const files = (r.ans?.files ?? []).map((f) => normalizePath(f, c.root)).slice(0, 3);
        const w: WrongAnswer = {
          id: q.id,
          question: firstLine(q.question, 200),
          category: q.category,
          files,
          ...(ex.ans?.explain ? { threshold: ex.ans.explain.threshold } : {}),
          ...(r.error ? { error: r.error } : {}),
        };
        (q.kind === 'off-topic' ? wrong.offTopicWithContext : wrong.onTopicNoContext).push(w);
        const th = w.threshold;
        const measures = th ? `${th.why ? `${th.why}; ` : ''}covered ${th.best}, absent ${th.absent}${th.unknownSymbols.length ? `, unknown ${th.unknownSymbols.join(' ')}` : ''}` : 'no explain';
        process.stderr.write(
          `[nocontext] ${q.id} (${q.category}) "${firstLine(q.question)}": ${r.error ? `ERROR ${r.error}` : q.kind === 'off-topic' ? `answered with context (${files.join(', ') || 'no files'})` : 'answered no-context'}; ${measures}\n`,
        );
      }
      const off = t['off-topic'];
      const on = t['on-topic'];
      overall.off.n += off.n;
      overall.off.noContext += off.noContext;
      overall.on.n += on.n;
      overall.on.noContext += on.noContext;
      corpora[name] = {
        root: name === 'self' ? '(temporary copy of this repository)' : c.root,
        files: c.engine.status().files,
        indexMs: c.indexMs,
        reusedIndex: c.reused,
        offTopic: { n: off.n, noContext: off.noContext, rate: rate(off), perCategory: off.perCategory },
        onTopic: { n: on.n, noContext: on.noContext, rate: rate(on), perCategory: on.perCategory },
        wrong,
        errors,
        ...(opts.chat ? { modelVerdicts } : {}),
        latency: latency(ms),
        met: { offTopic: rate(off) >= TARGETS.offTopicNoContext, onTopic: rate(on) <= TARGETS.onTopicFalseNoContext },
      };
    } finally {
      await c.engine.close();
      c.cleanup();
    }
  }
  return {
    targets: TARGETS,
    model: opts.chat?.model ?? null,
    questions,
    corpora,
    all: { offTopic: { ...overall.off, rate: rate(overall.off) }, onTopic: { ...overall.on, rate: rate(overall.on) } },
  };
}

// ---------------------------------------------------------------------------------------------
// Self-check of the loader and the scoring (VLT_BENCH_SELFTEST=1)
// ---------------------------------------------------------------------------------------------

function check(cond: boolean, what: string): void {
  if (!cond) throw new Error(`self-check failed: ${what}`);
  process.stderr.write(`ok - ${what}\n`);
}

export function selfTest(): void {
  const dir = mkdtempSync(path.join(tmpdir(), 'vlt-nocontext-selftest-'));
  try {
    const file = path.join(dir, 'q.json');
    const entry = (over: Partial<NoContextQuestion>): NoContextQuestion => ({ id: 'a', corpus: 'go', question: 'q?', kind: 'off-topic', category: 'near-miss', why: 'rg', ...over });
    const refused = (entries: unknown[]): boolean => {
      writeFileSync(file, JSON.stringify(entries));
      try {
        loadNoContextQuestions(file);
        return false;
      } catch {
        return true;
      }
    };
    check(!refused([entry({}), entry({ id: 'b', corpus: 'django', kind: 'on-topic', category: 'definition' })]), 'a well-formed set loads');
    check(refused([entry({}), entry({})]), 'a duplicate id is refused');
    check(refused([entry({ corpus: 'rust' as BenchCorpus })]), 'an unknown corpus is refused');
    check(refused([entry({ category: 'definition' })]), 'an off-topic question needs an off-topic category');
    check(refused([entry({ kind: 'on-topic', category: 'near-miss' })]), 'an on-topic question needs a question type');
    check(refused([entry({ why: '' })]), 'why is required');
    check(!refused(JSON.parse(readFileSync(path.resolve('test/bench/oracle/no-context.json'), 'utf8')) as unknown[]), 'test/bench/oracle/no-context.json loads');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const qs: NoContextQuestion[] = [
    { id: 'o1', corpus: 'go', question: 'x', kind: 'off-topic', category: 'near-miss', why: 'rg' },
    { id: 'o2', corpus: 'go', question: 'x', kind: 'off-topic', category: 'other-product', why: 'rg' },
    { id: 'n1', corpus: 'go', question: 'x', kind: 'on-topic', category: 'definition', why: 'rg' },
    { id: 'n2', corpus: 'go', question: 'x', kind: 'on-topic', category: 'definition', why: 'rg' },
  ];
  // o2 has no answer at all (its ask failed): it counts as not no-context.
  const t = tally(qs, new Map([['o1', true], ['n1', true], ['n2', false]]));
  check(t['off-topic'].n === 2 && t['off-topic'].noContext === 1 && rate(t['off-topic']) === 0.5, 'off-topic no-context is counted over the off-topic questions');
  check(t['on-topic'].noContext === 1 && t['on-topic'].perCategory.definition?.n === 2, 'on-topic no-context is counted per category');
  check(t['off-topic'].perCategory['other-product']?.noContext === 0, 'a failed ask is not a no-context answer');
}

/** The model the user configured, for `--model`; refused with the settings to set when there is none. */
async function configuredModel(wanted: boolean): Promise<ChatModel | undefined> {
  if (!wanted) return undefined;
  const chat = createChatModel(await loadConfig(process.cwd(), process.env));
  if (!chat) throw new Error('--model needs a configured model: set [llm] in ~/.config/vlt/config.toml, or VLT_LLM_BASE_URL, VLT_LLM_MODEL and its key (see the README)');
  process.stderr.write(`[nocontext] answering with ${chat.model}\n`);
  return chat;
}

if (process.argv[1]?.endsWith('no-context-bench.cjs')) {
  const args = process.argv.slice(2);
  const arg = (name: string): string | undefined => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const corpus = arg('--corpus');
  if (corpus !== undefined && !NO_CONTEXT_CORPORA.includes(corpus as BenchCorpus)) throw new Error(`--corpus must be one of ${NO_CONTEXT_CORPORA.join(', ')}`);
  const run =
    process.env.VLT_BENCH_SELFTEST === '1'
      ? Promise.resolve(selfTest()).then(() => undefined)
      : configuredModel(args.includes('--model')).then((chat) => runNoContextBench({
          ...(chat ? { chat } : {}),
          repoRoot: path.resolve(arg('--repo') ?? process.cwd()),
          ...(arg('--go-dir') ? { goDir: arg('--go-dir') } : {}),
          ...(arg('--django-dir') ? { djangoDir: arg('--django-dir') } : {}),
          ...(arg('--bench-dir') ? { corpusDirs: Object.fromEntries(Object.keys(COPIED_CORPORA).map((c) => [c, path.join(arg('--bench-dir')!, c)])) } : {}),
          ...(corpus ? { corpora: [corpus as BenchCorpus] } : {}),
        }));
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
