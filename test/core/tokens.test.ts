import { describe, expect, it } from 'vitest';
import { loadTokenCounter } from '../../src/core/tokens';
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
