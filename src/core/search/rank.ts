/**
 * The ranking layer: named stages that reorder the fused candidates of a search (hybrid.ts)
 * before the cut to k. Fusion knows only ranks in each retriever's list; these stages know what
 * the chunks are: code or documentation, test or implementation, which file they share, what
 * they define, what their files are called.
 *
 *   stems        the text retriever also looks for other forms of the query's words that the
 *                index holds ("parsed" → parse, "cancellation" → cancel), at a lower weight
 *                (applied inside the text retriever, {@link stemExpansions});
 *   abbrev       and for the short forms code names things with: the common abbreviations
 *                ("buffer" → buf, "message" → msg) and the longest start of the word that the
 *                index holds ("difference" → diff, "timeout" → time), {@link abbreviationExpansions};
 *   feedback     for a sentence, the words that the best first-pass chunks share and the query
 *                lacks join it at a low weight (pseudo-relevance feedback, RM3-style): the
 *                repository's own vocabulary for what the sentence describes;
 *   intent       what kind of query it is (a bare name, a sentence, a mix), which decides how
 *                much a one-word name match counts in fusion (applied inside {@link fuse}'s weights);
 *   file-kind    implementation over tests, docs, examples and generated code, unless the query
 *                asks for them ("test", "docs", "example");
 *   definition   a chunk that defines a name the query says (`email` → the email check) over
 *                chunks that only mention it;
 *   path-words   a file or folder named with the query's words (`tree.go` for "radix tree");
 *   coherence    a file with several good chunks ranks its best one higher;
 *   diversity    a second chunk of one file must earn its slot over the next file's best.
 *
 * Each stage is a pure function of the candidates and the query, multiplies scores by factors
 * it can name, and reports how many candidates it touched, for `--explain`. A stage can be
 * switched off (benchmarks measure each one by ablation).
 */
import { normalizeSymbolName } from './symbol-name';
import type { AnalyzedQuery } from './query';
import { abbreviationsOf } from './abbreviations';
import { derivations, stem } from './stem';
import { identifierParts, tokenize } from './tokenizer';

export const RANK_STAGES = ['intent', 'stems', 'abbrev', 'feedback', 'file-kind', 'definition', 'path-words', 'coherence', 'diversity'] as const;
export type RankStage = (typeof RANK_STAGES)[number];

/**
 * Stages that are off unless asked for, because each cost NDCG@10 on the tuning half of the
 * project's quality set (docs/search-quality.md): diversity and coherence because the right
 * chunk is often a second chunk of the right file; definition and path-words because a query's
 * words name files and functions around the answer (`string.rs`, `remove`) as often as the answer;
 * feedback because its gain (+0.003) is within the noise of the set and it costs a second pass.
 */
export const STAGES_OFF_BY_DEFAULT: readonly RankStage[] = ['feedback', 'definition', 'path-words', 'coherence', 'diversity'];

/** What a query is: a name to look up, a sentence to match by meaning, or both. */
export type QueryIntent = 'symbol' | 'sentence' | 'mixed';

/** One candidate as the stages see it. */
export interface RankCandidate {
  id: number;
  score: number;
  path: string;
  language: string;
  /** The chunk's kind (`function`, `section`, `block`, …). */
  kind: string;
  /** The chunk's main definition (qualified), if any. */
  symbol: string | undefined;
  /** The definition a retriever matched inside the chunk, if any. */
  matchedSymbol: string | undefined;
}

export interface StageTrace {
  stage: RankStage;
  /** Candidates whose score the stage changed. */
  changed: number;
  note?: string;
}

/** Ranking factors; one place, so that the ablation in docs/search-quality.md names what it measured. */
export const RANK = {
  /** A query of this many tokens or more, with no code-like token, is a sentence. */
  sentenceTokens: 5,
  /**
   * Sentence queries: what a symbol hit counts in fusion, whether it matched one word or a join of
   * words (rank flattened). Zero: a sentence's words name the things it talks about ("remove
   * duplicates of a vector" is not `remove`, "the linked list" not `LinkedList`), and on the
   * quality set any weight above zero cost NDCG@10; the text retriever still scores those names.
   */
  sentenceWordMatch: 0,
  sentenceNameMatch: 0,
  /** Mixed queries: a one-word symbol hit (rank flattened). */
  mixedWordMatch: 0.3,
  test: 0.55,
  docs: 0.55,
  example: 0.7,
  generated: 0.6,
  /** A declaration file (`.mli`, `.pyi`, `.d.ts`): the implementation beside it is usually the answer. */
  declaration: 0.7,
  /** The chunk defines a name equal to a query word or a join of adjacent words. */
  definesName: 1.35,
  /** The chunk's definition has a query word among its sub-words. */
  definesPart: 1.12,
  /** Per query word in the file's name or folder; capped. */
  pathWord: 0.12,
  pathWordMax: 1.3,
  /** Sentences: the text retriever's field weights (the default is name 4, path 1.5, sig 2, body 1). */
  sentenceNameBoost: 1,
  sentencePathBoost: 1,
  sentenceSigBoost: 1,
  /** Weight of another form of a query word (same Porter stem) in the text retriever. */
  stemWeight: 0.5,
  /** Weight of a short form of a query word (an abbreviation, or the word's longest start the index holds). */
  abbrevWeight: 0.5,
  /** The shortest start of a word that counts as its short form, and how much shorter than the word it must be. */
  abbrevMinLength: 3,
  abbrevMinCut: 2,
  /** Feedback: chunks read from the first pass, words added, and their weight relative to the query's. */
  feedbackDocs: 5,
  feedbackTerms: 10,
  feedbackWeight: 0.3,
  /** Share of a file's other candidates' score its best chunk gains; capped at its own score. */
  coherence: 0.2,
  /** Score factor of a file's n-th chunk in the list: decay^(n - diversityFree) from the (diversityFree+1)-th on. */
  diversityDecay: 0.6,
  /** How many chunks of one file are free of the decay. */
  diversityFree: 1,
} as const;

/** Where a file sits: implementation, or one of the kinds a query must ask for. */
export type FileKind = 'code' | 'test' | 'docs' | 'example' | 'generated' | 'declaration';

/** What a search can be narrowed to (`--kind`, search_code's `kind`): kinds of definition, tests, docs. */
export const CHUNK_KINDS = ['function', 'method', 'class', 'type', 'test', 'doc'] as const;
export type ChunkKindFilter = (typeof CHUNK_KINDS)[number];

const DEFINITION_KINDS: Record<Exclude<ChunkKindFilter, 'test' | 'doc'>, ReadonlySet<string>> = {
  function: new Set(['function']),
  method: new Set(['method']),
  class: new Set(['class', 'struct']),
  type: new Set(['type', 'interface', 'enum', 'trait']),
};

/**
 * Whether a chunk is of a kind asked for: its main definition's kind for function, method, class
 * (classes and structs) and type (type aliases, interfaces, enums, traits); its file for test
 * (a test file) and doc (documentation, or a Markdown section).
 */
export function chunkIsKind(kind: ChunkKindFilter, chunk: { kind: string; path: string; language: string }): boolean {
  if (kind === 'test') return fileKindOf(chunk.path, chunk.language) === 'test';
  if (kind === 'doc') return fileKindOf(chunk.path, chunk.language) === 'docs' || chunk.kind === 'section';
  return DEFINITION_KINDS[kind].has(chunk.kind);
}

const TEST_FILE =
  /(^|\/)(tests?|__tests__|__mocks__|spec|specs|testing|testdata|test_?utils?)\/|_test\.(go|py|rb|exs?|dart|zig|c|cc|cpp)$|(^|\/)test_[^/]*\.py$|_spec\.rb$|\.(test|spec)\.[cm]?[jt]sx?$|Tests?\.(java|cs|kt|swift|scala|groovy)$|Spec\.(scala|groovy|kt)$|_(test|tests)\.rs$|(^|\/)conftest\.py$/i;
const DOCS_FILE = /(^|\/)(docs?|documentation|man|wiki)\/|\.(md|markdown|rst|txt|adoc)$|(^|\/)(README|CHANGELOG|CHANGES|HISTORY|CONTRIBUTING|NEWS)(\.|$)/i;
const EXAMPLE_FILE = /(^|\/)(examples?|samples?|demos?|benchmarks?|bench|fixtures?|playground|tutorials?)\//i;
/** Interfaces that declare what a sibling implementation defines: OCaml `.mli`, Python stubs, TypeScript declarations. */
const DECLARATION_FILE = /\.(mli|pyi|hs-boot|d\.[cm]?ts)$/i;
const GENERATED_FILE = /(^|\/)(vendor|third_party|thirdparty|dist|build|gen|generated)\/|\.(pb|pb2|generated|gen|min)\.[a-z]+$|_pb2?\.py$|\.g\.dart$/i;

export function fileKindOf(path: string, language: string): FileKind {
  if (TEST_FILE.test(path)) return 'test';
  if (language === 'markdown' || DOCS_FILE.test(path)) return 'docs';
  if (EXAMPLE_FILE.test(path)) return 'example';
  if (GENERATED_FILE.test(path)) return 'generated';
  if (DECLARATION_FILE.test(path)) return 'declaration';
  return 'code';
}

/** Query words that ask for a kind of file, which then loses its discount. */
const ASKS_FOR: Record<Exclude<FileKind, 'code'>, RegExp> = {
  test: /\b(tests?|testing|spec|specs|unittest|pytest|fixtures?|mocks?|assert\w*)\b/i,
  docs: /\b(docs?|documentation|documented|readme|guide|tutorial|changelog|manual)\b/i,
  example: /\b(examples?|samples?|demos?|benchmarks?|bench)\b/i,
  generated: /\b(generated|vendor(ed)?|protobuf|pb)\b/i,
  declaration: /\b(?:interfaces?|signatures?|declarations?|declared|stubs?|typings?)\b|\.(?:mli|d\.ts)\b/i,
};

/**
 * The query's intent. A bare name (one code-like token, or a dotted path) looks names up; three
 * or more plain words with no code-like token are a sentence; anything else is mixed.
 */
export function queryIntent(q: AnalyzedQuery): QueryIntent {
  const tokens = q.raw.trim().split(/\s+/).filter(Boolean);
  if (tokens.length === 1 || (tokens.length <= 3 && q.identifiers.length >= 1 && q.identifiers.length >= tokens.length - 1)) return 'symbol';
  if (q.identifiers.length === 0 && q.paths.length === 0 && tokens.length >= RANK.sentenceTokens && q.words.length >= 3) return 'sentence';
  return 'mixed';
}

/**
 * How a symbol hit enters fusion, by the query's intent and how strong its name match was: its
 * weight factor, and whether its rank is flattened like the text retriever's (k = 60) instead of
 * the precise retrievers' steep k. A sentence's one-word name matches are a hint, not an answer.
 */
export function symbolMatchWeight(intent: QueryIntent, wordOnly: boolean): { factor: number; flatten: boolean } {
  if (intent === 'symbol') return { factor: 1, flatten: false };
  if (!wordOnly) return intent === 'sentence' ? { factor: RANK.sentenceNameMatch, flatten: true } : { factor: 1, flatten: false };
  return { factor: intent === 'sentence' ? RANK.sentenceWordMatch : RANK.mixedWordMatch, flatten: true };
}

/**
 * Other forms of the query's plain words that the index holds, with their weight: the words of
 * the same Porter stem (`derivations`), so that "parsed" also finds `parse` and "cancellation"
 * `cancel`. The index itself folds only plurals, since a derivation often names something else;
 * a lower weight lets the query's own form win where it occurs.
 */
export function stemExpansions(q: AnalyzedQuery, indexHas: (term: string) => boolean): Map<string, number> {
  const own = new Set(q.terms);
  const out = new Map<string, number>();
  for (const term of q.terms) {
    if (!/^[a-z]{4,}$/.test(term)) continue;
    const root = stem(term);
    for (const form of [root, ...derivations(term)]) {
      if (form.length < 3 || own.has(form) || out.has(form) || !indexHas(form)) continue;
      out.set(form, RANK.stemWeight);
    }
  }
  return out;
}

/**
 * The short forms of the query's plain words that the index holds, with their weight. Code names
 * things in abbreviations the question spells out: the common ones by list ("message" → `msg`,
 * abbreviations.ts), and any word's longest start that the index holds, at least
 * `abbrevMinLength` letters and `abbrevMinCut` shorter than the word ("difference" → `diff`,
 * "string" → `str`, "decode" → `dec`, "timeout" → `time`). Forms the stems stage or the query
 * already has are left out (`taken`). On the quality set's tuning half this found the function
 * named `diff` for "the difference between two dates" and cost no kind of query.
 */
export function abbreviationExpansions(q: AnalyzedQuery, indexHas: (term: string) => boolean, taken: ReadonlySet<string> = new Set()): Map<string, number> {
  const skip = (form: string) => taken.has(form) || q.terms.includes(form) || !indexHas(form);
  const out = new Map<string, number>();
  for (const term of q.terms) {
    if (!/^[a-z]+$/.test(term)) continue;
    for (const form of abbreviationsOf(term)) if (!out.has(form) && !skip(form)) out.set(form, RANK.abbrevWeight);
    for (let n = term.length - RANK.abbrevMinCut; n >= RANK.abbrevMinLength; n--) {
      const form = term.slice(0, n);
      if (out.has(form) || skip(form)) continue;
      out.set(form, RANK.abbrevWeight);
      break;
    }
  }
  return out;
}

/**
 * Pseudo-relevance feedback: the words that the first pass's best chunks hold and the query does
 * not, scored by how much of each chunk they make up, weighted by the chunk's score relative to
 * the best, times their rarity in the index (idf); the best `feedbackTerms`, with weights up to
 * `feedbackWeight`. Identifiers' sub-words count like words, so `last_day` lends "last" and "day".
 */
export function feedbackExpansions(
  docs: ReadonlyArray<{ text: string; score: number }>,
  q: AnalyzedQuery,
  idf: (term: string) => number,
): Map<string, number> {
  const out = new Map<string, number>();
  const top = docs[0]?.score ?? 0;
  if (top <= 0) return out;
  const own = new Set(q.terms);
  const weight = new Map<string, number>();
  for (const d of docs) {
    const tokens = tokenize(d.text);
    if (tokens.length === 0) continue;
    const tf = new Map<string, number>();
    for (const t of tokens) if (t.length >= 3 && !own.has(t) && !/^\d/.test(t)) tf.set(t, (tf.get(t) ?? 0) + 1);
    const rel = d.score / top;
    for (const [t, n] of tf) weight.set(t, (weight.get(t) ?? 0) + (n / tokens.length) * rel);
  }
  const scored = [...weight].map(([t, w]) => [t, w * idf(t)] as const).filter(([, w]) => w > 0);
  scored.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const picked = scored.slice(0, RANK.feedbackTerms);
  const best = picked[0]?.[1] ?? 0;
  for (const [t, w] of picked) out.set(t, (RANK.feedbackWeight * w) / best);
  return out;
}

/** A word as the path and name stages compare it: lower case, plural folded like the index. */
function fold(word: string): string {
  const w = word.toLowerCase();
  return w.length > 3 && w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is') ? w.slice(0, -1) : w;
}

/**
 * The query's content words, folded, and the names it says: its identifiers and joins of
 * adjacent words, and its single words too unless it is a sentence (whose words name the things
 * it talks about, not the definition it wants: "remove duplicates of a vector" is not `remove`).
 */
function queryVocabulary(q: AnalyzedQuery, intent: QueryIntent): { words: Set<string>; names: Set<string> } {
  const words = new Set<string>();
  for (const w of q.words) if (w.length >= 3) words.add(fold(w));
  for (const t of q.terms) if (t.length >= 3 && /^[a-z]+$/.test(t)) words.add(fold(t));
  const names = new Set<string>();
  if (intent !== 'sentence') for (const w of q.words) names.add(normalizeSymbolName(w));
  for (const i of q.identifiers) for (const part of i.split(/\.|::|->|#/)) names.add(normalizeSymbolName(part));
  for (const j of [...q.joins, ...q.joins3]) names.add(j);
  return { words, names };
}

function leafOf(symbol: string): string {
  return symbol.split(/\.|::|>|#/).pop()?.trim() ?? symbol;
}

/** The words of a file's name and of its folder, folded. */
function pathWords(path: string): string[] {
  const segs = path.split('/');
  const file = segs.pop() ?? '';
  const base = file.replace(/\.[^.]+$/, '');
  const dir = segs.pop() ?? '';
  const out = new Set<string>();
  for (const raw of [base, dir]) {
    if (!raw) continue;
    for (const piece of raw.split(/[-_.\s]+/)) {
      if (piece.length >= 3) out.add(fold(piece));
      for (const part of identifierParts(piece)) if (part.length >= 3) out.add(fold(part));
    }
  }
  return [...out];
}

/**
 * Runs the stages after fusion over `cands` (fused order) and returns them reordered, with what
 * each stage did. `disabled` stages are skipped; `intent` acts in fusion and is only reported here.
 */
export function rankCandidates(cands: RankCandidate[], q: AnalyzedQuery, intent: QueryIntent, disabled: ReadonlySet<RankStage> = new Set()): { ranked: RankCandidate[]; trace: StageTrace[] } {
  const trace: StageTrace[] = [];
  const out = cands.map((c) => ({ ...c }));
  const vocab = queryVocabulary(q, intent);
  if (!disabled.has('intent')) trace.push({ stage: 'intent', changed: 0, note: intent });

  if (!disabled.has('file-kind')) {
    let changed = 0;
    const asked = new Set<FileKind>();
    for (const [kind, re] of Object.entries(ASKS_FOR)) if (re.test(q.raw)) asked.add(kind as FileKind);
    for (const c of out) {
      const kind = fileKindOf(c.path, c.language);
      if (kind === 'code' || asked.has(kind)) continue;
      c.score *= RANK[kind];
      changed++;
    }
    trace.push({ stage: 'file-kind', changed, ...(asked.size ? { note: `asked for ${[...asked].join(', ')}` } : {}) });
  }

  if (!disabled.has('definition')) {
    let changed = 0;
    for (const c of out) {
      const symbol = c.matchedSymbol ?? c.symbol;
      if (!symbol) continue;
      const leaf = leafOf(symbol);
      if (vocab.names.has(normalizeSymbolName(leaf))) {
        c.score *= RANK.definesName;
        changed++;
      } else if (intent !== 'sentence' && identifierParts(leaf).some((p) => vocab.words.has(fold(p)))) {
        c.score *= RANK.definesPart;
        changed++;
      }
    }
    trace.push({ stage: 'definition', changed });
  }

  if (!disabled.has('path-words') && vocab.words.size > 0) {
    let changed = 0;
    const cache = new Map<string, number>();
    for (const c of out) {
      let n = cache.get(c.path);
      if (n === undefined) {
        n = pathWords(c.path).filter((w) => vocab.words.has(w)).length;
        cache.set(c.path, n);
      }
      if (n === 0) continue;
      c.score *= Math.min(RANK.pathWordMax, 1 + RANK.pathWord * n);
      changed++;
    }
    trace.push({ stage: 'path-words', changed });
  }

  if (!disabled.has('coherence')) {
    let changed = 0;
    const byFile = new Map<string, RankCandidate[]>();
    for (const c of out) byFile.set(c.path, [...(byFile.get(c.path) ?? []), c]);
    for (const group of byFile.values()) {
      if (group.length < 2) continue;
      const best = group.reduce((a, b) => (b.score > a.score ? b : a));
      const others = group.reduce((s, c) => (c === best ? s : s + c.score), 0);
      best.score += Math.min(best.score, RANK.coherence * others);
      changed++;
    }
    trace.push({ stage: 'coherence', changed });
  }

  out.sort((a, b) => b.score - a.score || a.id - b.id);

  if (!disabled.has('diversity')) {
    let changed = 0;
    const seen = new Map<string, number>();
    for (const c of out) {
      const n = seen.get(c.path) ?? 0;
      if (n >= RANK.diversityFree) {
        c.score *= RANK.diversityDecay ** (n - RANK.diversityFree + 1);
        changed++;
      }
      seen.set(c.path, n + 1);
    }
    out.sort((a, b) => b.score - a.score || a.id - b.id);
    trace.push({ stage: 'diversity', changed });
  }
  return { ranked: out, trace };
}
