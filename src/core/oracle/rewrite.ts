/**
 * Conversational query rewriting: "what calls it?" after a question about `parseToken` must
 * search for `parseToken`. Only a question that depends on the conversation is rewritten; a
 * self-contained one is searched as the user wrote it.
 *
 * With a model, `oracle-rewrite` asks for a standalone search query, and the result is then
 * forced to keep every content term the user wrote (a term the model dropped is appended): a
 * rewrite may add what "it" means, never lose what the user asked. Without a model, or when it
 * fails, the last focus symbols and files are appended instead. Neither path ever drops a word.
 */
import { isVltError } from '../errors';
import type { ChatMessage, ChatModel } from '../llm/chat';
import type { PromptLibrary } from '../llm/prompts';
import { clip, extractFiles, extractSymbols } from '../memory/extract';
import { isStopword } from '../search/tokenizer';

/** A turn of the recent conversation, oldest first. */
export interface RewriteTurn {
  role: 'user' | 'assistant' | 'tool';
  text: string;
}

export interface RewriteSession {
  /** The last few turns, oldest first. */
  recent: RewriteTurn[];
  /** What the session has been about, most recent last (the session context's focus). */
  focus: { symbols: string[]; files: string[] };
}

export interface RewriteDeps {
  chat?: ChatModel;
  prompts?: PromptLibrary;
  signal?: AbortSignal;
}

export interface RewriteResult {
  /** The query to search with: the rewrite, or the question unchanged. */
  text: string;
  rewritten: boolean;
  /** `llm`: the model's rewrite (terms enforced); `focus`: focus appended; `none`: unchanged. */
  how: 'llm' | 'focus' | 'none';
  /** Why it was (not) rewritten, for `--explain`. */
  reason?: string;
}

/** Focus carried over without a model: few enough to keep the query about the question. */
const FOCUS_SYMBOLS = 3;
const FOCUS_FILES = 2;
/** The conversation the model sees: the last turns, each cut. */
const PROMPT_TURNS = 6;
const PROMPT_TURN_CHARS = 600;
/** A rewrite this much longer than the question is an answer or an essay, not a query. */
const MAX_REWRITE_CHARS = 400;
/** At most this many words, none of them an identifier, reads as a follow-up ("and tests?"). */
const SHORT_FOLLOW_UP_WORDS = 3;

/** Words that point back at the conversation. */
const REFERRING = new Set(['it', 'its', "it's", 'itself', 'this', 'that', 'these', 'those', 'they', 'them', 'their', 'theirs', 'one', 'ones']);
const DEMONSTRATIVES = new Set(['this', 'that', 'these', 'those']);

/** Words after which "that" points back ("is that tested", "what calls that") rather than relates. */
const BEFORE_REFERRING_THAT = new Set(
  'is was are does do did about of for to in with from on at like by than calls call uses use changes changed tests test handles handle returns return throws break breaks fix fixes explain show where why how when what'.split(' '),
);

/** "this project" is about the workspace, not the conversation. */
const SELF_CONTAINED_AFTER_DEMONSTRATIVE = /^(?:project|repo|repository|codebase|code ?base|workspace|app|application|library|package|module|tool|extension|crate)s?$/i;

/** Phrases that only make sense as a follow-up. */
const FOLLOW_UP_RE = /^\s*(?:and|also|but|or|so|then)\b|\b(?:the same|what about|how about|and what|what else|instead|as well|the other(?: one)?s?|the previous|the last one|above|mentioned|you said)\b/i;

/**
 * Words that are not content: question words, pronouns, fillers. What remains of a question
 * after these (and the tokenizer's stop words) are the terms a rewrite must keep.
 */
const NOT_CONTENT = new Set(
  (
    'what where which who whom whose why when how does do did done is are was were be been being can could should would will shall may might must ' +
    'the a an and or but so then also about same else instead other another well again please tell show explain me us you i we our my ' +
    'it its itself this that these those they them their theirs he she him her one ones there here any some all'
  ).split(' '),
);

const WORD_RE = /[A-Za-z0-9_$][\w$]*(?:[./:#-][\w$]+)*/g;

/** The words of a question a rewrite must keep, in order, without duplicates (case-insensitive). */
export function contentTerms(question: string): string[] {
  const out: string[] = [];
  for (const m of question.matchAll(WORD_RE)) {
    const w = m[0];
    const lower = w.toLowerCase();
    if (lower.length < 2 || /^\d+$/.test(lower) || NOT_CONTENT.has(lower) || isStopword(lower)) continue;
    if (!out.some((t) => t.toLowerCase() === lower)) out.push(w);
  }
  return out;
}

/** Identifiers and paths the question names itself (code-like words, backticked names). */
function ownIdentifiers(question: string): string[] {
  return [...extractSymbols(question), ...extractFiles(question)];
}

/**
 * Whether a question depends on the conversation, and why. Conversational: it opens or reads
 * like a follow-up ("and the tests?", "what about X"); or it refers back with a pronoun ("what
 * calls it?"), or is a very short question, and names no identifier of its own. A question that
 * names its own identifiers ("what calls parseToken?") is self-contained even with a pronoun in
 * it: rewriting it would add the previous subject to a search that never asked for it.
 */
export function conversationalReason(question: string): { conversational: boolean; reason: string } {
  const q = question.trim();
  if (!q) return { conversational: false, reason: 'empty question' };
  const followUp = FOLLOW_UP_RE.exec(q);
  if (followUp) return { conversational: true, reason: `follow-up phrase "${followUp[0].trim()}"` };
  if (ownIdentifiers(q).length > 0) return { conversational: false, reason: 'self-contained: names its own identifiers' };
  const words = q.split(/\s+/).map((w) => w.replace(/^[^\w$']+|[^\w$']+$/g, '').toLowerCase());
  for (let i = 0; i < words.length; i++) {
    const w = words[i] ?? '';
    if (!REFERRING.has(w)) continue;
    const prev = words[i - 1];
    // "this project", "that module": the workspace itself, not something said earlier.
    if (DEMONSTRATIVES.has(w) && SELF_CONTAINED_AFTER_DEMONSTRATIVE.test(words[i + 1] ?? '')) continue;
    // "one" refers back only as "that one", "the other one", not as the number.
    if ((w === 'one' || w === 'ones') && !['this', 'that', 'which', 'the', 'other'].includes(prev ?? '')) continue;
    // "the function that parses headers", "so that": a relative pronoun or a conjunction. As a
    // reference back it opens or ends the question or follows a verb or preposition.
    if (w === 'that' && prev !== undefined && i < words.length - 1 && !BEFORE_REFERRING_THAT.has(prev)) continue;
    return { conversational: true, reason: `refers back with "${w}"` };
  }
  if (words.filter(Boolean).length <= SHORT_FOLLOW_UP_WORDS) return { conversational: true, reason: 'a short follow-up without identifiers' };
  return { conversational: false, reason: 'self-contained: no reference to the conversation' };
}

/** The message of a model rewrite (`oracle-rewrite`). */
export function rewriteMessages(question: string, session: RewriteSession, prompts: PromptLibrary): ChatMessage[] {
  const turns = session.recent
    .filter((t) => t.text.trim())
    .slice(-PROMPT_TURNS)
    .map((t) => `${t.role}: ${clip(t.text.trim().replace(/\s+/g, ' '), PROMPT_TURN_CHARS)}`);
  return [
    {
      role: 'user',
      content: prompts.render('oracle-rewrite', {
        focus_symbols: session.focus.symbols.slice(-8).join(', ') || '(none)',
        focus_files: session.focus.files.slice(-5).join(', ') || '(none)',
        conversation: turns.join('\n') || '(none)',
        question: question.trim(),
      }),
    },
  ];
}

/**
 * Rewrites a conversational question into a standalone search query. Never throws for a
 * failing model (`LLM_FAILED` falls back to the focus); only `CANCELLED` and programming
 * errors (a missing prompt file) propagate.
 */
export async function rewriteQuestion(question: string, session: RewriteSession, deps: RewriteDeps = {}): Promise<RewriteResult> {
  const q = question.trim();
  const why = conversationalReason(q);
  if (!why.conversational) return { text: q, rewritten: false, how: 'none', reason: why.reason };
  const hasHistory = session.recent.some((t) => t.text.trim()) || session.focus.symbols.length > 0 || session.focus.files.length > 0;
  if (!hasHistory) return { text: q, rewritten: false, how: 'none', reason: `${why.reason}, but there is no conversation to resolve it against` };

  let llmFailure: string | undefined;
  if (deps.chat && deps.prompts) {
    try {
      const res = await deps.chat.complete({
        messages: rewriteMessages(q, session, deps.prompts),
        temperature: 0,
        maxTokens: 200,
        ...(deps.signal ? { signal: deps.signal } : {}),
      });
      const cleaned = cleanRewrite(res.text);
      if (cleaned && cleaned.length <= Math.max(MAX_REWRITE_CHARS, q.length * 3)) {
        const text = keepTerms(cleaned, q);
        return { text, rewritten: text !== q, how: 'llm', reason: why.reason };
      }
      llmFailure = cleaned ? 'the model returned an overlong rewrite' : 'the model returned an empty rewrite';
    } catch (e) {
      if (!isVltError(e) || e.code !== 'LLM_FAILED') throw e;
      llmFailure = `the model failed: ${e.message}`;
    }
  }
  return withFocus(q, session, llmFailure ? `${why.reason}; ${llmFailure}` : why.reason);
}

/** The query line of a model reply: no quotes, labels, fences or explanations. */
function cleanRewrite(reply: string): string {
  const line = reply
    .replace(/```[a-z]*\n?|```/gi, '')
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l.length > 0);
  if (!line) return '';
  return line
    .replace(/^(?:standalone\s+)?(?:search\s+)?(?:query|question|rewrite|rewritten(?:\s+question)?)\s*:\s*/i, '')
    .replace(/^(["'`“”‘’])(.*)\1$/, '$2')
    .replace(/^["“](.*)["”]$/, '$1')
    .trim();
}

/** Appends each of the user's content terms that `rewrite` lost, in the user's order. */
function keepTerms(rewrite: string, question: string): string {
  const lower = rewrite.toLowerCase();
  const missing = contentTerms(question).filter((t) => !containsWord(lower, t.toLowerCase()));
  return missing.length ? `${rewrite} ${missing.join(' ')}` : rewrite;
}

/** Whether `word` occurs in `text` on its own, not as part of a longer identifier. */
function containsWord(text: string, word: string): boolean {
  let at = text.indexOf(word);
  while (at >= 0) {
    const before = text[at - 1];
    const after = text[at + word.length];
    if ((before === undefined || !/[\w$]/.test(before)) && (after === undefined || !/[\w$]/.test(after))) return true;
    at = text.indexOf(word, at + 1);
  }
  return false;
}

/**
 * The question with the most recent focus symbols and files appended (those it does not name
 * already). When the session has no focus, the names the last user turn mentioned stand in.
 */
function withFocus(q: string, session: RewriteSession, reason: string): RewriteResult {
  let symbols = session.focus.symbols.slice(-FOCUS_SYMBOLS);
  let files = session.focus.files.slice(-FOCUS_FILES);
  if (symbols.length === 0 && files.length === 0) {
    const lastUser = [...session.recent].reverse().find((t) => t.role === 'user' && t.text.trim());
    if (lastUser) {
      symbols = extractSymbols(lastUser.text).slice(0, FOCUS_SYMBOLS);
      files = extractFiles(lastUser.text).slice(0, FOCUS_FILES);
    }
  }
  const lower = q.toLowerCase();
  const extra = [...symbols, ...files].filter((s, i, all) => s && all.indexOf(s) === i && !containsWord(lower, s.toLowerCase()));
  if (extra.length === 0) return { text: q, rewritten: false, how: 'none', reason: `${reason}; no focus to carry over` };
  return { text: `${q} ${extra.join(' ')}`, rewritten: true, how: 'focus', reason };
}
