/**
 * Proper names of two words in a question ("Unreal Engine", "Visual Basic", "VS Code")
 * or with a dot ("Ember.js", "ASP.NET"), and whether the workspace ever writes them. A project
 * that uses a product or framework names it whole somewhere, in code, docs or configuration; one
 * whose chunks hold "unreal" here and "engine" there does not have it, however often each word
 * occurs. The no-context decision (relevance.ts) asks this of the question as the user wrote it.
 */
import type { Engine } from '../engine';
import { isStopword, tokenize } from '../search/tokenizer';
import type { RankedEvidence } from './types';

/** A word of a proper name: capitalised ("Unreal") or an acronym ("VS", "JSON"). */
const NAME_WORD = /^(?:[A-Z][a-z]+[a-z0-9]*|[A-Z]{2,6}[0-9]?)$/;
/** A dotted product name: "Ember.js", "ASP.NET", "Socket.io". */
const DOTTED = /^([A-Za-z][A-Za-z0-9]*)\.(js|net|io)$/i;
/** Words that start a question or join names, never part of one. */
const NOT_NAME = new Set(['how', 'what', 'where', 'which', 'who', 'why', 'when', 'does', 'do', 'did', 'is', 'are', 'can', 'could', 'should', 'would', 'will', 'the', 'a', 'an', 'i', 'in', 'on', 'of', 'and', 'or', 'to', 'for', 'with', 'from', 'by']);
/**
 * Words that make a capitalised phrase a title or a status line ("Too Many Requests", "Not
 * Found", "Bad Request"), not a product's name: such phrases are often written only as a number.
 */
const COMMON = new Set(['too', 'many', 'much', 'more', 'most', 'very', 'all', 'any', 'some', 'no', 'not', 'bad', 'good', 'new', 'old', 'first', 'last', 'other', 'same', 'each', 'every', 'own', 'only', 'unknown', 'invalid']);
/**
 * Above this many chunks holding all of a name's words, the name is taken as written without
 * reading them: words that often meet are the project's own pairing, and reading more chunks
 * costs more than the answer is worth (a few hundred milliseconds in a cold process).
 */
const MAX_SCANNED = 256;

/** The proper names of `text`, each as its words; none in a question written in title case. */
export function properNames(text: string): string[][] {
  const words = text.split(/\s+/).filter((w) => w !== '');
  const bare = words.map((w) => w.replace(/^[^\w]+/, '').replace(/['’]s$|[^\w.]+$|\.$/g, ''));
  // "How Does The Indexer Work?": capitals that say nothing about names.
  const capitalised = bare.slice(1).filter((w) => /^[A-Z]/.test(w)).length;
  if (bare.length > 3 && capitalised > (bare.length - 1) / 2) return [];
  const names: string[][] = [];
  let run: string[] = [];
  // Two words exactly: a longer capitalised run is more often a title or a status line
  // ("Internal Server Error") than a product, and is left to the other tests.
  const flush = () => {
    if (run.length === 2 && !run.some((w) => COMMON.has(w.toLowerCase()))) names.push(run);
    run = [];
  };
  words.forEach((w, i) => {
    const b = bare[i]!;
    const dotted = DOTTED.exec(b);
    if (dotted && !/\//.test(w)) {
      flush();
      names.push([dotted[1]!, dotted[2]!]);
      return;
    }
    // The question's first word, and a word after the end of a sentence, are capitalised by grammar.
    const sentenceStart = i === 0 || /[.?!:]$/.test(words[i - 1] ?? '');
    if (!sentenceStart && NAME_WORD.test(b) && !NOT_NAME.has(b.toLowerCase()) && !isStopword(b.toLowerCase())) run.push(b);
    else flush();
    // A possessive or punctuation ends the name ("Unity's Editor" is two names' worth, not one).
    if (/['’]s$|[,;:?!)]$/.test(w)) flush();
  });
  flush();
  return names;
}

/**
 * The names of {@link properNames} that no chunk writes with its words in a row (separated by
 * spaces, hyphens, underscores, dots or slashes, or joined: `UnrealEngine`, `emberjs`), and that
 * the notes and threads among the evidence do not write either. (The examples in this file are
 * chosen to be none that the no-context bench asks this repository about: its `self` corpus
 * indexes this file.)
 */
export function unwrittenNames(engine: Engine, text: string, ranked: readonly RankedEvidence[]): string[] {
  return properNames(text)
    .filter((name) => !written(engine, name, ranked))
    .map((name) => (DOTTED.test(name.join('.')) && name.length === 2 ? name.join('.') : name.join(' ')));
}

function written(engine: Engine, name: readonly string[], ranked: readonly RankedEvidence[]): boolean {
  const escaped = name.map((w) => w.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const phrase = new RegExp(`(?<![a-z0-9])${escaped.join('[\\s_\\-./]*')}`, 'i');
  if (ranked.some((e) => phrase.test(e.result.content) || phrase.test(e.result.path))) return true;
  const groups = name.map((w) => tokenize(w).slice(0, 1));
  if (groups.some((g) => g.length === 0)) return true;
  const { df } = engine.termRarity(groups.flat());
  if (groups.some((g) => (df.get(g[0]!) ?? 0) === 0)) return false;
  const all = (1 << groups.length) - 1;
  const ids = engine
    .termGroups(groups)
    .filter((m) => m.mask === all)
    .map((m) => m.id);
  if (ids.length > MAX_SCANNED) return true;
  for (let i = 0; i < ids.length; i += 64) {
    for (const row of engine.store.getChunks(ids.slice(i, i + 64))) if (phrase.test(row.text) || phrase.test(row.path)) return true;
  }
  return false;
}
