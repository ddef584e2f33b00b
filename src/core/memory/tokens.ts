/**
 * Exact token counts for conversation budgets, with `gpt-tokenizer` (o200k_base, the encoding
 * of GPT-4o and later). Loading its tables takes about 300 ms, so it is imported on first use:
 * a thread push or a note search never pays for it.
 */

export type TokenCounter = (text: string) => number;

let counter: Promise<TokenCounter> | undefined;

/** The process-wide counter, loaded once. */
export function loadTokenCounter(): Promise<TokenCounter> {
  counter ??= import('gpt-tokenizer').then(
    (m) => (text: string) => (text ? m.countTokens(text) : 0),
    (e: unknown) => {
      counter = undefined;
      throw e;
    },
  );
  return counter;
}
