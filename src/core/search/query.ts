/**
 * Pattern-based analysis of a search query. Agents paste whole bug reports, so besides the
 * plain terms we pull out the strong signals: identifiers as written (`ParseDuration`,
 * `http.HandlerFunc`, `parse_duration`), file paths and stack-frame locations
 * (`net/http/server.go:2047`), and adjacent-word joins ("parse duration" → `parseduration`)
 * that let a prose query hit a camelCase symbol exactly.
 */
import { tokenizeQuery, isStopword } from './tokenizer';

export interface PathMention {
  path: string;
  line?: number;
}

export interface AnalyzedQuery {
  raw: string;
  /** Distinct index terms of the whole query. */
  terms: string[];
  /** Identifiers that look like code: mixed case, underscores, dotted member access, calls. */
  identifiers: string[];
  /** Lower-cased joins of 2 adjacent words, as symbol-name candidates ("parse duration" → parseduration). */
  joins: string[];
  /** The same for 3 adjacent words. */
  joins3: string[];
  /** The same for 4 adjacent words ("get object or 404" → getobjector404). */
  joins4: string[];
  /** The last part of each dotted identifier (`http.HandlerFunc` → `HandlerFunc`), and each plain word. */
  words: string[];
  paths: PathMention[];
  /** More than {@link LONG_QUERY_WORDS} words: treat as a pasted document. */
  isLong: boolean;
}

export const LONG_QUERY_WORDS = 40;

const PATH_RE = /(?:[A-Za-z0-9_.@-]+\/)*[A-Za-z0-9_@-][A-Za-z0-9_.@-]*\.(?:go|py|pyi|rs|ts|tsx|mts|cts|js|jsx|mjs|cjs|java|c|h|cc|cpp|cxx|hpp|hh|cs|rb|php|kt|kts|swift|md)\b(?::(\d+))?/g;
/** Python traceback frames: File "django/db/models/query.py", line 123 */
const PY_FRAME_RE = /File "([^"]+)", line (\d+)/g;
const IDENT_RE = /[A-Za-z_$][A-Za-z0-9_$]*(?:(?:\.|::|->|#)[A-Za-z_$][A-Za-z0-9_$]*)*|[0-9]+/g;

function looksLikeCode(word: string): boolean {
  return /[a-z][A-Z]|[A-Z]{2,}[a-z]|_|\.|::|->|#/.test(word) || /^[A-Z][a-z0-9]+[A-Z]/.test(word);
}

export function analyzeQuery(raw: string): AnalyzedQuery {
  const paths: PathMention[] = [];
  const seenPaths = new Set<string>();
  const addPath = (p: string, line?: string) => {
    const clean = p.replace(/^\.?\/+/, '');
    const key = `${clean}:${line ?? ''}`;
    if (seenPaths.has(key)) return;
    seenPaths.add(key);
    paths.push(line ? { path: clean, line: Number(line) } : { path: clean });
  };
  for (const m of raw.matchAll(PY_FRAME_RE)) addPath(m[1]!, m[2]);
  for (const m of raw.matchAll(PATH_RE)) addPath(m[0].replace(/:\d+$/, ''), m[1]);

  const withoutPaths = raw.replace(PATH_RE, ' ');
  const identifiers: string[] = [];
  const words: string[] = [];
  const seenIdent = new Set<string>();
  const plain: string[] = [];
  for (const m of withoutPaths.matchAll(IDENT_RE)) {
    const tok = m[0];
    plain.push(...tok.split(/\.|::|->|#/));
    if (looksLikeCode(tok) && !seenIdent.has(tok)) {
      seenIdent.add(tok);
      identifiers.push(tok);
    }
    for (const part of tok.split(/\.|::|->|#/)) {
      if (part.length >= 2 && !isStopword(part.toLowerCase()) && !words.includes(part)) words.push(part);
    }
  }

  const joins = new Set<string>();
  const joins3 = new Set<string>();
  const joins4 = new Set<string>();
  // Joins keep stop words: "context with timeout" must reach WithTimeout, "encode to string"
  // EncodeToString.
  const lowerWords = plain.map((w) => w.toLowerCase()).filter((w) => w.length >= 1);
  for (let i = 0; i + 1 < lowerWords.length && joins.size < 64; i++) {
    joins.add(lowerWords[i]! + lowerWords[i + 1]!);
    if (i + 2 < lowerWords.length) joins3.add(lowerWords[i]! + lowerWords[i + 1]! + lowerWords[i + 2]!);
    if (i + 3 < lowerWords.length) joins4.add(lowerWords.slice(i, i + 4).join(''));
  }

  const wordCount = raw.split(/\s+/).filter(Boolean).length;
  return {
    raw,
    terms: tokenizeQuery(raw),
    identifiers,
    joins: [...joins],
    joins3: [...joins3],
    joins4: [...joins4],
    words,
    paths,
    isLong: wordCount > LONG_QUERY_WORDS,
  };
}
