import { countTokens } from 'gpt-tokenizer';
import { appendFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { VltError } from '../../../src/core/errors';
import { MEMORY_FILE, MEMORY_JOURNAL_FILE, MemoryDb } from '../../../src/core/memory/db';
import { silentLogger } from '../../../src/core/ports';
import { JOURNAL_FOLD_BYTES, recordToolExchange, type SessionContext } from '../../../src/core/memory/session';
import { startFakeOpenAI, type FakeOpenAI } from '../../helpers/fake-openai';
import { chatPrompts, openMemory, tempWorkspace } from './setup';

let fake: FakeOpenAI;
let ws: { dir: string; cleanup: () => void };

beforeAll(async () => {
  fake = await startFakeOpenAI();
});

afterAll(async () => {
  await fake.close();
});

beforeEach(() => {
  fake.reset();
  ws = tempWorkspace();
});

afterEach(() => ws.cleanup());

const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima'];

/** Roughly `words` words of filler that differ per exchange. */
function filler(n: number, words: number): string {
  return Array.from({ length: words }, (_, i) => `${WORDS[(i + n) % WORDS.length]}${(i * 7 + n) % 13}`).join(' ');
}

/** One oracle exchange: question, a tool call and its result, answer. Exchange 1 carries the facts to keep. */
async function exchange(s: SessionContext, n: number): Promise<void> {
  const special = n === 1 ? ' We decided to use ExchangeOneWidget for caching, see src/one/widget.ts.' : '';
  await s.append({ kind: 'question', author: 'agent-x', text: `Question ${n}: how does Module${n}Service work?${special}` });
  await s.append({ kind: 'tool_call', tool: 'search_code', author: 'agent-x', text: `search_code({"query":"Module${n}Service"})` });
  await s.append({ kind: 'tool_result', tool: 'search_code', text: `Result ${n}: src/mod${n}/service.ts:10 ${filler(n, 300)}` });
  await s.append({ kind: 'answer', text: `Answer ${n}: Module${n}Service calls the store. ${filler(n + 1, 60)}` });
}

describe('session context: compression', () => {
  it('stays under budget over 40 exchanges, keeps the last 5 verbatim, and keeps exchange 1 findable', async () => {
    const memory = await openMemory(ws.dir);
    const s = memory.session('long');
    const budget = s.budgetTokens;
    expect(budget).toBe(16_000);
    for (let n = 1; n <= 40; n++) {
      await exchange(s, n);
      const st = await s.state();
      expect(st.tokens).toBeLessThanOrEqual(budget);
    }
    const st = await s.state();
    expect(st.compression_count).toBeGreaterThan(0);
    expect(st.summary_kind).toBe('extractive');
    // At least the last five are verbatim (more until the next compression is due); exchange 1 is not.
    expect(st.verbatim_exchanges.slice(-5)).toEqual([36, 37, 38, 39, 40]);
    expect(st.verbatim_exchanges).not.toContain(1);

    const events = await s.events();
    for (let n = 36; n <= 40; n++) {
      const q = events.find((e) => e.exchange === n && e.kind === 'question')!;
      expect(q.text).toBe(`Question ${n}: how does Module${n}Service work?`);
      expect(events.find((e) => e.exchange === n && e.kind === 'tool_result')!.text).toBe(`Result ${n}: src/mod${n}/service.ts:10 ${filler(n, 300)}`);
    }
    const rendered = await s.render();
    expect(countTokens(rendered)).toBeLessThanOrEqual(budget);
    for (let n = 36; n <= 40; n++) expect(rendered).toContain(`Result ${n}: src/mod${n}/service.ts:10 ${filler(n, 300)}`);
    expect(rendered).not.toContain(`Result 1: src/mod1/service.ts:10 ${filler(1, 300)}`);

    // The facts of exchange 1 survived: in the summary, in focus, and in search.
    expect(rendered).toContain('ExchangeOneWidget');
    expect(rendered).toContain('src/one/widget.ts');
    expect(rendered).toContain('We decided to use ExchangeOneWidget for caching, see src/one/widget.ts.');
    const focus = await s.focus();
    expect(focus.symbols).toContain('ExchangeOneWidget');
    expect(focus.files).toContain('src/one/widget.ts');
    const hits = await s.search('ExchangeOneWidget');
    expect(hits[0]).toMatchObject({ source: 'summary', from_exchange: 1 });
    expect(hits[0]!.text).toContain('ExchangeOneWidget');
    await memory.close();
  }, 120_000);

  it('compresses with the model when one is configured, and restores symbols the model dropped', async () => {
    const memory = await openMemory(ws.dir, { fake, budgetTokens: 4000 });
    const s = memory.session('llm');
    fake.script.chat.push(...Array.from({ length: 20 }, () => ({ content: 'MODEL SUMMARY: questions about services were answered.' })));
    for (let n = 1; n <= 12; n++) await exchange(s, n);
    const st = await s.state();
    expect(fake.counts.chat).toBeGreaterThan(0);
    expect(st.summary_kind).toBe('llm');
    expect(st.tokens).toBeLessThanOrEqual(4000);
    expect(st.summary).toContain('MODEL SUMMARY');
    expect(st.summary).toContain('ExchangeOneWidget');
    expect(st.summary).toContain('We decided to use ExchangeOneWidget for caching, see src/one/widget.ts.');
    const first = chatPrompts(fake)[0]!;
    expect(first).toContain('Question 1: how does Module1Service work?');
    expect(first).toContain('ExchangeOneWidget');
    expect(st.verbatim_exchanges.slice(-5)).toEqual([8, 9, 10, 11, 12]);
    await memory.close();
  }, 60_000);

  it('compresses extractively when the model fails', async () => {
    const memory = await openMemory(ws.dir, { fake, budgetTokens: 4000 });
    const s = memory.session('fails');
    fake.fail('chat', '400', 50);
    for (let n = 1; n <= 10; n++) await exchange(s, n);
    const st = await s.state();
    expect(st.compression_count).toBeGreaterThan(0);
    expect(st.summary_kind).toBe('extractive');
    expect(st.tokens).toBeLessThanOrEqual(4000);
    await memory.close();
  }, 60_000);
});

describe('session context: exchanges and sharing', () => {
  it('groups a question with its tool calls and answer, and a lone tool call with its result', async () => {
    const memory = await openMemory(ws.dir);
    const s = memory.session();
    await recordToolExchange(s, { tool: 'find_definition', input: { symbol: 'UserService' }, output: { path: 'src/user.ts', line: 3 } });
    await recordToolExchange(s, { tool: 'find_references', input: { symbol: 'UserService' }, output: 'src/a.ts:1' });
    await s.append({ kind: 'question', text: 'How does UserService reach the database?' });
    await s.append({ kind: 'tool_call', tool: 'search_code', text: 'search_code(db)' });
    await s.append({ kind: 'tool_result', tool: 'search_code', text: 'src/db.ts' });
    await s.append({ kind: 'tool_call', tool: 'read', text: 'read(src/db.ts)' });
    await s.append({ kind: 'answer', text: 'Through Db.connect.' });
    await s.append({ kind: 'tool_call', tool: 'x', text: 'x()' });
    expect((await s.events()).map((e) => `${e.exchange}:${e.kind}`)).toEqual([
      '1:tool_call',
      '1:tool_result',
      '2:tool_call',
      '2:tool_result',
      '3:question',
      '3:tool_call',
      '3:tool_result',
      '3:tool_call',
      '3:answer',
      '4:tool_call',
    ]);
    expect(s.id).toBe('default');
    await memory.close();
  });

  it('is one context for every Memory over the workspace (another process sees earlier calls)', async () => {
    const a = await openMemory(ws.dir);
    await recordToolExchange(a.session('shared'), { tool: 'find_definition', author: 'agent-1', input: { symbol: 'PaymentGateway' }, output: 'src/pay/gateway.ts:12' });
    await a.close();
    const b = await openMemory(ws.dir);
    const s = b.session('shared');
    expect((await s.focus()).symbols).toContain('PaymentGateway');
    expect(await s.render()).toContain('src/pay/gateway.ts:12');
    expect((await s.search('PaymentGateway'))[0]).toMatchObject({ source: 'verbatim', kind: 'tool_call', tool: 'find_definition' });
    expect((await b.session('other').events()).length).toBe(0);
    await b.close();
  });

  it('cuts an oversized event, renders within a smaller budget, validates ids, and clears', async () => {
    const memory = await openMemory(ws.dir, { budgetTokens: 2000 });
    const s = memory.session('small');
    const { event } = await s.append({ kind: 'tool_result', tool: 'dump', text: filler(0, 3000) });
    expect(event.tokens).toBeLessThanOrEqual(200);
    expect(event.text).toMatch(/\[cut: \d+ tokens, kept the first 200\]$/);
    for (let n = 0; n < 3; n++) await s.append({ kind: 'question', text: `q${n} ${filler(n, 20)}` });
    const short = await s.render(150);
    expect(countTokens(short)).toBeLessThanOrEqual(150);
    expect(short).toContain('q2');
    expect(short).not.toContain('[cut:');
    expect(() => memory.session('../bad')).toThrow(VltError);
    await s.clear();
    expect(await s.events()).toEqual([]);
    expect(await s.render()).toBe('');
    await memory.close();
  });
});

describe('session context: the journal (cheap records)', () => {
  const journal = () => path.join(ws.dir, '.vlt', MEMORY_JOURNAL_FILE);
  const store = () => path.join(ws.dir, '.vlt', MEMORY_FILE);

  it('records without rewriting the store, and every read sees the records in order', async () => {
    const memory = await openMemory(ws.dir);
    const s = memory.session('cheap');
    await s.append({ kind: 'question', text: 'Where is UserService defined?' });
    const before = statSync(store());
    for (let n = 0; n < 5; n++) await recordToolExchange(s, { tool: 'find_definition', author: 'agent-1', input: { symbol: `Svc${n}` }, output: `src/svc${n}.ts:${n + 1}` });
    const after = statSync(store());
    expect([after.ino, after.size, after.mtimeMs]).toEqual([before.ino, before.size, before.mtimeMs]);
    expect(statSync(journal()).size).toBeGreaterThan(0);

    const events = await s.events();
    expect(events.map((e) => `${e.exchange}:${e.kind}:${e.tool ?? ''}`)).toEqual([
      '1:question:',
      ...Array.from({ length: 5 }, () => ['1:tool_call:find_definition', '1:tool_result:find_definition']).flat(),
    ]);
    expect(events.filter((e) => e.kind === 'tool_result').map((e) => e.text)).toEqual(['src/svc0.ts:1', 'src/svc1.ts:2', 'src/svc2.ts:3', 'src/svc3.ts:4', 'src/svc4.ts:5']);
    expect(events[1]!.author).toBe('agent-1');
    // Reading folded the journal into the store and emptied it.
    expect(statSync(journal()).size).toBe(0);
    expect(statSync(store()).mtimeMs).toBeGreaterThanOrEqual(after.mtimeMs);
    await memory.close();
  });

  it('is read by another Memory (another process) before the writer folds or closes', async () => {
    const a = await openMemory(ws.dir);
    await recordToolExchange(a.session('shared'), { tool: 'find_references', author: 'agent-1', input: { symbol: 'LedgerEntry' }, output: 'src/ledger.ts:40' });
    const b = await openMemory(ws.dir);
    expect((await b.session('shared').focus()).symbols).toContain('LedgerEntry');
    expect((await b.session('shared').events()).map((e) => e.kind)).toEqual(['tool_call', 'tool_result']);
    await b.close();
    await a.close();
  });

  it('skips a record torn by a kill and keeps the ones written after it', async () => {
    const memory = await openMemory(ws.dir);
    const s = memory.session('torn');
    await recordToolExchange(s, { tool: 'search_code', input: { query: 'first' }, output: 'one' });
    // A writer killed in the middle of its append leaves half a line.
    appendFileSync(journal(), '\n{"u":"dead","s":"torn","k":"tool_ca');
    await recordToolExchange(s, { tool: 'search_code', input: { query: 'second' }, output: 'two' });
    const events = await s.events();
    expect(events.map((e) => e.text)).toEqual(['search_code({"query":"first"})', 'one', 'search_code({"query":"second"})', 'two']);
    await memory.close();
  });

  it('applies each record once when a fold was killed between writing the store and emptying the journal', async () => {
    const memory = await openMemory(ws.dir);
    const s = memory.session('once');
    await recordToolExchange(s, { tool: 'find_definition', input: { symbol: 'A' }, output: 'a.ts:1' });
    await recordToolExchange(s, { tool: 'find_definition', input: { symbol: 'B' }, output: 'b.ts:2' });
    const pending = readFileSync(journal());
    expect(await s.events()).toHaveLength(4);
    // As if the fold had died after its atomic write of the store: the journal still holds all.
    writeFileSync(journal(), pending);
    await recordToolExchange(s, { tool: 'find_definition', input: { symbol: 'C' }, output: 'c.ts:3' });
    const again = await openMemory(ws.dir);
    expect((await again.session('once').events()).map((e) => e.text)).toEqual([
      'find_definition({"symbol":"A"})',
      'a.ts:1',
      'find_definition({"symbol":"B"})',
      'b.ts:2',
      'find_definition({"symbol":"C"})',
      'c.ts:3',
    ]);
    await again.close();
    await memory.close();
  });

  it('loses nothing when two writers record and read at once, and keeps each writer in order', async () => {
    const a = await openMemory(ws.dir);
    const b = await openMemory(ws.dir);
    const write = async (m: typeof a, who: string) => {
      const s = m.session('busy');
      for (let n = 0; n < 30; n++) {
        await recordToolExchange(s, { tool: 't', author: who, input: { n }, output: `${who}-${n}` });
        if (n % 10 === 9) await s.state();
      }
    };
    await Promise.all([write(a, 'a'), write(b, 'b')]);
    const results = (await a.session('busy').events()).filter((e) => e.kind === 'tool_result').map((e) => e.text);
    expect(results).toHaveLength(60);
    for (const who of ['a', 'b']) expect(results.filter((t) => t.startsWith(`${who}-`))).toEqual(Array.from({ length: 30 }, (_, n) => `${who}-${n}`));
    await a.close();
    await b.close();
  });

  it('still answers a read when the journal cannot be folded now, and says so', async () => {
    const warnings: string[] = [];
    const logger = { ...silentLogger, warn: (m: string) => warnings.push(m) };
    const memory = await openMemory(ws.dir, { logger });
    const s = memory.session('stuck');
    await s.append({ kind: 'question', text: 'Where is LedgerEntry?' });
    await recordToolExchange(s, { tool: 'find_definition', input: { symbol: 'LedgerEntry' }, output: 'src/ledger.ts:4' });
    const fold = vi.spyOn(MemoryDb.prototype, 'foldJournal').mockRejectedValueOnce(new VltError('IO', 'cannot write .vlt/memory.db: read-only file system'));
    try {
      expect((await s.events()).map((e) => e.kind)).toEqual(['question']);
      expect(warnings.join('\n')).toMatch(/could not fold the recorded calls.*read-only file system/);
    } finally {
      fold.mockRestore();
    }
    // Once the store can be written again, nothing recorded was lost.
    expect((await s.events()).map((e) => e.kind)).toEqual(['question', 'tool_call', 'tool_result']);
    await memory.close();
  });

  it('folds by itself once the journal passes its size bound', async () => {
    const memory = await openMemory(ws.dir, { budgetTokens: 1_000_000 });
    const s = memory.session('big');
    const result = 'x'.repeat(64 * 1024);
    for (let n = 0; n * result.length <= JOURNAL_FOLD_BYTES; n++) await recordToolExchange(s, { tool: 'dump', input: { n }, output: result });
    expect(statSync(journal()).size).toBeLessThan(JOURNAL_FOLD_BYTES);
    await memory.close();
  });
});
