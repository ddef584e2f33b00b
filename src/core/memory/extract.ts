/**
 * Extractive distillation without a language model: the symbols, file paths and decisions a
 * text mentions, and its lead sentence. Summaries built from these are what a thread or a
 * compressed conversation keeps when no model is configured, and what a model-written
 * compression is checked against (a symbol it dropped is added back).
 */

/** What a text mentions that must survive any summary of it. */
export interface Mentions {
  symbols: string[];
  files: string[];
  decisions: string[];
}

const FILE_EXTENSIONS =
  'ts|tsx|js|jsx|mjs|cjs|py|go|rs|java|kt|kts|swift|c|h|cc|cpp|hpp|cs|rb|php|scala|sh|bash|zsh|sql|md|mdx|json|jsonc|yaml|yml|toml|ini|cfg|conf|xml|html|css|scss|vue|svelte|proto|graphql|gradle|lock|txt|env|dockerfile';

/** A path with a folder (`src/core/x.ts`, `./a/b`) or a bare file name with a known extension. */
const FILE_RE = new RegExp(
  String.raw`(?<![\w@/.-])(?:\.{0,2}/)?(?:[\w@.-]+/)+[\w@.-]+\.[A-Za-z0-9]{1,10}(?::\d+(?::\d+)?)?|(?<![\w@/.-])[\w-]+(?:\.[\w-]+)*\.(?:${FILE_EXTENSIONS})\b(?::\d+(?::\d+)?)?`,
  'g',
);

/** Backticked spans: the clearest sign that something is a code name. */
const BACKTICK_RE = /`([^`\n]{1,120})`/g;

/**
 * Identifier-like words: CamelCase with an inner capital (`UserService`, `getUser`,
 * `HTTPServer`), snake_case (`max_tokens`, `MAX_RETRIES`), dotted member paths
 * (`engine.search`, `Writer.Close`), and calls (`parse()`).
 */
const IDENT_RE = /(?<![\w$])(?:[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+|[A-Za-z_$][\w$]*\(\)|[a-z]+[A-Z][\w$]*|[A-Z][a-z0-9]+[A-Z][\w$]*|[A-Z]{2,}[a-z][\w$]*|[A-Za-z][A-Za-z0-9]*_[\w$]+)(?![\w$])/g;

/** Sentences that record a choice: these are kept verbatim by every summary. */
const DECISION_RE = /\b(?:decided|decides|decide|decision|chose|chosen|choose|will use|must)\b/i;

const MAX_SYMBOL_CHARS = 80;

/** Whether a dotted word is a file name (`README.md`) or a sentence joint (`done.Then`) rather than a member path. */
function looksLikeFile(word: string): boolean {
  return new RegExp(`\\.(?:${FILE_EXTENSIONS})$`, 'i').test(word);
}

/** URLs name hosts and routes, not symbols or workspace files. */
function withoutUrls(text: string): string {
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, ' ');
}

/** Symbols a text mentions, in first-mention order, without duplicates. */
export function extractSymbols(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(BACKTICK_RE)) {
    const inner = (m[1] ?? '').trim();
    // A backticked path is a file, not a symbol; a backticked sentence is neither.
    if (inner && !/\s/.test(inner) && !inner.includes('/') && !looksLikeFile(inner)) out.add(inner.replace(/\(\)$/, ''));
  }
  for (const m of withoutUrls(text).matchAll(IDENT_RE)) {
    const word = m[0];
    if (looksLikeFile(word) || word.length > MAX_SYMBOL_CHARS) continue;
    // `e.g` and `i.e` are not member paths.
    if (/^(?:e\.g|i\.e|etc|vs)$/i.test(word)) continue;
    out.add(word.replace(/\(\)$/, ''));
  }
  return [...out];
}

/** File paths a text mentions (line suffixes dropped), in first-mention order. */
export function extractFiles(text: string): string[] {
  const out = new Set<string>();
  for (const m of withoutUrls(text).matchAll(FILE_RE)) {
    const raw = m[0].replace(/:\d+(?::\d+)?$/, '');
    // Version numbers and URLs' hosts look like paths; a path needs a letter in its last part.
    if (/^\d+(?:\.\d+)+$/.test(raw) || /^(?:www\.|https?:)/i.test(raw)) continue;
    if (!/[A-Za-z]/.test(raw.split('/').pop() ?? '')) continue;
    out.add(raw);
  }
  return [...out];
}

/** Sentences that state a decision, trimmed, in order. */
export function extractDecisions(text: string): string[] {
  return splitSentences(text).filter((s) => DECISION_RE.test(s));
}

export function extractMentions(text: string): Mentions {
  return { symbols: extractSymbols(text), files: extractFiles(text), decisions: extractDecisions(text) };
}

/**
 * Sentences of a text: split after `.`, `!` or `?` followed by whitespace, and at blank lines
 * and list items. Good enough for notes and chat; not a linguistic sentence splitter.
 */
export function splitSentences(text: string): string[] {
  const out: string[] = [];
  for (const block of text.split(/\n\s*\n|\n(?=\s*(?:[-*+]|\d+\.)\s)/)) {
    const flat = block.replace(/\s+/g, ' ').trim();
    if (!flat) continue;
    for (const s of flat.split(/(?<=[.!?])\s+(?=[A-Z0-9`"'(\[])/)) {
      const t = s.trim();
      if (t) out.push(t);
    }
  }
  return out;
}

/** The first sentence of a text, cut to `maxChars` (on a word boundary when possible). */
export function leadSentence(text: string, maxChars = 200): string {
  const first = splitSentences(text)[0] ?? '';
  return clip(first, maxChars);
}

/** Cuts a text to `maxChars`, preferring a word boundary, and marks the cut with an ellipsis. */
export function clip(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const cut = text.slice(0, Math.max(1, maxChars - 1));
  const space = cut.lastIndexOf(' ');
  return `${space > maxChars * 0.6 ? cut.slice(0, space) : cut}…`;
}

/** Merges lists keeping first-seen order, then keeps at most `max` of the most recent. */
export function mergeRecent(older: readonly string[], newer: readonly string[], max: number): string[] {
  const seen = new Set<string>();
  const merged: string[] = [];
  // Newest first so that a repeated mention counts as recent, then restore reading order.
  for (const item of [...newer].reverse().concat([...older].reverse())) {
    if (seen.has(item)) continue;
    seen.add(item);
    merged.push(item);
  }
  return merged.slice(0, max).reverse();
}
