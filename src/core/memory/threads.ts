/**
 * Threads: append-only logs of development memory (decisions, findings, oracle sessions), with
 * a summary that is built lazily (seed 000, user story 12).
 *
 * - `push` stores the entry and nothing else: no language model, no embedding. It costs one
 *   small write of memory.db.
 * - `read` brings the summary up to date on demand. The summary is cached with the id of the
 *   last entry it covers (`last_summarized_node_id`); entries after it are folded into the
 *   cached summary, so each entry is summarised once, however often the thread is read.
 * - `seek` ranks entries by BM25 and, when embeddings are configured, by vector similarity
 *   too (entry vectors are computed on the first seek that needs them, then kept).
 */
import { createHash } from 'node:crypto';
import { embeddingCacheKey } from '../embeddings';
import { VltError, toVltError } from '../errors';
import type { ChatModel } from '../llm/chat';
import type { PromptLibrary } from '../llm/prompts';
import { systemClock, silentLogger, type Clock, type EmbeddingProvider, type Logger } from '../ports';
import { Bm25Index } from './bm25';
import { num, optStr, str, type MemoryDb, type Row } from './db';
import { clip, extractMentions, leadSentence, mergeRecent } from './extract';

export interface ThreadEntry {
  id: number;
  thread: string;
  /** 1-based position in its thread. */
  seq: number;
  author: string;
  text: string;
  /** ISO time. */
  created_at: string;
}

export interface ThreadSummary {
  text: string;
  /** `llm` when a language model wrote it; `extractive` when it was assembled from the entries' own sentences. */
  kind: 'llm' | 'extractive';
  /** Id of the last entry the summary covers. */
  last_summarized_node_id: number;
  /** Entries folded in by this call (0 when the cached summary was current). */
  newly_summarized: number;
  /** Set when the model failed and this summary is an uncached extractive stand-in. */
  note?: string;
}

export interface ThreadView {
  thread: string;
  created_at: string;
  updated_at: string;
  entry_count: number;
  summary: ThreadSummary;
  /** The latest entries, oldest first. */
  entries: ThreadEntry[];
  /** True when older entries exist than those listed. */
  entries_truncated: boolean;
}

export interface ThreadInfo {
  thread: string;
  entry_count: number;
  created_at: string;
  updated_at: string;
  last_author: string;
  /** `current`: the cached summary covers every entry; `stale`: newer entries exist; `none`: never summarised. */
  summary: 'current' | 'stale' | 'none';
}

export interface ThreadSeekHit {
  thread: string;
  id: number;
  seq: number;
  author: string;
  created_at: string;
  score: number;
  text: string;
  /** Which rankings found it: `bm25`, `vector`. */
  retrievers: string[];
}

export interface ThreadStoreDeps {
  chat?: ChatModel | undefined;
  embeddings?: EmbeddingProvider | undefined;
  /** Needed when `chat` is set: the summary prompt. */
  prompts?: PromptLibrary | undefined;
  clock?: Clock;
  logger?: Logger;
}

const THREAD_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** One entry is a thought, a finding or a Q&A, not a document. */
export const MAX_ENTRY_CHARS = 100_000;
const MAX_AUTHOR_CHARS = 128;

/** Entries of one summarising call; more are folded in several calls, oldest first. */
const SUMMARY_BATCH_CHARS = 24_000;
/** Lines an extractive summary keeps: the first few, then the most recent. */
const EXTRACTIVE_HEAD = 3;
const EXTRACTIVE_LINES = 30;
const KEEP_SYMBOLS = 40;
const KEEP_FILES = 30;
const KEEP_DECISIONS = 15;

/** Reciprocal-rank-fusion constant; the usual value. */
const RRF_K = 60;
const EMBED_BATCH = 64;

/** The prefix of the dated threads oracle questions and answers are logged to. */
export const ORACLE_LOG_PREFIX = 'oracle-session-';

/** The dated thread oracle questions and answers are logged to: `oracle-session-YYYY-MM-DD` (local date). */
export function oracleSessionThread(at: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${ORACLE_LOG_PREFIX}${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}`;
}

export function checkThreadName(name: string): string {
  if (typeof name !== 'string' || !THREAD_NAME.test(name)) {
    throw new VltError('USAGE', `invalid thread name ${JSON.stringify(String(name).slice(0, 80))}: use 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit`);
  }
  return name;
}

export function checkAuthor(author: string | undefined): string {
  const a = (author ?? 'user').trim();
  if (!a || a.length > MAX_AUTHOR_CHARS || /[\x00-\x1f\x7f]/.test(a)) {
    throw new VltError('USAGE', `invalid author: use 1-${MAX_AUTHOR_CHARS} printable characters, such as an agent id or "user"`);
  }
  return a;
}

/** State of an extractive summary, kept so that new entries fold in without re-reading old ones. */
interface ExtractiveState {
  lines: string[];
  omitted: number;
  decisions: string[];
  symbols: string[];
  files: string[];
}

export class ThreadStore {
  private readonly clock: Clock;
  private readonly logger: Logger;
  private search: { index: Bm25Index<number>; maxId: number; count: number } | undefined;
  private vectors: MemoryDb | undefined;

  constructor(
    private readonly db: MemoryDb,
    private readonly deps: ThreadStoreDeps = {},
  ) {
    this.clock = deps.clock ?? systemClock;
    this.logger = deps.logger ?? silentLogger;
    if (deps.chat && !deps.prompts) throw new VltError('INTERNAL', 'a chat model needs the prompt templates');
  }

  /** Appends an entry. Never calls a language model or an embedding endpoint. */
  async push(thread: string, text: string, opts: { author?: string } = {}): Promise<ThreadEntry> {
    checkThreadName(thread);
    const author = checkAuthor(opts.author);
    if (typeof text !== 'string' || !text.trim()) throw new VltError('USAGE', 'the entry text is empty');
    if (text.length > MAX_ENTRY_CHARS) throw new VltError('USAGE', `the entry is longer than ${MAX_ENTRY_CHARS} characters; push a summary and keep the rest in a note`);
    const now = this.clock.now();
    // The text goes to the text pack: memory.db is rewritten on every write, and entries only accumulate.
    return this.db.writeWithTexts([text], (tx, [ref]) => {
      tx.run('INSERT INTO threads (name, created_at, updated_at) VALUES (?, ?, ?) ON CONFLICT(name) DO UPDATE SET updated_at = excluded.updated_at', [thread, now, now]);
      const seq = num(tx.first('SELECT COALESCE(MAX(seq), 0) + 1 AS seq FROM entries WHERE thread = ?', [thread])?.seq);
      tx.run("INSERT INTO entries (thread, seq, author, text, text_at, text_len, created_at) VALUES (?, ?, ?, '', ?, ?, ?)", [thread, seq, author, ref!.at, ref!.len, now]);
      return { id: tx.lastId(), thread, seq, author, text, created_at: new Date(now).toISOString() };
    });
  }

  /**
   * The thread with its summary brought up to date (see the module comment) and its latest
   * `entries` entries (default 100). NOT_FOUND for an unknown thread.
   */
  async read(thread: string, opts: { entries?: number; signal?: AbortSignal } = {}): Promise<ThreadView> {
    checkThreadName(thread);
    const summary = await this.summarize(thread, opts.signal);
    const limit = Math.max(0, Math.floor(opts.entries ?? 100));
    const { row, count, rows } = await this.db.read((tx) => {
      const row = tx.first('SELECT * FROM threads WHERE name = ?', [thread]);
      if (!row) throw notFound(thread);
      const count = num(tx.first('SELECT COUNT(*) AS n FROM entries WHERE thread = ?', [thread])?.n);
      return { row, count, rows: tx.all('SELECT * FROM entries WHERE thread = ? ORDER BY seq DESC LIMIT ?', [thread, limit]).reverse() };
    });
    await this.db.resolveTexts(rows);
    return {
      thread,
      created_at: iso(row.created_at),
      updated_at: iso(row.updated_at),
      entry_count: count,
      summary,
      entries: rows.map(entryOf),
      entries_truncated: count > rows.length,
    };
  }

  /** Every thread, most recently updated first. */
  async list(): Promise<ThreadInfo[]> {
    return this.db.read((tx) =>
      tx
        .all(
          `SELECT t.name, t.created_at, t.updated_at, t.last_summarized_node_id,
             (SELECT COUNT(*) FROM entries e WHERE e.thread = t.name) AS n,
             (SELECT MAX(id) FROM entries e WHERE e.thread = t.name) AS max_id,
             (SELECT author FROM entries e WHERE e.thread = t.name ORDER BY seq DESC LIMIT 1) AS last_author
           FROM threads t ORDER BY t.updated_at DESC, t.name`,
        )
        .map((r) => {
          const last = num(r.last_summarized_node_id);
          return {
            thread: str(r.name),
            entry_count: num(r.n),
            created_at: iso(r.created_at),
            updated_at: iso(r.updated_at),
            last_author: str(r.last_author),
            summary: last === 0 ? 'none' : last >= num(r.max_id) ? 'current' : 'stale',
          };
        }),
    );
  }

  /** Entries that match `query`, best first, across threads (or in one `thread`). */
  /**
   * Entries like `query`, best first. `thread`: only that thread's; `skipPrefix`: none of the
   * threads whose name starts with it, left out before ranking (so that they cannot fill the
   * first places and leave nothing once dropped).
   */
  async seek(query: string, opts: { k?: number; thread?: string; skipPrefix?: string; signal?: AbortSignal } = {}): Promise<ThreadSeekHit[]> {
    if (!query.trim()) throw new VltError('USAGE', 'the seek query is empty');
    if (opts.thread !== undefined) checkThreadName(opts.thread);
    const k = Math.max(1, Math.min(opts.k ?? 10, 100));
    const index = await this.searchIndex();
    // Only the rows a seek returns are read: every oracle answer adds an entry, and reading all
    // of them at each seek made the oracle slower with every answer it had given (a soak of
    // 1,000 questions through the daemon: p95 from 277 to 510 ms).
    const { thread, skipPrefix } = opts;
    const ofThread = thread === undefined ? undefined : await this.db.read((tx) => new Set(tx.all('SELECT id FROM entries WHERE thread = ?', [thread]).map((r) => num(r.id))));
    const skipped = skipPrefix === undefined ? undefined : await this.db.read((tx) => new Set(tx.all("SELECT id FROM entries WHERE substr(thread, 1, ?) = ?", [skipPrefix.length, skipPrefix]).map((r) => num(r.id))));
    const inThread = ofThread === undefined && skipped === undefined ? undefined : (id: number) => (ofThread === undefined || ofThread.has(id)) && !skipped?.has(id);
    const lexical = index.search(query, k * 3, inThread);
    const ranked = new Map<number, { score: number; retrievers: string[] }>();
    lexical.forEach((h, rank) => ranked.set(h.key, { score: 1 / (RRF_K + rank + 1), retrievers: ['bm25'] }));
    if (this.deps.embeddings) {
      try {
        const vectorHits = await this.vectorSearch(query, k * 3, inThread, opts.signal);
        vectorHits.forEach((id, rank) => {
          const cur = ranked.get(id) ?? { score: 0, retrievers: [] };
          cur.score += 1 / (RRF_K + rank + 1);
          cur.retrievers.push('vector');
          ranked.set(id, cur);
        });
      } catch (e) {
        const err = toVltError(e, 'EMBEDDING_FAILED');
        if (err.code === 'CANCELLED') throw err;
        this.logger.warn(`thread seek: vector search skipped: ${err.message}`);
      }
    }
    const top = [...ranked].sort((a, b) => b[1].score - a[1].score || b[0] - a[0]).slice(0, k);
    const ids = top.map(([id]) => id);
    const found = ids.length === 0 ? [] : await this.db.read((tx) => tx.all(`SELECT id, thread, seq, author, text, text_at, text_len, created_at FROM entries WHERE id IN (${ids.map(() => '?').join(', ')})`, ids));
    const rows = new Map((await this.db.resolveTexts(found)).map((r) => [num(r.id), r]));
    return top
      .filter(([id]) => rows.has(id))
      .map(([id, r]) => {
        const row = rows.get(id)!;
        return {
          thread: str(row.thread),
          id,
          seq: num(row.seq),
          author: str(row.author),
          created_at: iso(row.created_at),
          score: Math.round(r.score * 1e6) / 1e6,
          text: clip(str(row.text), 600),
          retrievers: r.retrievers,
        };
      });
  }

  // -----------------------------------------------------------------------------------------
  // Lazy summaries
  // -----------------------------------------------------------------------------------------

  private async summarize(thread: string, signal: AbortSignal | undefined): Promise<ThreadSummary> {
    const model = this.deps.chat?.model;
    const snapshot = await this.db.read((tx) => {
      const row = tx.first('SELECT * FROM threads WHERE name = ?', [thread]);
      if (!row) throw notFound(thread);
      // A summary another model wrote is redone from the first entry by the one configured now.
      const redo = model !== undefined && optStr(row.summary_kind) === 'llm' && optStr(row.summary_model) !== model;
      const last = redo ? 0 : num(row.last_summarized_node_id);
      return { row, last, redo, stored: num(row.last_summarized_node_id), freshRows: tx.all('SELECT * FROM entries WHERE thread = ? AND id > ? ORDER BY id', [thread, last]) };
    });
    const { row, last, redo } = snapshot;
    const fresh = (await this.db.resolveTexts(snapshot.freshRows)).map(entryOf);
    const cachedKind = optStr(row.summary_kind) === 'llm' ? 'llm' : 'extractive';
    if (fresh.length === 0) {
      return { text: optStr(row.summary) ?? '', kind: cachedKind, last_summarized_node_id: last, newly_summarized: 0 };
    }
    const newLast = fresh[fresh.length - 1]!.id;
    const previousText = redo ? undefined : optStr(row.summary);
    const previousState = parseState(redo ? undefined : optStr(row.summary_state));
    const state = foldExtractive(previousState, fresh);

    let text: string;
    let kind: ThreadSummary['kind'];
    if (this.deps.chat) {
      try {
        text = await this.foldWithModel(thread, previousText, fresh, signal);
        kind = 'llm';
      } catch (e) {
        const err = toVltError(e, 'LLM_FAILED');
        if (err.code === 'CANCELLED') throw err;
        // Nothing is cached: the next read tries the model again.
        this.logger.warn(`thread ${thread}: summary by the language model failed, showing an extractive one: ${err.message}`);
        const standIn = cachedKind === 'llm' && previousText ? renderExtractive(foldExtractive(parseState(undefined), fresh), previousText) : renderExtractive(state);
        return { text: standIn, kind: 'extractive', last_summarized_node_id: last, newly_summarized: 0, note: `language model failed: ${err.message}` };
      }
    } else {
      text = renderExtractive(state);
      kind = 'extractive';
    }
    const stored = await this.db.write((tx) => {
      // Compare-and-set: a concurrent reader may have folded the same entries already.
      const cur = num(tx.first('SELECT last_summarized_node_id AS l FROM threads WHERE name = ?', [thread])?.l);
      if (cur !== snapshot.stored) return false;
      tx.run('UPDATE threads SET summary = ?, summary_kind = ?, summary_state = ?, last_summarized_node_id = ?, summarized_at = ?, summary_model = ? WHERE name = ?', [
        text,
        kind,
        JSON.stringify(state),
        newLast,
        this.clock.now(),
        kind === 'llm' ? (model ?? null) : null,
        thread,
      ]);
      return true;
    });
    if (!stored) this.logger.debug(`thread ${thread}: another process summarised it at the same time; keeping theirs`);
    return { text, kind, last_summarized_node_id: newLast, newly_summarized: fresh.length };
  }

  /** Folds new entries into the previous summary with the model, in batches that fit one prompt. */
  private async foldWithModel(thread: string, previous: string | undefined, fresh: ThreadEntry[], signal: AbortSignal | undefined): Promise<string> {
    const chat = this.deps.chat!;
    const prompts = this.deps.prompts!;
    let summary = previous ?? '';
    for (const batch of batches(fresh, (e) => formatEntry(e).length, SUMMARY_BATCH_CHARS)) {
      const prompt = prompts.render('thread-summary', {
        thread,
        previous_summary: summary.trim() || '(none yet: this is the first summary of the thread)',
        entries: batch.map(formatEntry).join('\n\n'),
        count: batch.length,
      });
      const res = await chat.complete({ messages: [{ role: 'user', content: prompt }], temperature: 0, ...(signal ? { signal } : {}) });
      const text = res.text.trim();
      if (!text) throw new VltError('LLM_FAILED', `the language model returned an empty summary for thread ${thread}`);
      summary = text;
    }
    return summary;
  }

  // -----------------------------------------------------------------------------------------
  // Search
  // -----------------------------------------------------------------------------------------

  /** The BM25 index of every entry, kept across calls and extended by new entries only. */
  private async searchIndex(): Promise<Bm25Index<number>> {
    const stats = await this.db.read((tx) => tx.first('SELECT COUNT(*) AS n, COALESCE(MAX(id), 0) AS m FROM entries'));
    const count = num(stats?.n);
    const maxId = num(stats?.m);
    // Entries are never deleted, so fewer of them means the store was replaced: start over.
    if (!this.search || count < this.search.count || maxId < this.search.maxId) {
      this.search = { index: new Bm25Index<number>({ text: 1, author: 0.5 }), maxId: 0, count: 0 };
    }
    const s = this.search;
    if (maxId > s.maxId) {
      const rows = await this.db.resolveTexts(await this.db.read((tx) => tx.all('SELECT id, author, text, text_at, text_len FROM entries WHERE id > ?', [s.maxId])));
      for (const r of rows) s.index.set(num(r.id), { text: str(r.text), author: str(r.author) });
      s.maxId = maxId;
      s.count = count;
    }
    return s.index;
  }

  /**
   * Entry ids by cosine similarity to the query. Entries without a vector for this model are
   * embedded first, in batches, and their vectors kept (by text hash) in memory-vectors.db.
   */
  private async vectorSearch(query: string, k: number, filter: ((id: number) => boolean) | undefined, signal: AbortSignal | undefined): Promise<number[]> {
    const provider = this.deps.embeddings!;
    const model = embeddingCacheKey(provider);
    const vectors = (this.vectors ??= this.db.sibling('vectors'));
    const rows = await this.db.resolveTexts(await this.db.read((tx) => tx.all('SELECT id, text, text_at, text_len FROM entries ORDER BY id')));
    const entries = rows.map((r) => ({ id: num(r.id), text: str(r.text), hash: sha1(str(r.text)) }));
    const known = await vectors.read((tx) => new Map(tx.all('SELECT hash, vector FROM vectors WHERE model = ?', [model]).map((r) => [str(r.hash), r.vector])));
    const missing = [...new Map(entries.filter((e) => !known.has(e.hash)).map((e) => [e.hash, e.text]))];
    for (let i = 0; i < missing.length; i += EMBED_BATCH) {
      const batch = missing.slice(i, i + EMBED_BATCH);
      const got = await provider.embed(batch.map(([, text]) => clip(text, 8000) || ' '), signal);
      const blobs = batch.map(([hash], j) => [hash, new Uint8Array(Float32Array.from(got[j] ?? []).buffer)] as const);
      await vectors.write((tx) => {
        for (const [hash, blob] of blobs) tx.run('INSERT OR REPLACE INTO vectors (hash, model, vector) VALUES (?, ?, ?)', [hash, model, blob]);
      });
      for (const [hash, blob] of blobs) known.set(hash, blob);
    }
    const [q] = await provider.embed([query], signal);
    if (!q) return [];
    const scored: Array<[number, number]> = [];
    for (const e of entries) {
      if (filter && !filter(e.id)) continue;
      const blob = known.get(e.hash);
      if (!(blob instanceof Uint8Array) || blob.byteLength === 0) continue;
      const v = new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength));
      scored.push([e.id, cosine(q, v)]);
    }
    return scored.sort((a, b) => b[1] - a[1]).slice(0, k).map(([id]) => id);
  }

  /** Closes the vectors' file, when a seek opened it. */
  async close(): Promise<void> {
    await this.vectors?.close();
    this.vectors = undefined;
  }
}

function sha1(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}

function notFound(thread: string): VltError {
  return new VltError('NOT_FOUND', `no thread ${thread}; \`vlt thread list\` shows the threads, and a push creates one`);
}

function iso(v: Row[string] | undefined): string {
  return new Date(num(v)).toISOString();
}

function entryOf(r: Row): ThreadEntry {
  return { id: num(r.id), thread: str(r.thread), seq: num(r.seq), author: str(r.author), text: str(r.text), created_at: iso(r.created_at) };
}

function formatEntry(e: ThreadEntry): string {
  return `#${e.seq} [${e.created_at.slice(0, 16).replace('T', ' ')} ${e.author}]\n${e.text.trim()}`;
}

/** Consecutive groups whose sizes add up to at most `max` (a single oversized item goes alone). */
function batches<T>(items: T[], size: (t: T) => number, max: number): T[][] {
  const out: T[][] = [];
  let cur: T[] = [];
  let used = 0;
  for (const item of items) {
    const s = size(item);
    if (cur.length && used + s > max) {
      out.push(cur);
      cur = [];
      used = 0;
    }
    cur.push(item);
    used += s;
  }
  if (cur.length) out.push(cur);
  return out;
}

function parseState(raw: string | undefined): ExtractiveState {
  const empty: ExtractiveState = { lines: [], omitted: 0, decisions: [], symbols: [], files: [] };
  if (!raw) return empty;
  try {
    const v = JSON.parse(raw) as Partial<ExtractiveState>;
    return {
      lines: Array.isArray(v.lines) ? v.lines.map(String) : [],
      omitted: typeof v.omitted === 'number' ? v.omitted : 0,
      decisions: Array.isArray(v.decisions) ? v.decisions.map(String) : [],
      symbols: Array.isArray(v.symbols) ? v.symbols.map(String) : [],
      files: Array.isArray(v.files) ? v.files.map(String) : [],
    };
  } catch {
    return empty;
  }
}

function foldExtractive(prev: ExtractiveState, fresh: ThreadEntry[]): ExtractiveState {
  const lines = [...prev.lines];
  let omitted = prev.omitted;
  let decisions = prev.decisions;
  let symbols = prev.symbols;
  let files = prev.files;
  for (const e of fresh) {
    lines.push(`#${e.seq} ${e.author}: ${leadSentence(e.text, 200)}`);
    if (lines.length > EXTRACTIVE_LINES) {
      lines.splice(EXTRACTIVE_HEAD, 1);
      omitted++;
    }
    const m = extractMentions(e.text);
    decisions = mergeRecent(decisions, m.decisions.map((d) => clip(d, 300)), KEEP_DECISIONS);
    symbols = mergeRecent(symbols, m.symbols, KEEP_SYMBOLS);
    files = mergeRecent(files, m.files, KEEP_FILES);
  }
  return { lines, omitted, decisions, symbols, files };
}

/**
 * The extractive summary as text. When the previous summary came from a model (and the model
 * now failed), it is kept on top so that nothing it said is lost.
 */
function renderExtractive(s: ExtractiveState, modelSummary?: string): string {
  const out: string[] = [];
  if (modelSummary) out.push(modelSummary.trim(), '', 'Later entries (extractive):');
  else out.push('Extractive summary (no language model was used): the lead sentence of each entry.');
  s.lines.forEach((l, i) => {
    if (i === EXTRACTIVE_HEAD && s.omitted > 0) out.push(`- … ${s.omitted} entr${s.omitted === 1 ? 'y' : 'ies'} omitted`);
    out.push(`- ${l}`);
  });
  if (s.decisions.length) out.push('', 'Decisions:', ...s.decisions.map((d) => `- ${d}`));
  if (s.symbols.length) out.push('', `Symbols: ${s.symbols.join(', ')}`);
  if (s.files.length) out.push(`Files: ${s.files.join(', ')}`);
  return out.join('\n');
}

function cosine(a: number[], b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}
