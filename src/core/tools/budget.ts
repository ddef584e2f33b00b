/**
 * Token budgets and page cursors for agent tools. A tool answer goes straight into a
 * model's context window, so every answer is sized against a budget before it leaves, and
 * what does not fit is reachable through an opaque cursor instead of being lost.
 */
import { VltError } from '../errors';
import { sha1 } from '../parse/prepare';

/**
 * No tool answer may be larger than this many tokens, whatever the caller asks. Answers are
 * sized with the character estimate of `../tokens` (characters / 4), as the tools' descriptions say.
 */
export const MAX_ANSWER_TOKENS = 20_000;

interface CursorPayload {
  /** Format version, so that a later format can reject old cursors with a clear message. */
  v: 1;
  /** Offset of the first hit of the next page in the ranked list. */
  o: number;
  /** Hash of the request the cursor belongs to. */
  h: string;
}

/**
 * A short hash that identifies one request's ranked list. A cursor carries it, so that a
 * cursor passed with different arguments is rejected instead of silently paging through
 * some other list.
 */
export function requestFingerprint(parts: unknown[]): string {
  return sha1(JSON.stringify(parts)).slice(0, 16);
}

export function encodeCursor(offset: number, fingerprint: string): string {
  const payload: CursorPayload = { v: 1, o: offset, h: fingerprint };
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
}

/**
 * Reads a cursor made by {@link encodeCursor} for the request with `fingerprint`, and returns
 * its offset. Anything else (garbage, a cursor of another request) is a USAGE error whose
 * message tells the model how to recover.
 */
export function decodeCursor(cursor: string, fingerprint: string, maxOffset: number): number {
  let payload: Partial<CursorPayload> | undefined;
  if (/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) {
    try {
      const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
      if (parsed && typeof parsed === 'object') payload = parsed as Partial<CursorPayload>;
    } catch {
      payload = undefined;
    }
  }
  if (!payload || payload.v !== 1 || typeof payload.o !== 'number' || !Number.isInteger(payload.o) || payload.o < 0 || payload.o > maxOffset || typeof payload.h !== 'string') {
    throw new VltError('USAGE', 'cursor is not a valid cursor; pass the next_cursor value of a previous answer unchanged, or leave cursor out to start from the first page');
  }
  if (payload.h !== fingerprint) {
    throw new VltError(
      'USAGE',
      'cursor belongs to a different search (the query, limit, language or path differ); repeat the exact arguments of the search that returned it, or leave cursor out to start a new search',
    );
  }
  return payload.o;
}
