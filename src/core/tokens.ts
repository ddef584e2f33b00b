/**
 * Token counts, the one place the engine turns text into tokens. There are two ways, and
 * every budget uses one of them:
 *
 * - {@link loadTokenCounter} / {@link loadTokenizer}: exact counts with `gpt-tokenizer`
 *   (o200k_base, the encoding of GPT-4o and later). Use them where text is assembled for a
 *   model and the budget must hold: the repository map, the conversation context, the
 *   oracle's context. Loading its tables takes a few hundred milliseconds, so it is imported
 *   on first use: a thread push or a note search never pays for it.
 * - {@link estimateTokens}, {@link tokensForChars}, {@link charsForTokens}: characters / 4,
 *   an estimate with no tokenizer. Use it where a budget is checked in characters many times
 *   over (tool answers sized as their JSON grows, note contexts) or over text too large to
 *   tokenise (a dry run's report over every file: the exact counter is quadratic in a long
 *   run without spaces or punctuation). Tool descriptions promise this rule ("estimated as
 *   characters / 4"), so it must not change without them.
 */
import { VltError, errorMessage } from './errors';

export type TokenCounter = (text: string) => number;

/** The estimate's rule: one token per four UTF-16 code units. */
export const CHARS_PER_TOKEN = 4;

/**
 * An estimate of how many tokens a text costs a model: one token per four UTF-16 code units,
 * rounded up. Source code with many symbols, and non-Latin text, cost more tokens per
 * character than this assumes, so budgets made with it are approximate in that direction.
 */
export function estimateTokens(text: string): number {
  return tokensForChars(text.length);
}

/** {@link estimateTokens} for a text of `chars` UTF-16 code units. */
export function tokensForChars(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/** The largest text length (in UTF-16 code units) that {@link estimateTokens} counts as at most `tokens`. */
export function charsForTokens(tokens: number): number {
  return Math.max(0, Math.floor(tokens)) * CHARS_PER_TOKEN;
}

/** The counter, and encoding to token ids and back (for cutting a long text in one pass). */
export interface Tokenizer {
  count: TokenCounter;
  encode(text: string): number[];
  decode(ids: readonly number[]): string;
}

let counter: Promise<TokenCounter> | undefined;
let tokenizer: Promise<Tokenizer> | undefined;

/**
 * The tokenizer with encode/decode: a text is cut to a budget by encoding it once, instead of
 * counting ever shorter prefixes (a binary search re-tokenises the text a dozen times).
 */
export function loadTokenizer(): Promise<Tokenizer> {
  tokenizer ??= Promise.all([loadTokenCounter(), import('gpt-tokenizer')])
    .then(([count, m]): Tokenizer => {
      const opts = { disallowedSpecial: new Set<string>() };
      return { count, encode: (text) => m.encode(text, opts), decode: (ids) => m.decode(ids) };
    })
    .catch((e: unknown) => {
      tokenizer = undefined;
      throw e instanceof VltError ? e : new VltError('INTERNAL', `could not load the tokenizer: ${errorMessage(e)}`, undefined, { cause: e });
    });
  return tokenizer;
}

/**
 * The process-wide counter, loaded once. Text that spells a special token (`<|endoftext|>`, as
 * tokenizer code and chat transcripts do) is counted as the plain text it is, never refused.
 */
export function loadTokenCounter(): Promise<TokenCounter> {
  counter ??= import('gpt-tokenizer')
    .then((m): TokenCounter => {
      const opts = { disallowedSpecial: new Set<string>() };
      return (text) => (text ? m.countTokens(text, opts) : 0);
    })
    .catch((e: unknown) => {
      counter = undefined;
      throw new VltError('INTERNAL', `could not load the tokenizer: ${errorMessage(e)}`, undefined, { cause: e });
    });
  return counter;
}
