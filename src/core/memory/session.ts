/**
 * The shared conversation context (seed 000, user story 11): one running record per session id
 * of the questions, tool calls, tool results and answers of every host (CLI `--session`, the
 * MCP server, the VS Code chat), persisted in memory.db so that a later call, in any process,
 * can build on what earlier calls found.
 *
 * Budget. Each session has a token budget (16K by default, `[session] budget_tokens`). When
 * what it holds passes 80 % of it, every exchange but the last five is compressed into the
 * running summary: by the language model when one is configured, else extractively. Either
 * way the symbols, files and decision sentences those exchanges mentioned are kept (a model
 * summary that drops one gets it appended). Each compressed batch also leaves a digest row
 * that `search` still finds, so a fact from compressed history stays reachable.
 *
 * An exchange is a question with everything up to its answer, or, without a question, one
 * tool call with its result.
 */
import { VltError, toVltError } from '../errors';
import type { ChatModel } from '../llm/chat';
import type { PromptLibrary } from '../llm/prompts';
import { systemClock, silentLogger, type Clock, type Logger } from '../ports';
import { Bm25Index } from './bm25';
import { num, optStr, str, type JournalRecord, type MemoryDb, type Row, type Tx } from './db';
import { clip, extractMentions, leadSentence, mergeRecent, type Mentions } from './extract';
import { loadTokenCounter, loadTokenizer, type TokenCounter, type Tokenizer } from './tokens';

export type SessionEventKind = 'question' | 'answer' | 'tool_call' | 'tool_result';

export interface SessionEventInput {
  kind: SessionEventKind;
  /** Who produced it: an agent id, `user`, `oracle`, or a tool's name for results. */
  author?: string;
  text: string;
  /** The tool, for tool calls and results. */
  tool?: string;
  meta?: Record<string, unknown>;
}

export interface SessionEvent {
  id: number;
  exchange: number;
  kind: SessionEventKind;
  author: string;
  tool?: string;
  text: string;
  meta?: Record<string, unknown>;
  tokens: number;
  created_at: string;
}

/** What the session has been about: kept across compression. Most recent last. */
export interface SessionFocus {
  symbols: string[];
  files: string[];
  decisions: string[];
}

export interface SessionState {
  id: string;
  budget_tokens: number;
  /** Tokens the session holds now: summary plus verbatim events. */
  tokens: number;
  summary: string | null;
  summary_kind: 'llm' | 'extractive' | null;
  compression_count: number;
  /** Exchange numbers still held verbatim, oldest first. */
  verbatim_exchanges: number[];
  last_exchange: number;
}

export interface SessionSearchHit {
  /** `verbatim`: an event still held whole; `summary`: the digest of a compressed batch. */
  source: 'verbatim' | 'summary';
  score: number;
  text: string;
  /** For verbatim hits. */
  exchange?: number;
  kind?: SessionEventKind;
  tool?: string;
  /** For summary hits: the exchanges the digest covers. */
  from_exchange?: number;
  to_exchange?: number;
}

export interface SessionDeps {
  budgetTokens: number;
  chat?: ChatModel | undefined;
  prompts?: PromptLibrary | undefined;
  clock?: Clock;
  logger?: Logger;
}

const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const KINDS: readonly SessionEventKind[] = ['question', 'answer', 'tool_call', 'tool_result'];

/** Compression starts when the session holds this share of its budget. */
export const COMPRESS_AT = 0.8;
/** Exchanges never compressed: the conversation's working memory. */
export const KEEP_RECENT_EXCHANGES = 5;
/** The running summary may take at most this share of the budget. */
const SUMMARY_SHARE = 0.25;
/** One event may take at most this share of the budget; longer texts are cut when appended. */
const EVENT_SHARE = 0.1;
const KEEP_SYMBOLS = 200;
const KEEP_FILES = 100;
const KEEP_DECISIONS = 40;
/** Characters of one event shown to the compressing model. */
const COMPRESS_EVENT_CHARS = 2000;

export function checkSessionId(id: string): string {
  if (typeof id !== 'string' || !SESSION_ID.test(id)) {
    throw new VltError('USAGE', `invalid session id ${JSON.stringify(String(id).slice(0, 80))}: use 1-128 letters, digits, '.', '_', ':' or '-', starting with a letter or digit`);
  }
  return id;
}

/** Extractive summary lines, kept so that later batches fold in without re-reading old ones. */
interface SummaryState {
  lines: string[];
  omitted: number;
}

export class SessionContext {
  private readonly clock: Clock;
  private readonly logger: Logger;
  readonly budgetTokens: number;

  constructor(
    private readonly db: MemoryDb,
    readonly id: string,
    private readonly deps: SessionDeps,
  ) {
    checkSessionId(id);
    this.clock = deps.clock ?? systemClock;
    this.logger = deps.logger ?? silentLogger;
    this.budgetTokens = Math.max(1000, Math.floor(deps.budgetTokens));
    if (deps.chat && !deps.prompts) throw new VltError('INTERNAL', 'a chat model needs the prompt templates');
  }

  /**
   * Appends one event, then compresses older exchanges when the session passed 80 % of its
   * budget. A text longer than a tenth of the budget is cut (and says so).
   */
  async append(input: SessionEventInput, opts: { signal?: AbortSignal } = {}): Promise<{ event: SessionEvent; compressed: boolean }> {
    const { events, compressed } = await this.appendMany([input], opts);
    return { event: events[0]!, compressed };
  }

  /**
   * Appends several events in order in one write of the store (a host recording a burst of tool
   * calls pays for one write, not one per event), after whatever the journal holds, then
   * compresses once if needed. Returns the events as stored.
   */
  async appendMany(inputs: readonly SessionEventInput[], opts: { signal?: AbortSignal } = {}): Promise<{ events: SessionEvent[]; compressed: boolean }> {
    const records = this.toRecords(inputs);
    if (records.length === 0) return { events: [], compressed: false };
    const applied = await foldSessionJournal(this.db, this.budgetTokens, records);
    const events = records.map((r) => applied.get(r.u)).filter((e): e is SessionEvent => e !== undefined);
    const compressed = await this.compressIfDue(opts.signal);
    return { events, compressed };
  }

  /**
   * Records events cheaply: one append to the journal, no rewrite of the store, no token
   * counting. This is how hosts record every tool call without slowing the next one down. The
   * events are folded into the store, in order, before anything reads the session, or here once
   * the journal has grown past {@link JOURNAL_FOLD_BYTES}.
   */
  async record(inputs: readonly SessionEventInput[], opts: { signal?: AbortSignal } = {}): Promise<void> {
    const records = this.toRecords(inputs);
    const size = await this.db.appendJournal(records);
    if (size > JOURNAL_FOLD_BYTES) await this.settle(opts.signal);
  }

  /**
   * Folds the journal into the store, then compresses this session when it is over budget. A
   * read must not fail because the store cannot be written now (a read-only `.vlt/`, a lock
   * held past its timeout): the failure is logged and the read sees what the store holds.
   */
  async settle(signal?: AbortSignal): Promise<void> {
    try {
      await foldSessionJournal(this.db, this.budgetTokens);
      await this.compressIfDue(signal);
    } catch (e) {
      const err = toVltError(e, 'IO');
      if (err.code === 'CANCELLED') throw err;
      this.logger.warn(`session ${this.id}: could not fold the recorded calls into the store, so the latest may be missing: ${err.message}`);
    }
  }

  private toRecords(inputs: readonly SessionEventInput[]): SessionRecord[] {
    for (const input of inputs) {
      if (!KINDS.includes(input.kind)) throw new VltError('USAGE', `unknown session event kind ${JSON.stringify(input.kind)}; expected one of ${KINDS.join(', ')}`);
      if (typeof input.text !== 'string') throw new VltError('USAGE', 'session event text must be a string');
    }
    const at = this.clock.now();
    return inputs.map((input) => ({
      u: crypto.randomUUID(),
      s: this.id,
      k: input.kind,
      a: (input.author ?? defaultAuthor(input)).trim().slice(0, 128) || 'user',
      x: input.text,
      at,
      ...(input.tool !== undefined ? { t: input.tool } : {}),
      ...(input.meta !== undefined ? { m: input.meta } : {}),
    }));
  }

  /** Where the session stands: tokens held, the summary, which exchanges are verbatim. */
  async state(): Promise<SessionState> {
    await this.settle();
    return this.db.read((tx) => {
      const row = tx.first('SELECT * FROM sessions WHERE id = ?', [this.id]);
      const events = tx.all('SELECT exchange, tokens FROM session_events WHERE session = ? ORDER BY id', [this.id]);
      const kind = optStr(row?.summary_kind);
      return {
        id: this.id,
        budget_tokens: this.budgetTokens,
        tokens: num(row?.summary_tokens) + events.reduce((n, e) => n + num(e.tokens), 0),
        summary: optStr(row?.summary) ?? null,
        summary_kind: kind === 'llm' || kind === 'extractive' ? kind : null,
        compression_count: num(row?.compression_count),
        verbatim_exchanges: [...new Set(events.map((e) => num(e.exchange)))],
        last_exchange: num(row?.last_exchange),
      };
    });
  }

  /** Events held verbatim, oldest first. */
  async events(): Promise<SessionEvent[]> {
    await this.settle();
    return this.db.read((tx) => tx.all('SELECT * FROM session_events WHERE session = ? ORDER BY id', [this.id]).map(eventOf));
  }

  /** Symbols, files and decisions the session mentioned, compressed history included. */
  async focus(): Promise<SessionFocus> {
    await this.settle();
    return this.db.read((tx) => parseFocus(optStr(tx.first('SELECT focus FROM sessions WHERE id = ?', [this.id])?.focus)));
  }

  /**
   * The session as prompt text within `budgetTokens` (the session's budget by default): the
   * compressed summary, the key facts, then the verbatim exchanges. When even those do not
   * fit, the oldest verbatim exchanges are left out first, then the summary is cut.
   */
  async render(budgetTokens: number = this.budgetTokens): Promise<string> {
    await this.settle();
    const count = await loadTokenCounter();
    const { row, events } = await this.db.read((tx) => ({
      row: tx.first('SELECT * FROM sessions WHERE id = ?', [this.id]),
      events: tx.all('SELECT * FROM session_events WHERE session = ? ORDER BY id', [this.id]).map(eventOf),
    }));
    if (!row) return '';
    const head: string[] = [`# Session ${this.id}`];
    const summary = optStr(row.summary);
    if (summary) head.push('', `## Earlier in this session (compressed ${num(row.compression_count)}×)`, summary.trim());
    const byExchange = new Map<number, SessionEvent[]>();
    for (const e of events) byExchange.set(e.exchange, [...(byExchange.get(e.exchange) ?? []), e]);
    const blocks = [...byExchange].map(([n, evs]) => [`### Exchange ${n}`, ...evs.map(renderEvent)].join('\n'));
    const budget = Math.max(1, Math.floor(budgetTokens));
    let headText = head.join('\n');
    // Newest exchanges first until the budget is spent, then restore their order.
    const kept: string[] = [];
    let used = count(headText) + (blocks.length ? count('\n\n## Recent exchanges\n') : 0);
    if (used > budget) {
      headText = clipToTokens(headText, Math.max(1, budget - 8), count);
      used = count(headText);
    }
    for (let i = blocks.length - 1; i >= 0; i--) {
      const cost = count(blocks[i]!) + 2;
      if (used + cost > budget) break;
      kept.unshift(blocks[i]!);
      used += cost;
    }
    return kept.length ? `${headText}\n\n## Recent exchanges\n${kept.join('\n\n')}` : headText;
  }

  /** BM25 over verbatim events and the digests of compressed batches, best first. */
  async search(query: string, k = 10): Promise<SessionSearchHit[]> {
    if (!query.trim()) throw new VltError('USAGE', 'the search query is empty');
    await this.settle();
    const { events, digests } = await this.db.read((tx) => ({
      events: tx.all('SELECT * FROM session_events WHERE session = ? ORDER BY id', [this.id]).map(eventOf),
      digests: tx.all('SELECT * FROM session_summaries WHERE session = ? ORDER BY id', [this.id]),
    }));
    await this.db.resolveTexts(digests);
    const index = new Bm25Index<string>({ text: 1, tool: 0.5 });
    for (const e of events) index.set(`e${e.id}`, { text: e.text, tool: e.tool });
    for (const d of digests) index.set(`s${num(d.id)}`, { text: str(d.text) });
    const terms = index.matchedTerms(query);
    return index.search(query, Math.max(1, Math.min(k, 50))).map(({ key, score }) => {
      const id = Number(key.slice(1));
      if (key.startsWith('e')) {
        const e = events.find((x) => x.id === id)!;
        const hit: SessionSearchHit = { source: 'verbatim', score: round(score), text: snippet(e.text, terms), exchange: e.exchange, kind: e.kind };
        if (e.tool) hit.tool = e.tool;
        return hit;
      }
      const d = digests.find((x) => num(x.id) === id)!;
      return { source: 'summary', score: round(score), text: snippet(str(d.text), terms), from_exchange: num(d.from_exchange), to_exchange: num(d.to_exchange) };
    });
  }

  /** Forgets the whole session: events, summary, digests (their texts erased from the text pack too). */
  async clear(): Promise<void> {
    // What the journal holds for this session is part of what is forgotten.
    await foldSessionJournal(this.db, this.budgetTokens);
    await this.db.writeForgetting(
      (tx) => tx.all('SELECT text_at, text_len FROM session_summaries WHERE session = ?', [this.id]),
      (tx) => {
        tx.run('DELETE FROM session_events WHERE session = ?', [this.id]);
        tx.run('DELETE FROM session_summaries WHERE session = ?', [this.id]);
        tx.run('DELETE FROM sessions WHERE id = ?', [this.id]);
      },
    );
  }

  /**
   * Compresses every exchange but the last five when the session holds more than 80 % of its
   * budget (or whenever `force` is set). Returns whether it compressed.
   */
  async maybeCompress(signal?: AbortSignal, force = false): Promise<boolean> {
    await foldSessionJournal(this.db, this.budgetTokens);
    return this.compressIfDue(signal, force);
  }

  private async compressIfDue(signal?: AbortSignal, force = false): Promise<boolean> {
    const count = await loadTokenCounter();
    const snap = await this.db.read((tx) => ({
      row: tx.first('SELECT * FROM sessions WHERE id = ?', [this.id]),
      events: tx.all('SELECT * FROM session_events WHERE session = ? ORDER BY id', [this.id]).map(eventOf),
    }));
    if (!snap.row) return false;
    const total = num(snap.row.summary_tokens) + snap.events.reduce((n, e) => n + e.tokens, 0);
    if (!force && total <= COMPRESS_AT * this.budgetTokens) return false;
    const exchanges = [...new Set(snap.events.map((e) => e.exchange))];
    if (exchanges.length <= KEEP_RECENT_EXCHANGES) return false;
    const cutoff = exchanges[exchanges.length - KEEP_RECENT_EXCHANGES]!;
    const old = snap.events.filter((e) => e.exchange < cutoff);
    const first = old[0]!.exchange;
    const last = old[old.length - 1]!.exchange;

    const previous = optStr(snap.row.summary);
    const focus = parseFocus(optStr(snap.row.focus));
    const state = foldLines(parseSummaryState(optStr(snap.row.summary_state)), old);
    const cap = Math.floor(this.budgetTokens * SUMMARY_SHARE);
    const digest = renderDigest(old, first, last);

    let summary: string | undefined;
    let kind: 'llm' | 'extractive' = 'extractive';
    if (this.deps.chat) {
      try {
        summary = ensureKept(await this.compressWithModel(previous, old, focus, cap, signal), focus);
        kind = 'llm';
      } catch (e) {
        const err = toVltError(e, 'LLM_FAILED');
        if (err.code === 'CANCELLED') throw err;
        this.logger.warn(`session ${this.id}: compression by the language model failed, compressing extractively: ${err.message}`);
      }
    }
    summary = summary === undefined ? renderExtractive(state, focus, cap, count) : clipToTokens(summary, cap, count);
    const summaryTokens = count(summary);
    const ids = old.map((e) => e.id);
    // The digest goes to the text pack: digests only accumulate, and memory.db is rewritten on every write.
    const done = await this.db.writeWithTexts([digest], (tx, [ref]) => {
      // Compare-and-set: another process may have compressed (or cleared) meanwhile.
      const cur = tx.first('SELECT compression_count FROM sessions WHERE id = ?', [this.id]);
      if (!cur || num(cur.compression_count) !== num(snap.row!.compression_count)) return false;
      const present = num(tx.first(`SELECT COUNT(*) AS n FROM session_events WHERE session = ? AND id IN (${ids.map(() => '?').join(',')})`, [this.id, ...ids])?.n);
      if (present !== ids.length) return false;
      tx.run(`DELETE FROM session_events WHERE session = ? AND id IN (${ids.map(() => '?').join(',')})`, [this.id, ...ids]);
      tx.run("INSERT INTO session_summaries (session, from_exchange, to_exchange, kind, text, text_at, text_len, created_at) VALUES (?, ?, ?, ?, '', ?, ?, ?)", [this.id, first, last, 'digest', ref!.at, ref!.len, this.clock.now()]);
      tx.run('UPDATE sessions SET summary = ?, summary_kind = ?, summary_tokens = ?, summary_state = ?, compression_count = compression_count + 1 WHERE id = ?', [
        summary,
        kind,
        summaryTokens,
        JSON.stringify(state),
        this.id,
      ]);
      return true;
    });
    if (done) this.logger.debug(`session ${this.id}: compressed exchanges ${first}-${last} (${kind}, ${summaryTokens} tokens)`);
    return done;
  }

  private async compressWithModel(previous: string | undefined, old: SessionEvent[], focus: SessionFocus, cap: number, signal: AbortSignal | undefined): Promise<string> {
    const prompt = this.deps.prompts!.render('compression', {
      previous_summary: previous?.trim() || '(none: this is the first compression)',
      exchanges: old.map((e) => `[exchange ${e.exchange} · ${e.kind}${e.tool ? ` ${e.tool}` : ''} · ${e.author}]\n${clip(e.text, COMPRESS_EVENT_CHARS)}`).join('\n\n'),
      symbols: focus.symbols.join(', ') || '(none)',
      files: focus.files.join(', ') || '(none)',
      decisions: focus.decisions.map((d) => `- ${d}`).join('\n') || '(none)',
      target_tokens: Math.floor(cap * 0.8),
    });
    const res = await this.deps.chat!.complete({ messages: [{ role: 'user', content: prompt }], temperature: 0, ...(signal ? { signal } : {}) });
    const text = res.text.trim();
    if (!text) throw new VltError('LLM_FAILED', 'the language model returned an empty compression');
    return text;
  }
}

/**
 * A recorder folds the journal itself once it holds this many bytes (about five hundred
 * recorded search results): a bound for a host that never idles and never reads. Hosts fold
 * when idle (the MCP server), and every read folds first, so it is rarely reached.
 */
export const JOURNAL_FOLD_BYTES = 4 * 1024 * 1024;

/** One session event in the journal (short keys: it is written after every tool call). */
interface SessionRecord extends JournalRecord {
  /** Session id. */
  s: string;
  k: SessionEventKind;
  /** Author, normalised. */
  a: string;
  /** Tool, for tool calls and results. */
  t?: string;
  /** Text as given; cut to the event budget when folded. */
  x: string;
  m?: Record<string, unknown>;
  /** When it was recorded (ms since the epoch). */
  at: number;
}

interface PreparedEvent {
  record: SessionRecord;
  text: string;
  tokens: number;
  mentions: Mentions;
}

function isSessionRecord(r: JournalRecord): r is SessionRecord {
  return (
    typeof r.s === 'string' &&
    SESSION_ID.test(r.s) &&
    KINDS.includes(r.k as SessionEventKind) &&
    typeof r.a === 'string' &&
    typeof r.x === 'string' &&
    typeof r.at === 'number' &&
    (r.t === undefined || typeof r.t === 'string') &&
    (r.m === undefined || (typeof r.m === 'object' && r.m !== null))
  );
}

/**
 * Folds the session journal into the store (see {@link MemoryDb.foldJournal}), followed by
 * `extra` records, and returns every event it stored by record id. Token counting and mention
 * extraction happen here, outside the transaction, yielding to the event loop every few
 * records so that a long journal does not stall the host's other work.
 */
export async function foldSessionJournal(db: MemoryDb, budgetTokens: number, extra: readonly SessionRecord[] = []): Promise<Map<string, SessionEvent>> {
  const prepare = async (records: JournalRecord[]): Promise<PreparedEvent[]> => {
    const tokenizer = await loadTokenizer();
    const out: PreparedEvent[] = [];
    for (const [i, record] of records.entries()) {
      if (!isSessionRecord(record)) continue;
      if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      const { text, tokens } = capText(record.x, Math.floor(budgetTokens * EVENT_SHARE), tokenizer);
      const plain = proseOf(record.x);
      out.push({ record, text, tokens, mentions: extractMentions(record.t ? `${record.t} ${plain}` : plain) });
    }
    return out;
  };
  const applied = await db.foldJournal(prepare, (tx, prepared) => applyEvents(tx, prepared), extra);
  return applied ?? new Map();
}

/** Stores prepared events in order: exchange numbering, the session row, the focus. */
function applyEvents(tx: Tx, prepared: readonly PreparedEvent[]): Map<string, SessionEvent> {
  const out = new Map<string, SessionEvent>();
  for (const { record, text, tokens, mentions } of prepared) {
    const id = record.s;
    let row = tx.first('SELECT * FROM sessions WHERE id = ?', [id]);
    if (!row) {
      tx.run('INSERT INTO sessions (id, created_at, updated_at) VALUES (?, ?, ?)', [id, record.at, record.at]);
      row = tx.first('SELECT * FROM sessions WHERE id = ?', [id])!;
    }
    const lastExchange = num(row.last_exchange);
    const lastKind = optStr(row.last_kind);
    const open = num(row.open_question) === 1;
    const kind = record.k;
    let exchange = lastExchange;
    if (lastExchange === 0 || kind === 'question' || (kind === 'tool_call' && !open && (lastKind === 'tool_result' || lastKind === 'answer'))) exchange = lastExchange + 1;
    const stillOpen = kind === 'question' ? true : kind === 'answer' ? false : exchange === lastExchange && open;
    tx.run('INSERT INTO session_events (session, exchange, kind, author, tool, text, meta, tokens, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', [
      id,
      exchange,
      kind,
      record.a,
      record.t ?? null,
      text,
      record.m ? JSON.stringify(record.m) : null,
      tokens,
      record.at,
    ]);
    const eventId = tx.lastId();
    const focus = parseFocus(optStr(row.focus));
    const merged: SessionFocus = {
      symbols: mergeRecent(focus.symbols, mentions.symbols, KEEP_SYMBOLS),
      files: mergeRecent(focus.files, mentions.files, KEEP_FILES),
      decisions: mergeRecent(focus.decisions, mentions.decisions.map((d) => clip(d, 300)), KEEP_DECISIONS),
    };
    tx.run('UPDATE sessions SET updated_at = ?, last_exchange = ?, last_kind = ?, open_question = ?, focus = ? WHERE id = ?', [record.at, exchange, kind, stillOpen ? 1 : 0, JSON.stringify(merged), id]);
    const ev: SessionEvent = { id: eventId, exchange, kind, author: record.a, text, tokens, created_at: new Date(record.at).toISOString() };
    if (record.t !== undefined) ev.tool = record.t;
    if (record.m !== undefined) ev.meta = record.m;
    out.set(record.u, ev);
  }
  return out;
}

/**
 * Records one tool call and its result in a session: the helper hosts use so that every tool
 * call (MCP, CLI `--session`, chat) lands in the shared context the same way.
 */
export interface ToolExchange {
  tool: string;
  author?: string;
  input: unknown;
  output: unknown;
  error?: string;
}

export async function recordToolExchange(session: SessionContext, call: ToolExchange, opts: { signal?: AbortSignal } = {}): Promise<void> {
  await recordToolExchanges(session, [call], opts);
}

/** Records several tool calls and their results, in order, in one journal append. */
export async function recordToolExchanges(session: SessionContext, calls: readonly ToolExchange[], opts: { signal?: AbortSignal } = {}): Promise<void> {
  const events: SessionEventInput[] = [];
  for (const call of calls) {
    const args = JSON.stringify(call.input ?? {});
    events.push({ kind: 'tool_call', tool: call.tool, author: call.author ?? 'agent', text: `${call.tool}(${args})` });
    const result = call.error !== undefined ? `error: ${call.error}` : typeof call.output === 'string' ? call.output : JSON.stringify(call.output);
    events.push({ kind: 'tool_result', tool: call.tool, author: call.tool, text: result });
  }
  await session.record(events, opts);
}

/**
 * The words of an event for mention extraction: a tool result recorded as JSON gives its
 * string values, one per line, so that escapes (`\n` in an answer) do not glue words into
 * names such as `nSearched`. A tool call `name({...})` gives its arguments' strings.
 */
export function proseOf(text: string): string {
  const call = /^([\w.-]+)\((\{.*\})\)$/s.exec(text);
  const json = call ? call[2]! : text;
  if (!/^\s*[{[]/.test(json)) return text;
  try {
    const out: string[] = [];
    const walk = (v: unknown, depth: number): void => {
      if (out.length > 2000 || depth > 8) return;
      if (typeof v === 'string') out.push(v);
      else if (Array.isArray(v)) for (const x of v) walk(x, depth + 1);
      else if (v && typeof v === 'object') for (const x of Object.values(v)) walk(x, depth + 1);
    };
    walk(JSON.parse(json), 0);
    return call ? `${call[1]} ${out.join('\n')}` : out.join('\n');
  } catch {
    // Cut to fit the budget, a JSON text no longer parses: its words as they are.
    return text.replace(/\\[nrt]/g, ' ');
  }
}

function defaultAuthor(input: SessionEventInput): string {
  if (input.kind === 'tool_result') return input.tool ?? 'tool';
  if (input.kind === 'answer') return 'oracle';
  return 'user';
}

function eventOf(r: Row): SessionEvent {
  const ev: SessionEvent = {
    id: num(r.id),
    exchange: num(r.exchange),
    kind: str(r.kind) as SessionEventKind,
    author: str(r.author),
    text: str(r.text),
    tokens: num(r.tokens),
    created_at: new Date(num(r.created_at)).toISOString(),
  };
  const tool = optStr(r.tool);
  if (tool) ev.tool = tool;
  const meta = optStr(r.meta);
  if (meta) {
    try {
      ev.meta = JSON.parse(meta) as Record<string, unknown>;
    } catch {
      // A damaged meta field loses only the metadata.
    }
  }
  return ev;
}

function renderEvent(e: SessionEvent): string {
  const label = e.kind === 'tool_call' ? `tool call ${e.tool ?? ''}`.trim() : e.kind === 'tool_result' ? `tool result ${e.tool ?? ''}`.trim() : e.kind;
  return `[${label} · ${e.author}]\n${e.text}`;
}

function parseFocus(raw: string | undefined): SessionFocus {
  try {
    const v = JSON.parse(raw ?? '{}') as Partial<SessionFocus>;
    return {
      symbols: Array.isArray(v.symbols) ? v.symbols.map(String) : [],
      files: Array.isArray(v.files) ? v.files.map(String) : [],
      decisions: Array.isArray(v.decisions) ? v.decisions.map(String) : [],
    };
  } catch {
    return { symbols: [], files: [], decisions: [] };
  }
}

function parseSummaryState(raw: string | undefined): SummaryState {
  try {
    const v = JSON.parse(raw ?? '{}') as Partial<SummaryState>;
    return { lines: Array.isArray(v.lines) ? v.lines.map(String) : [], omitted: typeof v.omitted === 'number' ? v.omitted : 0 };
  } catch {
    return { lines: [], omitted: 0 };
  }
}

/** One line per exchange: what was asked, which tools ran, what was answered. */
function exchangeLines(events: SessionEvent[]): string[] {
  const byExchange = new Map<number, SessionEvent[]>();
  for (const e of events) byExchange.set(e.exchange, [...(byExchange.get(e.exchange) ?? []), e]);
  const lines: string[] = [];
  for (const [n, evs] of byExchange) {
    const parts: string[] = [];
    for (const e of evs) {
      if (e.kind === 'question') parts.push(`asked: ${leadSentence(e.text, 160)}`);
      else if (e.kind === 'tool_call') parts.push(`called ${clip(e.text.replace(/\s+/g, ' '), 120)}`);
      else if (e.kind === 'tool_result') parts.push(`got: ${leadSentence(e.text, 120)}`);
      else parts.push(`answered: ${leadSentence(e.text, 160)}`);
    }
    lines.push(`#${n} ${clip(parts.join('; '), 400)}`);
  }
  return lines;
}

/** Exchange lines the summary state keeps at most; older ones only count as omitted. */
const KEEP_LINES = 200;

function foldLines(prev: SummaryState, events: SessionEvent[]): SummaryState {
  const lines = [...prev.lines, ...exchangeLines(events)];
  const drop = Math.max(0, lines.length - KEEP_LINES);
  return { lines: lines.slice(drop), omitted: prev.omitted + drop };
}

/**
 * The extractive running summary: key facts first (decisions, symbols, files: never dropped
 * while anything else can go), then one line per compressed exchange, oldest dropped first.
 */
function renderExtractive(state: SummaryState, focus: SessionFocus, cap: number, count: TokenCounter): string {
  const facts = renderFacts(focus);
  let lines = state.lines;
  let omitted = state.omitted;
  const build = (): string => {
    const body = [`Extractive summary of earlier exchanges (no language model was used).`, facts];
    if (lines.length || omitted) body.push('Exchanges:', ...(omitted ? [`- … ${omitted} earlier exchanges omitted`] : []), ...lines.map((l) => `- ${l}`));
    return body.filter(Boolean).join('\n');
  };
  let text = build();
  while (count(text) > cap && lines.length > 0) {
    const drop = Math.max(1, Math.ceil(lines.length / 4));
    lines = lines.slice(drop);
    omitted += drop;
    state.lines = lines;
    state.omitted = omitted;
    text = build();
  }
  return clipToTokens(text, cap, count);
}

function renderFacts(focus: SessionFocus): string {
  const out: string[] = [];
  if (focus.decisions.length) out.push('Key decisions:', ...focus.decisions.map((d) => `- ${d}`));
  if (focus.symbols.length) out.push(`Symbols: ${focus.symbols.join(', ')}`);
  if (focus.files.length) out.push(`Files: ${focus.files.join(', ')}`);
  return out.join('\n');
}

/** The searchable record of one compressed batch: its exchange lines and everything it mentioned. */
function renderDigest(events: SessionEvent[], first: number, last: number): string {
  const mentions: Mentions = { symbols: [], files: [], decisions: [] };
  for (const e of events) {
    const m = extractMentions(e.tool ? `${e.tool} ${e.text}` : e.text);
    mentions.symbols = mergeRecent(mentions.symbols, m.symbols, 10_000);
    mentions.files = mergeRecent(mentions.files, m.files, 10_000);
    mentions.decisions = mergeRecent(mentions.decisions, m.decisions, 10_000);
  }
  return [`Exchanges ${first}-${last}:`, ...exchangeLines(events).map((l) => `- ${l}`), renderFacts(mentions)].filter(Boolean).join('\n');
}

/** Appends what a model summary dropped: every kept symbol and file, and every decision, must stay findable. */
function ensureKept(summary: string, focus: SessionFocus): string {
  const missingSymbols = focus.symbols.filter((s) => !summary.includes(s));
  const missingFiles = focus.files.filter((f) => !summary.includes(f));
  const missingDecisions = focus.decisions.filter((d) => !summary.includes(d));
  const extra: string[] = [];
  if (missingDecisions.length) extra.push('Key decisions:', ...missingDecisions.map((d) => `- ${d}`));
  if (missingSymbols.length) extra.push(`Also mentioned symbols: ${missingSymbols.join(', ')}`);
  if (missingFiles.length) extra.push(`Also mentioned files: ${missingFiles.join(', ')}`);
  return extra.length ? `${summary}\n\n${extra.join('\n')}` : summary;
}

/** Cuts a text so that it counts at most `max` tokens, marking the cut. */
function clipToTokens(text: string, max: number, count: TokenCounter): string {
  if (count(text) <= max) return text;
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (count(`${text.slice(0, mid)}…`) <= max) lo = mid;
    else hi = mid - 1;
  }
  return `${text.slice(0, lo)}…`;
}

/** Cuts an over-long event text to `max` tokens with a note saying how much was cut. */
function capText(text: string, max: number, tokenizer: Tokenizer): { text: string; tokens: number } {
  // One encoding of the text gives both its length and, when it is too long, its head.
  const ids = tokenizer.encode(text);
  if (ids.length <= max) return { text, tokens: ids.length };
  const note = `\n… [cut: ${ids.length} tokens, kept the first ${max}]`;
  // The head plus "…" and the note must fit: leave room for them, then measure the result.
  const room = Math.max(1, max - tokenizer.count(note) - 2);
  const cut = `${tokenizer.decode(ids.slice(0, room))}…${note}`;
  return { text: cut, tokens: tokenizer.count(cut) };
}

/**
 * About 300 characters around the first query term found. Terms are tried in query order,
 * whole identifiers before their parts, so `ExchangeOneWidget` is shown rather than the first
 * `exchange` of the text.
 */
function snippet(text: string, terms: string[]): string {
  const lower = text.toLowerCase();
  let at = -1;
  for (const t of terms) {
    at = lower.indexOf(t);
    if (at !== -1) break;
  }
  const start = Math.max(0, at - 80);
  const piece = text.slice(start, start + 300).replace(/\s+/g, ' ').trim();
  return (start > 0 ? '…' : '') + piece + (start + 300 < text.length ? '…' : '');
}

function round(n: number): number {
  return Math.round(n * 1e4) / 1e4;
}
