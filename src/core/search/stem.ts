/**
 * Derivations of an English word: the words that share its Porter stem ("localized", "locale",
 * "localization"), with the stemmer Orama ships, reached through its public tokenizer component.
 * Search itself folds only plurals (tokenizer.ts): a derivation usually names something else. This
 * is for the questions where any form of a root will do, such as whether the code names things
 * with a word at all (the oracle's no-context decision).
 */
import { tokenizer } from '@orama/orama/components';

let porter: ((word: string) => string) | undefined;

/** The Porter stem of a lower-case word. */
export function stem(word: string): string {
  if (!porter) {
    const t = tokenizer.createTokenizer({ language: 'english', stemming: true });
    const s = t.stemmer;
    porter = s ? (w) => s(w) : (w) => w;
  }
  return porter(word);
}

/** Endings a derivation adds to a stem. */
const ENDINGS = ['', 'e', 's', 'es', 'ed', 'ing', 'er', 'ers', 'or', 'ors', 'ion', 'ions', 'ation', 'ations', 'ate', 'ates', 'ize', 'izes', 'ized', 'izer', 'ise', 'ises', 'ised', 'al', 'ally', 'ity', 'ities', 'ic', 'ics', 'ive', 'ment', 'ments', 'ness', 'y', 'ies', 'able', 'ible', 'ance', 'ence'];

/**
 * Words of the same Porter stem as `word` (lower case, letters only), made by adding common
 * endings to the stem and kept when they stem back to it. Includes the stem itself when it is a
 * word's form; not `word`.
 */
export function derivations(word: string): string[] {
  if (!/^[a-z]{4,}$/.test(word)) return [];
  const root = stem(word);
  const out = new Set<string>();
  for (const ending of ENDINGS) {
    const w = root + ending;
    if (w !== word && w.length >= 4 && stem(w) === root) out.add(w);
  }
  return [...out];
}
