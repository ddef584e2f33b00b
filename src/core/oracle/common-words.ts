/**
 * The commonest words of English (SCOWL's size-10 list, ~4,000 words with their inflections;
 * common-english.json says where it comes from and carries its copyright notice). A question's
 * word that the index never mentions says little about whether the project holds the answer when
 * it is one of these ("decide", "quickly", "whole", "turns"): that is how the question is put. A
 * rarer word the index lacks ("payroll", "kubelet", "sourdough") is more often what it is about.
 */
import list from './common-english.json';

let words: ReadonlySet<string> | undefined;

/** Whether `word` (any case) is one of the commonest English words. */
export function isCommonEnglish(word: string): boolean {
  words ??= new Set(list.words);
  return words.has(word.toLowerCase());
}
