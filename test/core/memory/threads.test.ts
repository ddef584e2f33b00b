import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { VltError } from '../../../src/core/errors';
import { agentIdFromClientInfo, oracleSessionThread } from '../../../src/core/memory';
import { ORACLE_LOG_PREFIX } from '../../../src/core/memory/threads';
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

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(VltError);
    return (e as VltError).code;
  }
  return 'ok';
}

describe('threads: lazy summaries', () => {
  it("redoes a summary from the first entry when the configured model is another than the one that wrote it", async () => {
    const first = await openMemory(ws.dir, { fake, chatModel: 'model-a' });
    for (let i = 1; i <= 4; i++) await first.threads.push('design', `Entry ${i}: about module${i}.`);
    fake.script.chat.push({ content: 'BY-MODEL-A' });
    expect((await first.threads.read('design')).summary).toMatchObject({ text: 'BY-MODEL-A', kind: 'llm', newly_summarized: 4 });
    await first.close();

    // The same model: nothing to redo.
    const same = await openMemory(ws.dir, { fake, chatModel: 'model-a' });
    expect((await same.threads.read('design')).summary.text).toBe('BY-MODEL-A');
    expect(fake.counts.chat).toBe(1);
    await same.close();

    const other = await openMemory(ws.dir, { fake, chatModel: 'model-b' });
    fake.script.chat.push({ content: 'BY-MODEL-B' });
    const view = await other.threads.read('design');
    expect(view.summary).toMatchObject({ text: 'BY-MODEL-B', kind: 'llm', newly_summarized: 4 });
    const prompt = chatPrompts(fake)[1]!;
    expect(prompt).toContain('Entry 1: about module1.');
    expect(prompt).not.toContain('BY-MODEL-A');
    expect(fake.counts.chat).toBe(2);
    // Redone once: the next read with model-b costs nothing.
    await other.threads.read('design');
    expect(fake.counts.chat).toBe(2);
    await other.close();

    // Without a model, the summary a model wrote stays.
    const none = await openMemory(ws.dir);
    expect((await none.threads.read('design')).summary).toMatchObject({ text: 'BY-MODEL-B', kind: 'llm' });
    await none.close();
  });

  it('pushes without the model, summarises once on read, then folds in only the new entries', async () => {
    const memory = await openMemory(ws.dir, { fake, embeddings: true });
    for (let i = 1; i <= 10; i++) await memory.threads.push('design', `Entry ${i}: looked at module${i} and decided nothing yet.`, { author: 'agent-a' });
    expect(fake.counts.chat).toBe(0);
    expect(fake.counts.embeddings).toBe(0);

    fake.script.chat.push({ content: 'SUMMARY-ONE: ten entries about modules.' });
    const first = await memory.threads.read('design');
    expect(fake.counts.chat).toBe(1);
    expect(first.summary).toMatchObject({ text: 'SUMMARY-ONE: ten entries about modules.', kind: 'llm', newly_summarized: 10 });
    expect(first.summary.last_summarized_node_id).toBe(first.entries[9]!.id);
    expect(chatPrompts(fake)[0]).toContain('Entry 10: looked at module10');

    // Reading again with nothing new costs nothing.
    await memory.threads.read('design');
    expect(fake.counts.chat).toBe(1);

    for (let i = 11; i <= 13; i++) await memory.threads.push('design', `Entry ${i}: new finding about cache${i}.`);
    expect(fake.counts.chat).toBe(1);
    fake.script.chat.push({ content: 'SUMMARY-TWO' });
    const second = await memory.threads.read('design');
    expect(fake.counts.chat).toBe(2);
    expect(second.summary).toMatchObject({ text: 'SUMMARY-TWO', newly_summarized: 3 });
    const prompt = chatPrompts(fake)[1]!;
    expect(prompt).toContain('SUMMARY-ONE: ten entries about modules.');
    for (let i = 11; i <= 13; i++) expect(prompt).toContain(`Entry ${i}: new finding about cache${i}.`);
    for (let i = 1; i <= 10; i++) expect(prompt).not.toContain(`Entry ${i}:`);
    expect(prompt).toContain('New entries (3)');
    await memory.close();
  });

  it('keeps the cached summary across processes (a new Memory reads it from disk)', async () => {
    const a = await openMemory(ws.dir, { fake });
    await a.threads.push('t', 'one');
    fake.script.chat.push({ content: 'cached summary' });
    await a.threads.read('t');
    await a.close();
    const b = await openMemory(ws.dir, { fake });
    expect((await b.threads.read('t')).summary.text).toBe('cached summary');
    expect(fake.counts.chat).toBe(1);
    expect((await b.threads.list())[0]).toMatchObject({ thread: 't', entry_count: 1, summary: 'current' });
    await b.threads.push('t', 'two');
    expect((await b.threads.list())[0]!.summary).toBe('stale');
    await b.close();
  });

  it('summarises extractively without a model, keeping decisions, symbols and files', async () => {
    const memory = await openMemory(ws.dir);
    await memory.threads.push('arch', 'We decided to use `IndexStore.commit` for persistence. It lives in src/core/store/store.ts.');
    await memory.threads.push('arch', 'Looked at the HybridSearch fusion weights.');
    const view = await memory.threads.read('arch');
    expect(view.summary.kind).toBe('extractive');
    expect(view.summary.text).toMatch(/Extractive summary/);
    expect(view.summary.text).toContain('We decided to use `IndexStore.commit` for persistence.');
    expect(view.summary.text).toContain('IndexStore.commit');
    expect(view.summary.text).toContain('HybridSearch');
    expect(view.summary.text).toContain('src/core/store/store.ts');
    await memory.threads.push('arch', 'Third: rewrote parsePath in src/x.ts.');
    const again = await memory.threads.read('arch');
    expect(again.summary.newly_summarized).toBe(1);
    expect(again.summary.text).toContain('#3 user: Third: rewrote parsePath in src/x.ts.');
    await memory.close();
  });

  it('falls back to an extractive summary when the model fails, and retries on the next read', async () => {
    const memory = await openMemory(ws.dir, { fake });
    await memory.threads.push('t', 'An entry about RetryPolicy.');
    fake.fail('chat', '400');
    const failed = await memory.threads.read('t');
    expect(failed.summary.kind).toBe('extractive');
    expect(failed.summary.note).toMatch(/language model failed/);
    expect(failed.summary.text).toContain('RetryPolicy');
    fake.script.chat.push({ content: 'model summary' });
    const ok = await memory.threads.read('t');
    expect(ok.summary).toMatchObject({ kind: 'llm', text: 'model summary', newly_summarized: 1 });
    await memory.close();
  });
});

describe('threads: seek, list, validation', () => {
  it('ranks entries by BM25, and fuses vectors in when embeddings are configured', async () => {
    const memory = await openMemory(ws.dir, { fake, embeddings: true });
    await memory.threads.push('a', 'The flux capacitor needs 1.21 gigawatts.');
    await memory.threads.push('b', 'Lunch options near the office.');
    await memory.threads.push('b', 'The capacitor bank was replaced.');
    expect(fake.counts.embeddings).toBe(0);
    // The query is an entry's exact text, so the fake's hash vectors rank it first too.
    const hits = await memory.threads.seek('The flux capacitor needs 1.21 gigawatts.', { k: 3 });
    expect(hits[0]).toMatchObject({ thread: 'a', seq: 1 });
    expect(hits[0]!.retrievers).toContain('bm25');
    expect(hits.some((h) => h.retrievers.includes('vector'))).toBe(true);
    // Vectors are kept beside memory.db, never in it: a push must not rewrite them.
    expect(existsSync(path.join(ws.dir, '.vlt', 'memory-vectors.db'))).toBe(true);
    const embeddedOnce = fake.counts.embeddings;
    expect(embeddedOnce).toBeGreaterThan(0);
    // Entry vectors are kept: a second seek embeds only the query.
    await memory.threads.seek('lunch', { k: 3 });
    expect(fake.counts.embeddings).toBe(embeddedOnce + 1);
    const inB = await memory.threads.seek('The capacitor bank was replaced.', { thread: 'b' });
    expect(new Set(inB.map((h) => h.thread))).toEqual(new Set(['b']));
    expect(inB[0]).toMatchObject({ thread: 'b', seq: 2 });
    await memory.close();
  });

  it('reads only the entries a seek returns, so that seeking does not slow down as entries pile up', async () => {
    const memory = await openMemory(ws.dir);
    for (let i = 0; i < 300; i++) await memory.threads.push(i % 2 ? 'odd' : 'even', `entry ${i} about topic${i % 50} ${'filler words '.repeat(40)}`);
    const db = (memory.threads as unknown as { db: { read<T>(fn: (tx: { all(sql: string, params?: unknown[]): unknown[] }) => T): Promise<T> } }).db;
    const read = db.read.bind(db);
    const rowsRead: number[] = [];
    db.read = (fn) =>
      read((tx) =>
        fn({
          ...tx,
          all: (sql: string, params?: unknown[]) => {
            const rows = tx.all(sql, params);
            if (/\btext\b[\s\S]*FROM entries/.test(sql)) rowsRead.push(rows.length);
            return rows;
          },
        } as typeof tx),
      );
    await memory.threads.seek('warm up the index');
    rowsRead.length = 0;
    const hits = await memory.threads.seek('topic7', { k: 5 });
    expect(hits).toHaveLength(5);
    for (const h of hits) expect(h.text).toMatch(/^entry \d+ about topic7 /);
    // The text of the five hits, not of all 300 entries.
    expect(rowsRead.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(5);
    const odd = await memory.threads.seek('topic7', { k: 3, thread: 'odd' });
    expect(odd.map((h) => h.thread)).toEqual(['odd', 'odd', 'odd']);
    await memory.close();
  });

  it('leaves the threads a prefix names out before ranking, so that they cannot crowd out the rest', async () => {
    const memory = await openMemory(ws.dir);
    // Forty logged oracle answers that match the words better than the one real decision.
    for (let i = 0; i < 40; i++) await memory.threads.push(oracleSessionThread(new Date(2026, 0, 1 + (i % 28))), `cache eviction cache eviction cache eviction answer ${i}`, { author: 'oracle' });
    await memory.threads.push('storage', 'Decided an LRU for cache eviction, bounded by bytes.', { author: 'dev' });
    const all = await memory.threads.seek('cache eviction', { k: 3 });
    expect(all.every((h) => h.thread.startsWith(ORACLE_LOG_PREFIX))).toBe(true);
    const real = await memory.threads.seek('cache eviction', { k: 3, skipPrefix: ORACLE_LOG_PREFIX });
    expect(real.map((h) => h.thread)).toEqual(['storage']);
    await memory.close();
  });

  it('keeps lexical results when the embedding endpoint fails', async () => {
    const memory = await openMemory(ws.dir, { fake, embeddings: true });
    await memory.threads.push('a', 'zebra crossing');
    fake.fail('embeddings', '400', 3);
    const hits = await memory.threads.seek('zebra');
    expect(hits.map((h) => [h.thread, h.retrievers])).toEqual([['a', ['bm25']]]);
    await memory.close();
  });

  it('refuses bad names, empty text and unknown threads with clear codes', async () => {
    const memory = await openMemory(ws.dir);
    expect(await codeOf(memory.threads.push('../evil', 'x'))).toBe('USAGE');
    expect(await codeOf(memory.threads.push('ok', '   '))).toBe('USAGE');
    expect(await codeOf(memory.threads.push('ok', 'x', { author: '' }))).toBe('USAGE');
    expect(await codeOf(memory.threads.push('ok', 'x'.repeat(100_001)))).toBe('USAGE');
    expect(await codeOf(memory.threads.read('missing'))).toBe('NOT_FOUND');
    expect(await codeOf(memory.threads.seek(''))).toBe('USAGE');
    await memory.close();
  });
});

describe('threads: concurrency', () => {
  it('loses nothing when 10 pushes to one thread run at once in one process', async () => {
    const memory = await openMemory(ws.dir);
    await Promise.all(Array.from({ length: 10 }, (_, i) => memory.threads.push('busy', `concurrent entry ${i}`)));
    const view = await memory.threads.read('busy');
    expect(view.entry_count).toBe(10);
    expect(view.entries.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(new Set(view.entries.map((e) => e.text)).size).toBe(10);
    await memory.close();
  });

  it('loses nothing when 10 separate Memory instances (each its own cache) push at once', async () => {
    const memories = await Promise.all(Array.from({ length: 10 }, () => openMemory(ws.dir)));
    await Promise.all(memories.map((m, i) => m.threads.push('shared', `writer ${i}`)));
    const view = await memories[0]!.threads.read('shared');
    expect(view.entries.map((e) => e.text).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `writer ${i}`).sort());
    await Promise.all(memories.map((m) => m.close()));
  });

  it('loses nothing when 10 processes push at once', async () => {
    // A tiny child that pushes through the real module graph, bundled by vitest's own loader
    // would be slow to start 10 times; the built CLI is what users run, so the CLI test covers
    // that path too. Here: 10 node processes running one esbuild bundle of the ThreadStore.
    const esbuild = await import('esbuild');
    const script = path.join(ws.dir, 'push.ts');
    writeFileSync(
      script,
      `import { MemoryDb } from ${JSON.stringify(path.resolve(__dirname, '../../../src/core/memory/db'))};
       import { ThreadStore } from ${JSON.stringify(path.resolve(__dirname, '../../../src/core/memory/threads'))};
       import { silentLogger } from ${JSON.stringify(path.resolve(__dirname, '../../../src/core/ports'))};
       (async () => {
         const db = await MemoryDb.open(process.argv[2]!, silentLogger);
         await new ThreadStore(db).push('procs', 'from pid ' + process.pid + ' #' + process.argv[3]);
         await db.close();
       })().catch((e) => { console.error(e); process.exit(1); });`,
    );
    const bundle = path.join(ws.dir, 'push.cjs');
    await esbuild.build({ entryPoints: [script], bundle: true, platform: 'node', format: 'cjs', outfile: bundle, logLevel: 'silent' });
    const run = (i: number) =>
      new Promise<number>((resolve) => {
        const env = { ...process.env, VLT_SQL_WASM: require.resolve('sql.js/dist/sql-wasm.wasm') };
        const child = spawn(process.execPath, [bundle, ws.dir, String(i)], { stdio: ['ignore', 'ignore', 'inherit'], env });
        child.on('close', (code) => resolve(code ?? -1));
      });
    const codes = await Promise.all(Array.from({ length: 10 }, (_, i) => run(i)));
    expect(codes).toEqual(Array(10).fill(0));
    const memory = await openMemory(ws.dir);
    const view = await memory.threads.read('procs');
    expect(view.entry_count).toBe(10);
    expect(view.entries.map((e) => e.text.split('#')[1]).sort()).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
    await memory.close();
  }, 60_000);
});

describe('oracle session logging', () => {
  it('logs question and answer to the dated thread with their authors, and to the session', async () => {
    const at = new Date(2025, 0, 31, 15, 30);
    const memory = await openMemory(ws.dir, { clock: { now: () => at.getTime() } });
    const res = await memory.logOracleExchange({ question: 'How does auth work?', answer: 'Through AuthMiddleware.', author: agentIdFromClientInfo({ name: 'claude-code', version: '1.2.0' }), session: 's1' });
    expect(res.thread).toBe('oracle-session-2025-01-31');
    expect(oracleSessionThread(at)).toBe('oracle-session-2025-01-31');
    const view = await memory.threads.read(res.thread);
    expect(view.entries.map((e) => [e.author, e.text])).toEqual([
      ['claude-code@1.2.0', 'How does auth work?'],
      ['oracle', 'Through AuthMiddleware.'],
    ]);
    expect((await memory.session('s1').events()).map((e) => [e.kind, e.author, e.exchange])).toEqual([
      ['question', 'claude-code@1.2.0', 1],
      ['answer', 'oracle', 1],
    ]);
    expect(agentIdFromClientInfo(undefined)).toBe('user');
    await memory.close();
  });
});
