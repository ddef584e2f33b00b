/**
 * Exact token counts with `gpt-tokenizer` (o200k_base, the encoding of GPT-4o and later), for
 * every budget the engine keeps: the repository map, tool answers, the conversation context and
 * the oracle's context. Loading its tables takes a few hundred milliseconds, so it is imported
 * on first use: a thread push or a note search never pays for it.
 */
import { VltError } from './errors';

export type TokenCounter = (text: string) => number;

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
      throw e instanceof VltError ? e : new VltError('INTERNAL', `could not load the tokenizer: ${e instanceof Error ? e.message : String(e)}`, undefined, { cause: e });
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
      throw new VltError('INTERNAL', `could not load the tokenizer: ${e instanceof Error ? e.message : String(e)}`, undefined, { cause: e });
    });
  return counter;
}
