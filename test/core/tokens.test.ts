import { describe, expect, it } from 'vitest';
import { charsForTokens, estimateTokens, loadTokenCounter, tokensForChars } from '../../src/core/tokens';
import { loadTokenCounter as memoryCounter } from '../../src/core/memory/tokens';
import { loadTokenCounter as mapCounter } from '../../src/core/intel/repomap';

describe('the token counter', () => {
  it('counts text that spells a special token as plain text instead of throwing', async () => {
    const count = await loadTokenCounter();
    // gpt-tokenizer refuses "<|endoftext|>" by default; tokenizer code and transcripts contain it.
    expect(count('a <|endoftext|> b')).toBeGreaterThan(3);
    expect(count('')).toBe(0);
    expect(count('hello world')).toBe(2);
  });

  it('is one counter for the map, the session and the oracle', async () => {
    const [a, b, c] = await Promise.all([loadTokenCounter(), memoryCounter(), mapCounter()]);
    expect(b).toBe(a);
    expect(c).toBe(a);
  });
});

describe('the character estimate', () => {
  it('is characters / 4, rounded up, as the tool descriptions promise', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('abc')).toBe(1);
    expect(estimateTokens('abcd')).toBe(1);
    expect(estimateTokens('abcde')).toBe(2);
    expect(tokensForChars(4001)).toBe(1001);
  });

  it('turns a token budget into the longest text it allows', () => {
    expect(charsForTokens(1000)).toBe(4000);
    expect(estimateTokens('x'.repeat(charsForTokens(1000)))).toBe(1000);
    expect(estimateTokens('x'.repeat(charsForTokens(1000) + 1))).toBe(1001);
    expect(charsForTokens(-3)).toBe(0);
    expect(charsForTokens(2.9)).toBe(8);
  });
});
