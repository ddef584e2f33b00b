/**
 * Every source file is searchable, grammar or not: a workspace with one file in each language
 * read as text (Lua, Elixir, Haskell, SQL, Zig, …) indexes all of them, finds each by a name it
 * defines and by its words, says per language how it was read, and counts what no language reads
 * by extension instead of dropping it silently.
 */
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/core/engine';
import { readerOf } from '../../src/core/parse/languages';
import { LANGUAGES, type LanguageId } from '../../src/core/types';
import { nodeWorkspaceFs } from '../../src/node/fs';
import { tempDir } from '../helpers/cli';

const FIXTURES = path.resolve(__dirname, '../fixtures/lang');
const TEXT_LANGUAGES = LANGUAGES.filter((l) => readerOf(l) === 'text');

/** A name each text fixture defines, and a phrase from its comments or code. */
const PROBES: Partial<Record<LanguageId, { name: string; words: string }>> = {
  bash: { name: 'rotate_logs', words: 'compressed log files older than days' },
  elixir: { name: 'checkout', words: 'shopping cart items quantities running total' },
  erlang: { name: 'incr', words: 'counter process receive value' },
  haskell: { name: 'push', words: 'FIFO queue made of two lists' },
  lua: { name: 'emit', words: 'tiny event emitter handlers' },
  scala: { name: 'withDiscount', words: 'order line discount total' },
  zig: { name: 'Stack', words: 'fixed capacity stack of integers' },
  objc: { name: 'startWithCompletion', words: 'download completion handler data' },
  dart: { name: 'withdraw', words: 'bank account balance in cents' },
  ocaml: { name: 'min_elt', words: 'binary search tree of integers' },
  sql: { name: 'order_lines', words: 'total quantity ordered per SKU' },
  // Defined with `fun!`: Vim takes any abbreviation of :function from `fu` on.
  vimscript: { name: 'strip#Leading', words: 'blank lines at the top of the buffer' },
};

describe('languages read as text', () => {
  let dir: string;
  let engine: Engine;
  beforeAll(async () => {
    dir = tempDir('vlt-text-langs-');
    for (const lang of LANGUAGES) cpSync(path.join(FIXTURES, lang), path.join(dir, lang), { recursive: true });
    writeFileSync(path.join(dir, 'NOTES.txt'), 'plain text\n');
    writeFileSync(path.join(dir, 'data.yaml'), 'a: 1\n');
    engine = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null }, 'write');
    await engine.index();
  }, 60_000);
  afterAll(async () => {
    await engine?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('indexes every fixture, one per language, and says how each language was read', () => {
    const status = engine.status();
    const fixtures = LANGUAGES.flatMap((l) => readdirSync(path.join(FIXTURES, l)));
    expect(fixtures.length).toBe(LANGUAGES.length);
    expect(status.files).toBe(fixtures.length);
    for (const lang of LANGUAGES) expect(status.languages[lang], lang).toBe(1);
    for (const lang of TEXT_LANGUAGES) expect(status.language_readers[lang], lang).toBe('text');
    expect(status.language_readers.go).toBe('grammar');
    expect(status.unsupported_files).toBe(2);
    expect(status.unsupported_extensions).toEqual({ '.txt': 1, '.yaml': 1 });
  });

  it('finds a definition of every text language by its name, through the symbol table', async () => {
    for (const lang of TEXT_LANGUAGES) {
      const golden = JSON.parse(readFileSync(path.resolve(__dirname, `../golden/parse/${lang}.json`), 'utf8')) as { symbols: Array<{ name: string }> };
      const name = golden.symbols.map((x) => x.name).find((n) => /^[A-Za-z_]\w{3,}$/.test(n));
      expect(name, `${lang} defines nothing`).toBeDefined();
      const hits = (await engine.search(name!, { k: 5 })).hits.filter((h) => h.path.startsWith(`${lang}/`));
      expect(hits[0]?.retrievers, `${lang}: ${name}`).toContain('symbol');
    }
  });

  for (const [lang, probe] of Object.entries(PROBES)) {
    it(`finds ${lang} by a name it defines and by its words`, async () => {
      const byName = (await engine.search(probe.name, { k: 3 })).hits;
      expect(byName[0]?.path.startsWith(`${lang}/`), `${probe.name}: ${byName.map((h) => h.path).join(', ')}`).toBe(true);
      const byWords = (await engine.search(probe.words, { k: 10 })).hits;
      expect(byWords.map((h) => h.path.split('/')[0]), probe.words).toContain(lang);
    });
  }
});
