/**
 * The text pack: thread entries and session digests lie in `.vlt/memory-text.pack`, so that
 * memory.db, which sql.js rewrites whole on every write, stays small however much memory
 * accumulates. Files written before the pack existed keep working.
 */
import { appendFileSync, mkdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MEMORY_FILE, MEMORY_SCHEMA_VERSION, MemoryDb, TEXT_PACK_FILE } from '../../../src/core/memory/db';
import { MISSING_TEXT } from '../../../src/core/memory/text-pack';
import { ThreadStore } from '../../../src/core/memory/threads';
import { silentLogger } from '../../../src/core/ports';
import { loadSqlJs } from '../../../src/core/store/sqlite';
import { openMemory, tempWorkspace } from './setup';

let ws: { dir: string; cleanup: () => void };

beforeEach(() => {
  ws = tempWorkspace();
});

afterEach(() => ws.cleanup());

const vlt = (f: string) => path.join(ws.dir, '.vlt', f);

describe('the memory text pack', () => {
  it("keeps memory.db small as entries accumulate: their text is in the pack, and reads, seeks and summaries see it", async () => {
    const db = await MemoryDb.open(ws.dir, silentLogger);
    const threads = new ThreadStore(db);
    const body = 'lorem ipsum '.repeat(250);
    for (let i = 0; i < 200; i++) await threads.push('oracle-log', `Q${i}: why does the widget cache expire? ${body}`, { author: 'oracle' });
    await threads.push('decisions', 'We keep the refresh token in the keychain, never on disk.');
    const dbBytes = statSync(vlt(MEMORY_FILE)).size;
    const packBytes = statSync(vlt(TEXT_PACK_FILE)).size;
    expect(packBytes).toBeGreaterThan(200 * body.length);
    // A few hundred bytes a row, in 4 KB pages; with the texts inline it would be larger than the pack.
    expect(dbBytes).toBeLessThan(packBytes / 4);

    const view = await threads.read('decisions');
    expect(view.entries.map((e) => e.text)).toEqual(['We keep the refresh token in the keychain, never on disk.']);
    expect(view.summary.text).toContain('keychain');
    const hits = await threads.seek('refresh token keychain', { k: 3 });
    expect(hits[0]).toMatchObject({ thread: 'decisions', text: 'We keep the refresh token in the keychain, never on disk.' });
    const log = await threads.read('oracle-log', { entries: 2 });
    expect(log.entries.map((e) => e.text.slice(0, 4))).toEqual(['Q198', 'Q199']);
    await db.close();
  });

  it('reads a memory.db written before the pack (texts inline), and adds packed entries beside them', async () => {
    const SQL = await loadSqlJs();
    const old = new SQL.Database();
    old.exec(`
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE threads (name TEXT PRIMARY KEY, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, summary TEXT, summary_kind TEXT, summary_state TEXT, last_summarized_node_id INTEGER NOT NULL DEFAULT 0, summarized_at INTEGER);
      CREATE TABLE entries (id INTEGER PRIMARY KEY AUTOINCREMENT, thread TEXT NOT NULL, seq INTEGER NOT NULL, author TEXT NOT NULL, text TEXT NOT NULL, created_at INTEGER NOT NULL, UNIQUE (thread, seq));
      CREATE TABLE sessions (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, summary TEXT, summary_kind TEXT, summary_tokens INTEGER NOT NULL DEFAULT 0, summary_state TEXT, compression_count INTEGER NOT NULL DEFAULT 0, focus TEXT NOT NULL DEFAULT '{}', last_exchange INTEGER NOT NULL DEFAULT 0, last_kind TEXT, open_question INTEGER NOT NULL DEFAULT 0);
      CREATE TABLE session_events (id INTEGER PRIMARY KEY AUTOINCREMENT, session TEXT NOT NULL, exchange INTEGER NOT NULL, kind TEXT NOT NULL, author TEXT NOT NULL, tool TEXT, text TEXT NOT NULL, meta TEXT, tokens INTEGER NOT NULL, created_at INTEGER NOT NULL);
      CREATE TABLE session_summaries (id INTEGER PRIMARY KEY AUTOINCREMENT, session TEXT NOT NULL, from_exchange INTEGER NOT NULL, to_exchange INTEGER NOT NULL, kind TEXT NOT NULL, text TEXT NOT NULL, created_at INTEGER NOT NULL);
    `);
    old.run("INSERT INTO meta VALUES ('schema_version', ?)", [String(MEMORY_SCHEMA_VERSION)]);
    old.run("INSERT INTO threads (name, created_at, updated_at) VALUES ('auth', 1, 1)");
    old.run("INSERT INTO entries (thread, seq, author, text, created_at) VALUES ('auth', 1, 'user', 'Sessions expire after an hour of inactivity.', 1)");
    old.run("INSERT INTO session_summaries (session, from_exchange, to_exchange, kind, text, created_at) VALUES ('work', 1, 3, 'digest', 'Exchanges 1-3: the PaymentGateway retries twice.', 1)");
    old.run("INSERT INTO sessions (id, created_at, updated_at) VALUES ('work', 1, 1)");
    mkdirSync(path.join(ws.dir, '.vlt'));
    writeFileSync(vlt(MEMORY_FILE), old.export());
    old.close();

    const memory = await openMemory(ws.dir);
    await memory.threads.push('auth', 'Refresh tokens rotate on every use.');
    const view = await memory.threads.read('auth');
    expect(view.entries.map((e) => e.text)).toEqual(['Sessions expire after an hour of inactivity.', 'Refresh tokens rotate on every use.']);
    expect((await memory.threads.seek('expire inactivity'))[0]?.text).toBe('Sessions expire after an hour of inactivity.');
    expect((await memory.session('work').search('PaymentGateway retries'))[0]).toMatchObject({ source: 'summary', text: expect.stringContaining('PaymentGateway') });
    await memory.close();
  });

  it('ignores bytes a killed writer appended without committing, and marks a text the pack lost instead of failing', async () => {
    const db = await MemoryDb.open(ws.dir, silentLogger);
    const threads = new ThreadStore(db);
    await threads.push('t', 'first entry, committed');
    // A writer killed after its append and before its commit leaves bytes no row points at.
    appendFileSync(vlt(TEXT_PACK_FILE), 'half of an entry nobody committ');
    await threads.push('t', 'second entry, after the torn one');
    expect((await threads.read('t')).entries.map((e) => e.text)).toEqual(['first entry, committed', 'second entry, after the torn one']);

    // A pack cut short by hand: the lost text reads as a marked gap; the rest still reads.
    truncateSync(vlt(TEXT_PACK_FILE), Buffer.byteLength('first entry, committed'));
    const view = await new ThreadStore(await MemoryDb.open(ws.dir, silentLogger)).read('t');
    expect(view.entries.map((e) => e.text)).toEqual(['first entry, committed', MISSING_TEXT]);
    await db.close();
  });

  it("puts a session's digests of compressed exchanges in the pack, where its search still finds them", async () => {
    const memory = await openMemory(ws.dir, { budgetTokens: 2000 });
    const s = memory.session('long');
    for (let n = 1; n <= 30; n++) {
      await s.append({ kind: 'question', author: 'agent', text: `Question ${n}: how does Module${n}Service work?${n === 1 ? ' It uses the FlamingoLedger.' : ''}` });
      await s.append({ kind: 'answer', text: `Answer ${n}: ${'it calls the store and returns the rows '.repeat(20)}` });
    }
    expect((await s.state()).compression_count).toBeGreaterThan(0);
    expect(statSync(vlt(TEXT_PACK_FILE)).size).toBeGreaterThan(0);
    const hit = (await s.search('FlamingoLedger'))[0];
    expect(hit).toMatchObject({ source: 'summary', text: expect.stringContaining('FlamingoLedger') });
    await memory.close();
  });

  it("erases a cleared session's digests from the pack: nothing forgotten stays readable", async () => {
    const memory = await openMemory(ws.dir, { budgetTokens: 2000 });
    const s = memory.session('secret-work');
    for (let n = 1; n <= 30; n++) {
      await s.append({ kind: 'question', author: 'agent', text: `Question ${n}: where is the OcelotVault key kept?` });
      await s.append({ kind: 'answer', text: `Answer ${n}: ${'in the vault behind the OcelotVault service '.repeat(20)}` });
    }
    await memory.threads.push('kept', 'An OcelotVault note that is not part of the session.');
    expect((await s.state()).compression_count).toBeGreaterThan(0);
    const count = (text: string) => text.split('OcelotVault').length - 1;
    expect(count(readFileSync(vlt(TEXT_PACK_FILE), 'latin1'))).toBeGreaterThan(1);
    await s.clear();
    // Only the thread entry's mention is left; the pack did not shrink (ranges are zeroed in place).
    expect(count(readFileSync(vlt(TEXT_PACK_FILE), 'latin1'))).toBe(1);
    expect((await memory.threads.read('kept')).entries[0]?.text).toBe('An OcelotVault note that is not part of the session.');
    expect(await s.search('OcelotVault')).toEqual([]);
    await memory.close();
  });
});
