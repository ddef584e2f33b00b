/**
 * The snippet of a search hit: the lines of its chunk worth showing first. A chunk can start
 * with a licence header, imports or another small definition, so its first lines are often
 * not what matched. The snippet starts at the hit's definition when the hit has one, else at
 * the lines that hold the most query terms, and holds at most as many lines as before.
 */
import { tokenize } from './tokenizer';

/** Lines a hit's snippet holds at most. */
export const SNIPPET_LINES = 12;

export interface SnippetWindow {
  /** The 1-based file line of the snippet's first line. */
  line: number;
  text: string;
}

export interface SnippetFocus {
  /** The line of the definition the hit stands for, when it has one inside the chunk. */
  line?: number;
  /** The query's index terms (whole identifiers and their parts, words), lower-cased. */
  terms?: readonly string[];
}

/**
 * At most `maxLines` lines of a chunk that starts at `startLine`. A chunk that short is shown
 * whole. Otherwise the snippet starts at the focus definition's line, or at the first matching
 * line of the window that holds the most distinct query terms (then the most matches, then
 * the earliest), or at the chunk's start when no line matches. It never starts with lines
 * above what matched, which belong to something else (the end of the previous function), with
 * one exception: when the chunk ends before the snippet is full, a definition's doc comment
 * just above it is shown too.
 */
export function hitSnippet(chunk: { text: string; startLine: number }, focus: SnippetFocus, maxLines = SNIPPET_LINES): SnippetWindow {
  const lines = chunk.text.split('\n');
  if (lines.length <= maxLines) return { line: chunk.startLine, text: chunk.text };
  const at = focus.line !== undefined ? focus.line - chunk.startLine : -1;
  const definition = at >= 0 && at < lines.length;
  let first = definition ? at : bestMatchingLine(lines, focus.terms ?? [], maxLines);
  const end = Math.min(lines.length, first + maxLines);
  if (definition) while (end - first < maxLines && first > 0 && isCommentLine(lines[first - 1]!)) first--;
  return { line: chunk.startLine + first, text: lines.slice(first, end).join('\n') };
}

/** A line of a comment (a doc comment, a licence) or an annotation, as they stand above a definition. */
function isCommentLine(line: string): boolean {
  return /^(?:\/\/|#|\*|\/\*|\*\/|"""|@)/.test(line.trim());
}

/** The index of the first matching line of the best window of `size` lines, or 0 when none matches. */
function bestMatchingLine(lines: readonly string[], terms: readonly string[], size: number): number {
  const index = new Map<string, number>();
  for (const t of terms) if (!index.has(t)) index.set(t, index.size);
  if (index.size === 0) return 0;
  // Per line, the distinct query terms it holds.
  const hits = lines.map((line) => {
    const found = new Set<number>();
    for (const token of tokenize(line)) {
      const t = index.get(token);
      if (t !== undefined) found.add(t);
    }
    return [...found];
  });
  // A sliding window over the lines: how many lines of the window hold each term.
  const inWindow = new Int32Array(index.size);
  let distinct = 0;
  let matches = 0;
  const add = (i: number, d: 1 | -1): void => {
    for (const t of hits[i]!) {
      const before = inWindow[t]!;
      inWindow[t] = before + d;
      if (before === 0) distinct++;
      else if (before + d === 0) distinct--;
    }
    matches += d * hits[i]!.length;
  };
  let best = { start: 0, distinct: -1, matches: -1 };
  for (let end = 0; end < lines.length; end++) {
    add(end, 1);
    if (end >= size) add(end - size, -1);
    const start = Math.max(0, end - size + 1);
    if (distinct > best.distinct || (distinct === best.distinct && matches > best.matches)) best = { start, distinct, matches };
  }
  if (best.distinct <= 0) return 0;
  // Start at the window's first line that matches: the lines above it show nothing asked for.
  for (let i = best.start; i < best.start + size && i < lines.length; i++) if (hits[i]!.length > 0) return i;
  return best.start;
}
