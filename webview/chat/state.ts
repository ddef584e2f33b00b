/**
 * The chat's persisted state and the pure helpers over it: what a message holds, how a
 * restored state is checked, how context items become part of a question, how progress
 * events become the steps a message shows, and how a session's recorded events become a
 * transcript. No DOM here, so that it is tested without a browser.
 */
import type { AskEvent, ChatAnswer, CitedLines, ContextItem, SessionEventInfo } from './bridge';

export const SOURCES = ['code', 'notes', 'threads', 'git'] as const;
/** Messages kept in the persisted state (older ones stay in the server's session). */
const MAX_MESSAGES = 60;
const MAX_HISTORY = 50;

export interface Step {
  key: string;
  label: string;
  state: 'running' | 'ok' | 'failed' | 'timeout' | 'info';
}

export interface AnswerMeta {
  mode: ChatAnswer['mode'];
  model?: string;
  usage?: { promptTokens: number; completionTokens: number };
  /** From Enter to the answer, in ms, as the user waited. */
  ms: number;
  noContext: boolean;
  degraded?: string;
  rewritten?: string;
  cited: Record<string, CitedLines>;
  /** How the evidence brief was found (markdown), shown folded under the answer. */
  details?: string;
  explain?: unknown;
}

export interface Message {
  id: string;
  role: 'user' | 'assistant' | 'activity';
  /** Markdown for answers; plain text for questions and activity. */
  text: string;
  /** When it was asked or recorded (ms since the epoch). */
  at: number;
  author?: string;
  context?: ContextItem[];
  status?: 'streaming' | 'done' | 'stopped' | 'error';
  steps?: Step[];
  answer?: AnswerMeta;
  error?: string;
}

export interface ChatState {
  v: 1;
  session?: string;
  messages: Message[];
  sources: string[];
  explain: boolean;
  agent: boolean;
  history: string[];
  draft: string;
  context: ContextItem[];
  /** When it was persisted (ms since the epoch): of two copies (the webview's, the host's), the newer wins. */
  savedAt?: number;
}

export function emptyState(): ChatState {
  return { v: 1, messages: [], sources: [...SOURCES], explain: false, agent: false, history: [], draft: '', context: [] };
}

/** A restored state, or a fresh one when it is missing or not ours; a question cut off by a reload is marked stopped. */
export function restoreState(raw: unknown): ChatState {
  if (!raw || typeof raw !== 'object' || (raw as { v?: unknown }).v !== 1 || !Array.isArray((raw as ChatState).messages)) return emptyState();
  const s = { ...emptyState(), ...(raw as ChatState) };
  s.messages = s.messages.filter((m) => m && typeof m.id === 'string' && typeof m.text === 'string').map((m) => (m.status === 'streaming' ? { ...m, status: 'stopped' as const, steps: [] } : m));
  return s;
}

/** The state to persist: bounded in size. */
export function persistable(s: ChatState, now = Date.now()): ChatState {
  return { ...s, messages: s.messages.slice(-MAX_MESSAGES), history: s.history.slice(-MAX_HISTORY), savedAt: now };
}

/** Of two persisted copies of the state, the newer (a copy without a time is the older). */
export function newerState(a: unknown, b: unknown): unknown {
  const at = (x: unknown) => (x && typeof x === 'object' && typeof (x as { savedAt?: unknown }).savedAt === 'number' ? (x as { savedAt: number }).savedAt : -1);
  if (!a) return b;
  if (!b) return a;
  return at(b) > at(a) ? b : a;
}

/** The question as sent: the user's words, then each context item as a cited block. */
export function composeQuestion(text: string, context: readonly ContextItem[]): string {
  const parts = [text.trim()];
  for (const c of context) {
    if (c.kind === 'selection' && c.startLine !== undefined) {
      const range = c.endLine !== undefined && c.endLine !== c.startLine ? `${c.startLine}-${c.endLine}` : `${c.startLine}`;
      const fence = (c.text ?? '').includes('```') ? '~~~' : '```';
      parts.push(`About [${c.path}:${range}]:\n${fence}${c.language ?? ''}\n${c.text ?? ''}\n${fence}`);
    } else {
      parts.push(`About the file ${c.path}.`);
    }
  }
  return parts.filter(Boolean).join('\n\n');
}

const FAMILY_LABEL: Record<string, string> = { code: 'Searching code', notes: 'Reading notes', threads: 'Reading threads', git: 'Reading git history' };
const PATH_LABEL: Record<string, string> = {
  navigation: 'Asking the language servers',
  diagnostics: "Reading the language server's diagnostics",
  tests: 'Searching tests',
  graph: 'Following calls and imports',
  structure: 'Reading the repository map',
  scoped: 'Searching the named folder',
  git: 'Reading git history',
};

/** The steps list after one progress event (text events leave it alone). */
export function applyStep(steps: readonly Step[], e: AskEvent): Step[] {
  if (e.type === 'step') {
    const key = `step:${e.name}`;
    const base = PATH_LABEL[e.name] ?? FAMILY_LABEL[e.family] ?? `Running ${e.name}`;
    const label = e.state === 'running' ? `${base}…` : `${base}: ${e.state === 'ok' ? `${e.results ?? 0} found` : e.state === 'timeout' ? 'timed out' : 'failed'}${e.ms !== undefined ? ` (${e.ms} ms)` : ''}`;
    const next = steps.filter((s) => s.key !== key);
    const at = steps.findIndex((s) => s.key === key);
    const step: Step = { key, label, state: e.state };
    if (at < 0) return [...next, step];
    next.splice(at, 0, step);
    return next;
  }
  if (e.type === 'phase') {
    if (e.phase === 'analyze' || e.phase === 'retrieve') return [...steps];
    const label = e.phase === 'rerank' ? 'Ranking the evidence…' : e.phase === 'synthesize' || e.phase === 'agent' ? `Writing the answer (${e.message.replace(/^asking /, '')})…` : `${e.message}…`;
    return [...steps.map((s) => (s.state === 'running' && s.key.startsWith('phase:') ? { ...s, state: 'ok' as const } : s)), { key: `phase:${e.phase}`, label, state: 'running' }];
  }
  if (e.type === 'tool') {
    const args = e.args.length > 80 ? `${e.args.slice(0, 79)}…` : e.args;
    return [...steps, { key: `tool:${steps.length}`, label: `Called ${e.name}(${args})`, state: 'info' }];
  }
  return [...steps];
}

/**
 * How much of a streaming markdown text is settled: up to its last paragraph break (a blank
 * line) that is not inside a fenced code block, and never less than `from`. What follows can
 * still change meaning as more text arrives; what precedes cannot.
 */
export function settledLength(text: string, from: number): number {
  let inFence = false;
  let fence = '';
  let settled = from;
  let lineStart = 0;
  while (lineStart < text.length) {
    const nl = text.indexOf('\n', lineStart);
    if (nl < 0) break;
    const line = text.slice(lineStart, nl);
    const m = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (m) {
      if (!inFence) {
        inFence = true;
        fence = m[1]!;
      } else if (m[1]!.startsWith(fence[0]!) && m[1]!.length >= fence.length && line.trim() === m[1]) {
        inFence = false;
      }
    } else if (!inFence && line.trim() === '' && nl + 1 > settled) {
      settled = nl + 1;
    }
    lineStart = nl + 1;
  }
  return settled;
}

/** Every running step ended with the answer. */
export function settleSteps(steps: readonly Step[]): Step[] {
  return steps.map((s) => (s.state === 'running' ? { ...s, state: 'ok' } : s));
}

/**
 * A transcript from a session's recorded events: the chat's own questions (ask_oracle calls)
 * with their answers, and every other client's calls as activity lines.
 */
export function transcriptOf(events: readonly SessionEventInfo[]): Message[] {
  const out: Message[] = [];
  let pendingAsk: Message | undefined;
  events.forEach((e, i) => {
    const at = Date.parse(e.created_at) || 0;
    if (e.kind === 'tool_call' && e.tool === 'ask_oracle') {
      const m = /^ask_oracle\((.*)\)$/s.exec(e.text);
      let question = e.text;
      try {
        const args = JSON.parse(m?.[1] ?? '') as { question?: unknown };
        if (typeof args.question === 'string') question = args.question;
      } catch {
        // A call cut short in the session keeps its raw text.
      }
      pendingAsk = { id: `s${i}`, role: 'user', text: question, at, author: e.author };
      out.push(pendingAsk);
    } else if (e.kind === 'tool_result' && e.tool === 'ask_oracle' && pendingAsk) {
      let text = e.text;
      let mode: ChatAnswer['mode'] = 'extractive';
      let noContext = false;
      try {
        const r = JSON.parse(e.text) as { answer?: unknown; mode?: unknown; noContext?: unknown };
        if (typeof r.answer === 'string') text = r.answer;
        if (r.mode === 'llm' || r.mode === 'agent') mode = r.mode;
        noContext = r.noContext === true;
      } catch {
        // Long answers are cut in the session: shown as recorded.
      }
      out.push({ id: `s${i}`, role: 'assistant', text, at, status: 'done', answer: { mode, ms: 0, noContext, cited: {} } });
      pendingAsk = undefined;
    } else if (e.kind === 'question') {
      out.push({ id: `s${i}`, role: 'user', text: e.text, at, author: e.author });
    } else if (e.kind === 'answer') {
      out.push({ id: `s${i}`, role: 'assistant', text: e.text, at, status: 'done', answer: { mode: 'llm', ms: 0, noContext: false, cited: {} } });
    } else if (e.kind === 'tool_call') {
      out.push({ id: `s${i}`, role: 'activity', text: e.text.length > 300 ? `${e.text.slice(0, 299)}…` : e.text, at, author: e.author });
    }
  });
  return out;
}

/**
 * The activity of other clients (agents over MCP, language-model tools) recorded since the
 * chat's own messages, merged in time order without repeating what is shown.
 */
export function mergeActivity(messages: readonly Message[], events: readonly SessionEventInfo[], chatAuthor: (author: string) => boolean): Message[] {
  const shown = new Set(messages.filter((m) => m.role === 'activity').map((m) => `${m.at}|${m.text}`));
  const extra = transcriptOf(events.filter((e) => e.kind === 'tool_call' && !chatAuthor(e.author) && e.tool !== 'ask_oracle'))
    .concat(transcriptOf(events).filter((m) => m.role !== 'activity' && m.author !== undefined && !chatAuthor(m.author)))
    .map((m, i) => ({ ...m, id: `act-${m.at}-${i}`, role: 'activity' as const, text: m.role === 'user' ? `asked: ${m.text}` : m.text }))
    .filter((m) => !shown.has(`${m.at}|${m.text}`));
  if (extra.length === 0) return [...messages];
  return [...messages, ...extra].sort((a, b) => a.at - b.at);
}
