/**
 * Does the workspace hold anything relevant to a question? The oracle answers "no relevant
 * context" instead of an evidence brief of unrelated files when it does not.
 *
 * The main measure is co-occurrence: the question's words are weighed by their IDF in the index
 * (a rare word says more about what is asked than a common one), and the measure is the share of
 * that weight that occurs together in one chunk of the whole index, averaged with the share that
 * occurs together in one file. A question about something the project implements has a chunk
 * (the function that does it) holding most of its specific words at once; a question about
 * something it lacks only finds them scattered: "billing" in one file, "invoice" in a test string
 * of another, "compute" everywhere. Coverage by the union of the top evidence, the measure before
 * this one, cannot tell the two apart in a large corpus: five chunks between them nearly always
 * hold most words of any question. The measure is relative to the corpus (IDF weights, shares of
 * the question's own weight), so it needs no list of topics or products, and it reads postings
 * only: a few milliseconds on the Go standard library.
 *
 * Words are matched by concept, not by token: the plural, past and -ing forms of a word and its
 * British or American spelling are one concept ("recognise" finds `recognized`, "cancelling"
 * `canceled`), by a light inflectional stemmer whose forms are looked up in the index's
 * vocabulary; derivations ("billing" → "bill", "reader" → "read") are not folded, since they
 * usually name something else. A compound name (`WebSocket`) occurs where the whole name does, or
 * where all of its parts do.
 *
 * Further tests, each of which alone means no context:
 * - the code's own names: too little of the weight is on words that some symbol's name or some
 *   path uses ({@link namedShare}); a question whose words meet only in prose, test data or a
 *   table is about something else;
 * - a named folder: the question names a folder the evidence was found in, but its words do not
 *   occur together within that folder;
 * - absence: too much weight on concepts the index never mentions (a product, a library, a
 *   place), judged over the user's own words as well, apart from what a rewrite added; the
 *   commonest English words are left out of it ("quickly", "decide": how a question is put);
 * - names the question treats as code that no chunk mentions (see the oracle), members of the
 *   project's folders or symbols that nothing defines (`std::sync::Semaphore`), and proper
 *   names of several words that no chunk writes whole ("Unreal Engine"; see proper-names.ts).
 *   A found definition vouches for its own name only, a found folder for none.
 * The words of fixed phrases ("make sure", "on top of") are no subject words.
 * Reports (issue reports, change descriptions, error output, pasted documents; see report.ts) are
 * decided apart, by {@link decideReport}: their words are the reporter's as much as the subject's.
 */
import type { Engine } from '../engine';
import { derivations } from '../search/stem';
import { identifierParts, tokenize } from '../search/tokenizer';
import { abbreviationsOf } from '../search/abbreviations';
import { isCommonEnglish } from './common-words';
import { inNamedDir } from './paths';
import { unwrittenNames } from './proper-names';
import { isReportFormWord } from './report';
import type { AnalyzedQuestion, RankedEvidence } from './types';

/**
 * Below this co-occurrence (mean of the best chunk's and the best file's share of the weight) the
 * question is about something the workspace does not hold. Calibrated on the oracle's question
 * set (`test/bench/oracle/questions.json`) and on half of the no-context set (its odd-numbered
 * questions of each corpus, kind and category); the other half is the held-out check (see the
 * no-context table in docs/benchmarks.md).
 */
export const MIN_COOCCURRENCE = 0.55;
/**
 * The same when the question names a symbol whose definition leads the evidence, or a folder or
 * file it lies in: what it asks about exists, and a question about it put in everyday words
 * ("a late subscriber still gets the latest value") has words no comment beside the code uses.
 */
export const MIN_COOCCURRENCE_FOUND = 0.45;
/** At or above this share of the weight on concepts the index never mentions, no context. */
export const MAX_ABSENT = 0.2;
/**
 * Even when what the question names was found: at least this many of the user's own words the
 * index never mentions, carrying at least {@link MAX_OWN_ABSENT} of their weight, mean no context.
 */
const MIN_ABSENT_WORDS = 2;
export const MAX_OWN_ABSENT = 0.5;
/**
 * Below this share of the known concepts' weight on words the code names things with (symbol
 * names and paths), no context, see {@link namedShare}; with {@link MAX_NAMED_WORDS}. Set with
 * both halves of the no-context set in view (the README gives the margin), and restricted by
 * MAX_NAMED_WORDS after the zod questions, written later, showed on-topic questions down to 0.27.
 */
export const MIN_NAMED = 0.4;
/**
 * ...and only when at most this many of its words name anything in the code: a question with two
 * or more code words is about code, however much weight its prose words carry ("what happens if
 * the key schema of a record is asynchronous?" on zod, where "asynchronous" outweighs the rest).
 */
export const MAX_NAMED_WORDS = 1;
/** A named symbol mentioned in at most this many chunks, none of them evidence, is unknown here. */
const RARE_SYMBOL_DF = 2;
/** Evidence items the coverage of a pasted report is measured over. */
const COVERAGE_TOP = 5;
/** Evidence items that also count as chunks: notes and threads are not in the code index. */
const EVIDENCE_CHUNKS = 5;
/** Bit masks hold this many concepts; a longer question keeps its rarest ones. */
const MAX_CONCEPTS = 32;
/**
 * The particles of phrasal verbs ("looked up", "runs out", "give up", "roll back"): the verb says
 * what is asked, the particle only completes it. A rare word in code prose, a particle would
 * otherwise weigh like a subject.
 */
const PARTICLES = new Set(['up', 'down', 'out', 'off', 'over', 'away', 'back']);
/**
 * Fixed phrases that say how something is asked, not what about: "make sure it runs", "right
 * away", "instead of a macrotask", "built on top of", "in order to". Their words are not subjects.
 */
const IDIOMS: ReadonlyArray<readonly [RegExp, readonly string[]]> = [
  [/\bmakes?\s+sure\b|\bmaking\s+sure\b/i, ['make', 'makes', 'making', 'sure']],
  [/\bright\s+away\b/i, ['right']],
  [/\binstead\s+of\b/i, ['instead']],
  [/\bon\s+top\s+of\b/i, ['top']],
  [/\bin\s+order\s+to\b/i, ['order']],
  [/\bas\s+well\s+as\b/i, ['well']],
  [/\btop[- ]level\b/i, ['top', 'level']],
];
/** Words that only say what a named directory is ("the auth module"). */
const DIR_WORDS = new Set(['package', 'packages', 'module', 'modules', 'folder', 'folders', 'directory', 'directories', 'crate', 'crates']);

/**
 * The inflectional key of a lower-case word: plural, third person, past, -ing and -ly forms share
 * it, and so do the -ise and -ize spellings ("recognised", "recognizes", "recognize" → `recogniz`)
 * and the -our and -or ones ("flavour", "flavors" → `flavor`).
 * Words with digits or other characters, and short words, are their own key.
 */
export function inflectionKey(word: string): string {
  let w = word;
  if (w.length <= 3 || !/^[a-z]+$/.test(w)) return w;
  w = w.replace(/is(e|es|ed|ing)$/, 'iz$1');
  // "flavour", "colours", "behaviour": the American -or spelling.
  w = w.replace(/([a-z]{3,})our(s|ed|ing|ite|ites)?$/, '$1or$2');
  let stripped = false;
  if (/ies$/.test(w) && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (/ied$/.test(w) && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (/sses$/.test(w)) w = w.slice(0, -2);
  else if (/(ss|us|is)$/.test(w)) return w;
  else if (/(s|x|z|ch|sh)es$/.test(w)) w = w.slice(0, -2);
  else if (/s$/.test(w)) w = w.slice(0, -1);
  else if (/ily$/.test(w) && w.length - 3 >= 4) w = `${w.slice(0, -3)}y`;
  else if (/ly$/.test(w) && w.length - 2 >= 5) w = w.slice(0, -2);
  else if (/ing$/.test(w) && w.length - 3 >= 3) {
    w = w.slice(0, -3);
    stripped = true;
  } else if (/ed$/.test(w) && w.length - 2 >= 3) {
    w = w.slice(0, -2);
    stripped = true;
  }
  // "stopped" → stop, "mapping" → map; not "falling" → fal, "passed" → pas.
  if (stripped && w.length >= 3 && w.at(-1) === w.at(-2) && !/[lsz]/.test(w.at(-1)!)) w = w.slice(0, -1);
  if (w.length > 3 && w.endsWith('e')) w = w.slice(0, -1);
  return w;
}

/** The word's other inflected forms that share its key ("cached" → cache, caches, caching…). */
export function inflections(word: string): string[] {
  const key = inflectionKey(word);
  if (key === word && (word.length <= 3 || !/^[a-z]+$/.test(word))) return [];
  const bases = new Set([key, word, key.replace(/iz$/, 'is')]);
  const out = new Set<string>();
  for (const b of bases) {
    const stems = [b, `${b}${b.at(-1) ?? ''}`];
    if (b.endsWith('y')) stems.push(b.slice(0, -1));
    for (const s of stems) for (const suffix of ['', 'e', 's', 'es', 'ed', 'd', 'ing', 'ies', 'ied']) out.add(s + suffix);
  }
  out.delete(word);
  // A bare stem of three letters is another word ("time" is not `tim`).
  return [...out].filter((f) => f.length >= 4 && inflectionKey(f) === key);
}

/** One subject word of the question: the index terms that stand for it, and its weight. */
export interface Concept {
  word: string;
  /** Groups of index terms; the concept occurs where one of `alternatives` occurs whole. */
  alternatives: number[][];
  df: number;
  weight: number;
}

export interface Relevance {
  /** Mean of {@link best chunk} and {@link best file} shares: the decision's measure. */
  cooccurrence: number;
  chunk: number;
  file: number;
  /** Share of the weight on concepts no chunk mentions in any form. */
  absent: number;
  /** The same share over the user's own words (a rewritten follow-up adds the conversation's). */
  ownAbsent: number;
  /** How many of the user's own words no chunk mentions. */
  ownAbsentWords: number;
  /** Words no chunk mentions that are common English, left out of the absence tests (common-words.ts). */
  ordinary?: string[];
  /** Share of the known concepts' weight on words the code names things with (see {@link MIN_NAMED}). */
  named: number;
  /** How many of the known concepts the code names things with. */
  namedWords: number;
  /** Co-occurrence within the folders the question names, when it names one. */
  scoped?: number;
  /** Where the best chunk is (for `--explain`). */
  where?: string;
  concepts: string[];
}

/** The subject words of a question: its terms and the symbols they do not already spell out. */
export function subjectWords(q: AnalyzedQuestion): string[] {
  const words: string[] = [];
  const seen = new Set<string>();
  const idiomatic = new Set(IDIOMS.flatMap(([re, ws]) => (re.test(q.text) ? ws : [])));
  // What a folder is called says where to look, not what about: "the auth module", "what are
  // the top-level folders for".
  const dirWords = Boolean(q.dirs?.length) || q.type === 'structural';
  const add = (w: string) => {
    const lower = w.toLowerCase();
    if (seen.has(lower)) return;
    seen.add(lower);
    words.push(w);
  };
  for (const t of q.terms) {
    // A hexadecimal number or address (`0x4a2b31` reads as x4a2b31) is not a subject.
    if (/^(?:0?x)?[0-9a-f]*\d[0-9a-f]*$/i.test(t)) continue;
    if (PARTICLES.has(t) || idiomatic.has(t.toLowerCase()) || (dirWords && DIR_WORDS.has(t.toLowerCase()))) continue;
    add(t);
  }
  for (const s of q.symbols) {
    const parts = s.split(/\.|::|->|#/);
    // `bytes.Buffer` is the words bytes and Buffer, already there.
    if (parts.length > 1 && parts.every((p) => seen.has(p.toLowerCase()))) continue;
    add(s);
  }
  return words;
}

/**
 * Co-occurrence of the question's concepts in the index and in the top evidence. `own` is the
 * analysis of the question as the user wrote it, when a follow-up was rewritten with the
 * conversation's subjects: absence is also weighed over the user's own words.
 */
// eslint-disable-next-line max-lines-per-function -- one decision over the question's concepts, its steps commented, sharing the weights it computes
export function assessRelevance(engine: Engine, q: AnalyzedQuestion, ranked: readonly RankedEvidence[], own: AnalyzedQuestion = q): Relevance {
  // Each word: its whole token and plural stem (one group), or for a compound name the whole
  // name (one group) or all of its parts (a group each), every group with its inflections.
  const specs = subjectWords(q).flatMap((word) => {
    const toks = tokenize(word);
    const whole = toks[0];
    if (whole === undefined) return [];
    const parts = identifierParts(word);
    const single = parts.length === 0 || (parts.length === 1 && whole.startsWith(parts[0]!));
    const withForms = (ts: readonly string[]) => [...new Set(ts.flatMap((t) => [t, ...inflections(t)]))];
    return [{ word, groups: single ? [withForms(toks)] : [[whole], ...parts.map((p) => withForms([p]))], compound: !single }];
  });
  const { docs, df } = engine.termRarity([...new Set(specs.flatMap((s) => s.groups.flat()))]);
  const n = Math.max(docs, 1);
  const dfOf = (group: readonly string[]) => Math.max(0, ...group.map((t) => df.get(t) ?? 0));
  const idf = (d: number) => Math.log(1 + (n - d + 0.5) / (d + 0.5));
  const weighed = specs.map((s) => {
    // Only forms the index holds are looked up; an absent word keeps its own form.
    const groups = s.groups.map((g) => g.filter((t, i) => i === 0 || (df.get(t) ?? 0) > 0));
    const d = s.compound ? dfOf(groups[0]!) || Math.min(...groups.slice(1).map(dfOf)) : dfOf(groups[0]!);
    return { ...s, groups, df: d, weight: idf(d) };
  });
  // The rarest concepts carry the weight; past the mask's width the commonest are left out.
  let groupCount = 0;
  const kept = [...weighed]
    .sort((a, b) => b.weight - a.weight)
    .filter((s) => {
      if (groupCount + s.groups.length > MAX_CONCEPTS) return false;
      groupCount += s.groups.length;
      return true;
    });
  const groups: string[][] = [];
  const concepts: Concept[] = kept.map((s) => {
    const ids = s.groups.map((g) => groups.push(g) - 1);
    return { word: s.word, alternatives: s.compound ? [[ids[0]!], ids.slice(1)] : [ids], df: s.df, weight: s.weight };
  });
  // Co-occurrence is measured over the concepts the index knows: one it never mentions cannot
  // occur anywhere, and the absence test weighs it (the two measures stay apart).
  const weightOf = (cs: readonly Concept[]) => cs.reduce((sum, c) => sum + c.weight, 0);
  const weightAll = weightOf(concepts);
  const absentWeight = weightOf(concepts.filter((c) => c.df === 0));
  // A common English word the index lacks is how the question is put ("quickly", "decide",
  // "whole"), not what it is about: the absence tests leave it out, on both sides of the share.
  const ordinary = concepts.filter((c) => c.df === 0 && isCommonEnglish(c.word));
  const telling = (cs: readonly Concept[]) => cs.filter((c) => !ordinary.includes(c));
  const absent = weightAll > 0 ? weightOf(telling(concepts).filter((c) => c.df === 0)) / Math.max(weightOf(telling(concepts)), Number.MIN_VALUE) : 0;
  const ownWords = new Set(subjectWords(own).map((w) => w.toLowerCase()));
  const owned = telling(concepts.filter((c) => ownWords.has(c.word.toLowerCase())));
  const ownAbsentList = owned.filter((c) => c.df === 0);
  const ownAbsent = owned.length > 0 ? weightOf(ownAbsentList) / Math.max(weightOf(owned), Number.MIN_VALUE) : 0;
  const absence = { absent, ownAbsent, ownAbsentWords: ownAbsentList.length, ...(ordinary.length > 0 ? { ordinary: ordinary.map((c) => c.word) } : {}) };
  const total = weightAll - absentWeight;
  if (total <= 0) return { cooccurrence: ranked.length > 0 && weightAll === 0 ? 1 : 0, chunk: 0, file: 0, ...absence, named: 0, namedWords: 0, concepts: concepts.map((c) => c.word) };
  const evidence = ranked.slice(0, EVIDENCE_CHUNKS).map((e) => ({ path: e.result.path, source: e.result.source, tokens: new Set(tokenize(`${e.result.path}\n${e.result.content}`)) }));
  // Notes, threads and commit messages are the project's own words as much as its names are.
  const memoryWords = new Set(evidence.flatMap((e) => (e.source === 'note' || e.source === 'thread' || e.source === 'git' ? [...e.tokens] : [])));
  const { share: named, count: namedWords } = namedShare(engine, concepts, groups, total, memoryWords);
  const share = (mask: number) => {
    let w = 0;
    for (const c of concepts) if (c.df > 0 && c.alternatives.some((alt) => alt.length > 0 && alt.every((g) => (mask & (1 << g)) !== 0))) w += c.weight;
    return w / total;
  };

  let chunk = 0;
  let where: string | undefined;
  const files = new Map<string, number>();
  const consider = (path: string, mask: number) => {
    const s = share(mask);
    if (s > chunk) {
      chunk = s;
      where = path;
    }
    files.set(path, (files.get(path) ?? 0) | mask);
  };
  // Within the folders the question names ("the log package"), when it names one.
  const dirs = q.dirs ?? [];
  let scopedChunk = 0;
  const scopedFiles = new Map<string, number>();
  for (const { path, mask } of engine.termGroups(groups)) {
    consider(path, mask);
    if (dirs.length > 0 && inNamedDir(path, dirs)) {
      scopedChunk = Math.max(scopedChunk, share(mask));
      scopedFiles.set(path, (scopedFiles.get(path) ?? 0) | mask);
    }
  }
  // Notes, threads and history are searched apart from the code index; their evidence counts as
  // chunks of its own, and code evidence re-read since indexing counts as it reads now.
  for (const e of evidence) {
    let mask = 0;
    groups.forEach((g, i) => {
      if (g.some((t) => e.tokens.has(t))) mask |= 1 << i;
    });
    consider(`${e.path}#evidence`, mask);
  }
  const bestFile = (m: ReadonlyMap<string, number>) => Math.max(0, ...[...m.values()].map(share));
  const file = bestFile(files);
  const scoped = dirs.length > 0 ? { scoped: (scopedChunk + bestFile(scopedFiles)) / 2 } : {};
  return { cooccurrence: (chunk + file) / 2, chunk, file, ...absence, named, namedWords, ...scoped, ...(where ? { where } : {}), concepts: concepts.map((c) => c.word) };
}

/**
 * The share of the known concepts' weight on words the code names things with, and how many
 * concepts those are. A word counts when some symbol's name or some path uses it in any inflected
 * or derived form ("localized" → `locales`, by the Porter stem), in the abbreviation code writes
 * it with ("buffer" → `buf`, see abbreviations.ts) or, for an agent noun, as its verb ("parser"
 * → `parse`); the words of the notes, threads and commits among the evidence count as the
 * project's own. A question about the project is asked at least in part in the words its code is
 * written in; one whose weight lies on words only the project's prose, test data and tables use
 * (two words of a comment, a place in a time-zone table) is about something else.
 */
function namedShare(engine: Engine, concepts: readonly Concept[], groups: readonly (readonly string[])[], total: number, memoryWords: ReadonlySet<string>): { share: number; count: number } {
  const termsOf = (c: Concept) => {
    const terms = [...c.alternatives.flat().flatMap((g) => groups[g] ?? []), ...abbreviationsOf(c.word)];
    terms.push(...derivations(terms[0] ?? ''));
    const agent = /^([a-z]{3,})(?:er|or)$/.exec(inflectionKey(terms[0] ?? ''));
    if (agent) {
      const verb = agent[1]!;
      terms.push(verb, `${verb}e`, ...inflections(`${verb}e`), ...inflections(verb));
    }
    return terms;
  };
  const known = concepts.filter((c) => c.df > 0).map((c) => ({ weight: c.weight, terms: termsOf(c) }));
  const freq = engine.nameFrequency([...new Set(known.flatMap((c) => c.terms))]);
  const named = known.filter((c) => c.terms.some((t) => (freq.get(t) ?? 0) > 0 || memoryWords.has(t)));
  return { share: total > 0 ? named.reduce((sum, c) => sum + c.weight, 0) / total : 0, count: named.length };
}

/** The no-context decision and its measures (`--explain` shows them). */
export interface ContextDecision {
  noContext: boolean;
  /** Which test found no context, in words (`--explain`); absent when there is context. */
  why?: string;
  /** The decision's measure: the co-occurrence of the question's concepts (for a report, the share of its subject words the index holds). */
  covered: number;
  absent: number;
  unknownSymbols: string[];
  /** Absent for pasted reports. */
  relevance?: Relevance;
  /** What showed the subject exists when that settled the decision (a history question's commit). */
  vouched?: string;
}

/**
 * Whether the workspace has context for the question: none when nothing was found, when the
 * question names as code something no chunk mentions, when too much of its weight is on concepts
 * the index never mentions, or when its concepts do not occur together (see the module comment).
 * `asked` is the question as the user wrote it when `q` is its rewrite with the conversation's
 * subjects.
 */
export function decideContext(engine: Engine, q: AnalyzedQuestion, ranked: readonly RankedEvidence[], asked: AnalyzedQuestion = q): ContextDecision {
  if (q.type === 'report') return decideReport(engine, q, ranked);
  const history = q.type === 'history' ? historyFound(q, ranked) : undefined;
  if (history) return { noContext: false, covered: 1, absent: 0, unknownSymbols: [], vouched: history };
  // What fails in a file the question names, answered by the file's language server: the words
  // of the question ("compile", "fail") need not be the code's.
  const diagnostics = diagnosticsFound(ranked);
  if (diagnostics) return { noContext: false, covered: 1, absent: 0, unknownSymbols: [], vouched: diagnostics };
  const r = assessRelevance(engine, q, ranked, asked);
  // When the evidence holds the named symbol's definition or lies in the path the question names,
  // what it asks about was found: a word the index lacks is then how the question is put
  // ("constructed" of a constructor), not a subject it lacks. The words the index knows must
  // still occur together, if less closely (MIN_COOCCURRENCE_FOUND), and within the folder the
  // question names, if it names one.
  const found = namedFound(ranked);
  // A found definition vouches for its own name, not for another that the index never mentions
  // ("serialize a HashMap into a JSON string" where nothing says JSON) or never writes whole
  // ("Reactive Streams"); a found folder vouches for no name ("the JSONFormatter class in the
  // logging package").
  const defined = definitionFound(ranked);
  const unknownSymbols = defined ? neverMentioned(engine, asked) : unknownNames(engine, q, evidenceTerms(ranked));
  const undefinedNames = defined || unknownSymbols.length > 0 ? [] : undefinedMembers(engine, q);
  const minCooccurrence = found ? MIN_COOCCURRENCE_FOUND : MIN_COOCCURRENCE;
  const unwritten = ranked.length === 0 || unknownSymbols.length > 0 || undefinedNames.length > 0 ? [] : unwrittenNames(engine, asked.text, ranked.slice(0, EVIDENCE_CHUNKS));
  const why = firstReason([
    [ranked.length === 0, () => 'nothing was found'],
    [unknownSymbols.length > 0, () => `no chunk mentions ${unknownSymbols.join(', ')}`],
    [undefinedNames.length > 0, () => `nothing in the project defines ${undefinedNames.join(', ')}`],
    [unwritten.length > 0, () => `no chunk writes ${unwritten.join(', ')}, though each of its words occurs`],
    [!found && r.absent >= MAX_ABSENT, () => `${pct(r.absent)} of the weight is on words the index never mentions; no context from ${pct(MAX_ABSENT)}`],
    // Most of what the user asked is words the index never mentions (another framework's name
    // beside a found class of the same name, two absent nouns beside a found folder): not a
    // wording.
    [r.ownAbsentWords >= MIN_ABSENT_WORDS && r.ownAbsent >= MAX_OWN_ABSENT, () => `${r.ownAbsentWords} of the question's words, ${pct(r.ownAbsent)} of its weight, are nowhere in the index`],
    [r.cooccurrence < minCooccurrence, () => `its words do not occur together: co-occurrence ${r.cooccurrence.toFixed(2)}, no context below ${minCooccurrence}`],
    [
      r.scoped !== undefined && foundByDir(ranked) && q.type !== 'structural' && r.scoped < MIN_COOCCURRENCE,
      () => `its words do not occur together in the folder it names: ${(r.scoped ?? 0).toFixed(2)}, no context below ${MIN_COOCCURRENCE}`,
    ],
    [
      !found && r.namedWords <= MAX_NAMED_WORDS && r.named < MIN_NAMED,
      () => `${r.namedWords === 0 ? 'no word' : 'one word'} of it, ${pct(r.named)} of the weight, is a word the code names things with; no context below ${pct(MIN_NAMED)}`,
    ],
  ]);
  return { noContext: why !== undefined, ...(why ? { why } : {}), covered: r.cooccurrence, absent: r.absent, unknownSymbols: [...unknownSymbols, ...undefinedNames], relevance: r };
}

/** The reason of the first test that fires, in the order given. */
function firstReason(tests: ReadonlyArray<readonly [boolean, () => string]>): string | undefined {
  return tests.find(([fires]) => fires)?.[1]();
}

function pct(share: number): string {
  return `${Math.round(share * 100)}%`;
}

/** Whether the top evidence lies in the folder the question names. */
function foundByDir(ranked: readonly RankedEvidence[]): boolean {
  return ranked.slice(0, COVERAGE_TOP).some((e) => e.features.namedDir !== undefined);
}

/** Whether the top evidence is the named symbol's definition, or lies in the path or folder the question names. */
function namedFound(ranked: readonly RankedEvidence[]): boolean {
  return definitionFound(ranked) || ranked.slice(0, COVERAGE_TOP).some((e) => e.features.namedPath !== undefined || e.features.namedDir !== undefined);
}

/** Whether the top evidence is the definition of a symbol the question names. */
function definitionFound(ranked: readonly RankedEvidence[]): boolean {
  return ranked.slice(0, COVERAGE_TOP).some((e) => e.features.exactSymbol !== undefined && e.result.metadata.definition === true);
}

/**
 * Qualified names whose qualifier is this project's (a folder, a file or a symbol of it) but
 * whose last part nothing defines: `std::sync::Semaphore` in a `std` whose `sync` has none.
 * A comment that mentions it does not make it code of the project.
 */
function undefinedMembers(engine: Engine, q: AnalyzedQuestion): string[] {
  const segments = pathSegments(engine);
  const known = (name: string) => segments.has(name.toLowerCase()) || engine.store.findSymbols(name, { limit: 1 }).some((s) => s.name === name);
  return q.symbols.filter((sym) => {
    if (/\//.test(sym)) return false;
    // A name whose separators are part of it (Vim's `tar#Browse`, a PHP `Ns\\Name`) is defined whole.
    const whole = sym.replace(/\(\)$/, '');
    if (engine.store.findSymbols(whole, { limit: 5 }).some((s) => s.name === whole || s.qualifiedName === whole)) return false;
    const parts = whole.split(/::|\.|#|->/).filter((p) => p !== '');
    const last = parts.pop();
    if (last === undefined || parts.length === 0 || !/^[A-Za-z_$][\w$]*$/.test(last)) return false;
    return parts.some(known) && !known(last);
  });
}

const segmentCache = new WeakMap<Engine, { generation: number; segments: Set<string> }>();

/** Every folder name and file name (without its extension) in the index, lower-cased. */
function pathSegments(engine: Engine): Set<string> {
  const cached = segmentCache.get(engine);
  if (cached && cached.generation === engine.store.generation) return cached.segments;
  const segments = new Set<string>();
  for (const f of engine.store.listFiles()) for (const part of f.path.split('/')) segments.add(part.replace(/\.[^.]*$/, '').toLowerCase());
  segmentCache.set(engine, { generation: engine.store.generation, segments });
  return segments;
}

function evidenceTerms(ranked: readonly RankedEvidence[]): Set<string> {
  const present = new Set<string>();
  for (const e of ranked.slice(0, COVERAGE_TOP)) for (const t of tokenize(`${e.result.path}\n${e.result.content}`)) present.add(t);
  return present;
}

/** A qualified name's last part as one token (`ActiveRecord`, not `record`). */
function lastNameToken(sym: string): string | undefined {
  return tokenize(sym.split(/[.:#]|->/).pop() ?? sym)[0];
}

/** The names the question treats as code that no chunk mentions in any inflected form. */
function neverMentioned(engine: Engine, q: AnalyzedQuestion): string[] {
  return q.symbols.filter((sym) => {
    const whole = lastNameToken(sym);
    return whole !== undefined && [...engine.termRarity([whole, ...inflections(whole)]).df.values()].every((d) => d === 0);
  });
}

/**
 * A name the question treats as a thing of the project (`FooClient`, a product name) that the
 * index never mentions, or mentions in a chunk or two that are not among the evidence (a test
 * string, a comment): the question is about something else. Its last part is judged whole.
 */
function unknownNames(engine: Engine, q: AnalyzedQuestion, present: ReadonlySet<string>): string[] {
  return q.symbols.filter((sym) => {
    const whole = lastNameToken(sym);
    if (!whole || present.has(whole)) return false;
    return (engine.termRarity([whole]).df.get(whole) ?? 0) <= RARE_SYMBOL_DF;
  });
}


/**
 * A chunk share at or below which a word the project holds is a subject a report can be about
 * (with at least {@link SPECIFIC_MIN_DF} chunks allowed in a small one); a word in more than half
 * the chunks is one of the project's ubiquitous words and says nothing about what it is about.
 * Set on the tuning half of the real-text set: at 0.1, "timeout", "config" and "url" counted as
 * common and one message in twelve of the test half was declined.
 */
export const SPECIFIC_DF_SHARE = 0.5;
const SPECIFIC_MIN_DF = 3;

/**
 * The no-context decision for a report (an issue, a change description, error output; see
 * report.ts). A report is about the project it is pasted into unless the evidence says otherwise,
 * so the words it holds that the index lacks (the reporter's own names, platforms, people, log
 * noise) never decline it. It is declined when nothing was found, or when it has specific words
 * and none of them occurs in the project: all that the project shares with it is common words.
 * A report with no specific word at all ("fix a typo") is answered from what was found.
 */
export function decideReport(engine: Engine, q: AnalyzedQuestion, ranked: readonly RankedEvidence[]): ContextDecision {
  const base = { covered: 0, absent: 0, unknownSymbols: [] as string[] };
  if (ranked.length === 0) return { ...base, noContext: true, why: 'nothing was found' };
  if (namedFound(ranked)) return { ...base, covered: 1, noContext: false };
  // People (@mentions) are who reported or reviewed, never what about.
  const mentioned = new Set([...q.text.matchAll(/(?:^|[\s(])@([\w-]+)/g)].map((m) => m[1]!.toLowerCase()));
  const words = subjectWords(q).filter((w) => !/^(?:0?x)?[0-9a-f]*\d[0-9a-f]*$/i.test(w) && !isReportFormWord(w) && !mentioned.has(w.toLowerCase()));
  const forms = words.map((w) => {
    const toks = tokenize(w);
    return [...new Set(toks.flatMap((t) => [t, ...inflections(t)]))];
  });
  const { docs, df } = engine.termRarity([...new Set(forms.flat())]);
  const specificDf = Math.max(SPECIFIC_MIN_DF, docs * SPECIFIC_DF_SHARE);
  const dfOf = (ts: readonly string[]) => Math.max(0, ...ts.map((t) => df.get(t) ?? 0));
  const known = words.filter((_, i) => dfOf(forms[i]!) > 0);
  // A name written as code (`throwHttpErrors`, `response.json()`) that the project holds is
  // specific however often it occurs.
  const code = new Set(q.symbols.map((s) => s.toLowerCase()));
  const specific = words.filter((w, i) => {
    const d = dfOf(forms[i]!);
    return d > 0 && (d <= specificDf || code.has(w.toLowerCase()));
  });
  const absentWords = words.filter((_, i) => forms[i]!.length > 0 && dfOf(forms[i]!) === 0);
  const covered = words.length > 0 ? known.length / words.length : 1;
  const why =
    specific.length === 0 && absentWords.length > 0
      ? `none of its specific words occurs in the project (${absentWords.slice(0, 4).join(', ')} occur nowhere${known.length ? `; ${known.slice(0, 4).join(', ')} occur in many places` : ''})`
      : undefined;
  return { covered, absent: words.length > 0 ? absentWords.length / words.length : 0, unknownSymbols: [], noContext: why !== undefined, ...(why ? { why } : {}) };
}

/** Words of a history question that say it asks about history, not what about. */
const HISTORY_FORM = /^(?:chang|add|remov|introduc|modif|refactor|renam|deprecat|rewr|revert|switch|mov|delet|wr[io]t|history|commit|blame|changelog|regression|last|since)/i;

/**
 * A history question about something the repository has is answered from git, whatever its
 * words' co-occurrence in the code: its evidence names a file the question names, or a commit
 * whose message holds the question's subject words ("when was the extra export added?" and the
 * commit "Add the extra export"). Returns what vouches for it, or undefined.
 */
export function historyFound(q: AnalyzedQuestion, ranked: readonly RankedEvidence[]): string | undefined {
  const top = ranked.slice(0, COVERAGE_TOP);
  const named = top.find((e) => e.features.namedPath !== undefined);
  if (named) return `the file it names, ${named.result.path}, is in the repository`;
  const subject = subjectWords(q)
    .filter((w) => !HISTORY_FORM.test(w))
    .flatMap((w) => tokenize(w).slice(0, 1));
  if (subject.length === 0) return undefined;
  for (const e of top) {
    if (e.result.source !== 'git') continue;
    const words = new Set(tokenize(e.result.content).flatMap((t) => [t, inflectionKey(t)]));
    const held = subject.filter((t) => words.has(t) || words.has(inflectionKey(t)));
    if (held.length === subject.length) return `commit ${String(e.result.metadata.hash ?? '').slice(0, 10)} is about ${held.join(', ')}`;
  }
  return undefined;
}

/** The language server's diagnostics among the evidence, in words, when there are any. */
function diagnosticsFound(ranked: readonly RankedEvidence[]): string | undefined {
  const found = ranked.filter((e) => e.result.metadata.diagnostic === true);
  if (found.length === 0) return undefined;
  const files = [...new Set(found.map((e) => e.result.path))];
  return `the language server reports ${found.length} diagnostic${found.length === 1 ? '' : 's'} in ${files.join(', ')}`;
}
