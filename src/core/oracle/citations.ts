/**
 * Citations in model-written answers: finding them (`[path:line]`, `[path:start-end]`,
 * `[note:path]`, `[thread:id#n]`, `[commit:abc1234]`) and checking each against what the model
 * was actually shown, so that an answer citing nothing real can be told apart from a grounded
 * one. Checking never changes the answer; the caller decides what an unknown citation costs.
 *
 * What counts as "shown" is a list of {@link CitableLocation}s: the context's evidence ranges,
 * the context items' own citation strings, the definitions the repository map lists, and (in
 * agent mode) the locations tool results named, recognised by {@link locationsInText}.
 */
import type { AssembledContext, Citation, SourceType } from './types';
import { normalizePath, parseCitations } from '../../protocol/citations';

export { parseCitations };

/**
 * How far outside a shown range a cited line may fall and still count: models often cite the
 * line of a signature just above a chunk, or a closing brace just below it.
 */
export const LINE_SLACK = 3;

/** Something the model saw that an answer may cite. */
export interface CitableLocation {
  source: SourceType;
  /** Workspace path for code; vault path for notes; thread id for threads; the hash for commits. */
  path: string;
  /** 1-based inclusive range; absent means the whole file (code) or not applicable. */
  startLine?: number;
  endLine?: number;
  /** The exact citation string (brackets included) the model was shown, when there was one. */
  citation?: string;
}

/** The outcome of {@link checkCitations}, both lists in order of first use. */
export interface CitationCheck {
  /** Citations that point at something the model was shown. */
  valid: Citation[];
  /** Citations as written (brackets included) that point at nothing the model was shown. */
  unknown: string[];
}

/**
 * Everything an answer built from `context` may cite: each item's own citation, the range of
 * its evidence, and every definition line the repository-map slice lists (`path:` headers
 * followed by `  L42 …` rows, the format of `intel/repomap.ts`).
 */
export function citableLocations(context: AssembledContext): CitableLocation[] {
  const out: CitableLocation[] = [];
  for (const item of context.items) {
    const r = item.evidence?.result;
    if (r) {
      const loc: CitableLocation = { source: r.source, path: r.path, citation: r.citation };
      if (r.startLine !== undefined) loc.startLine = r.startLine;
      if (r.endLine !== undefined) loc.endLine = r.endLine;
      out.push(loc);
    }
    // The item's citation may differ from its evidence's (a trimmed range) or stand alone
    // (conversation subjects, the map): the model was shown it, so it is citable as written.
    const parsed = parseCitations(item.citation)[0];
    if (parsed) {
      const loc: CitableLocation = { source: parsed.source, path: parsed.path, citation: item.citation };
      const range = /:(\d+)(?:-(\d+))?\]$/.exec(item.citation);
      if (parsed.source === 'code' && range) {
        loc.startLine = Number(range[1]);
        loc.endLine = Number(range[2] ?? range[1]);
      }
      out.push(loc);
    } else if (item.citation) {
      out.push({ source: 'code', path: '', citation: item.citation });
    }
    if (item.tier === 'map' && item.text !== context.repoMap) out.push(...repoMapLocations(item.text));
  }
  out.push(...repoMapLocations(context.repoMap));
  return out;
}

/** Definition lines of a repository-map text: a `path:` header, then `  L<line> signature` rows. */
function repoMapLocations(map: string): CitableLocation[] {
  const out: CitableLocation[] = [];
  let file: string | undefined;
  for (const line of map.split('\n')) {
    const header = /^(\S.*):\s*$/.exec(line);
    if (header) {
      file = header[1];
      continue;
    }
    const row = /^\s+L(\d+)\s/.exec(line);
    if (row && file !== undefined) out.push({ source: 'code', path: file, startLine: Number(row[1]), endLine: Number(row[1]) });
    else if (/^\S/.test(line)) file = undefined;
  }
  return out;
}

/** `src/a.ts:12`, `src/a.ts:12-30` (an extension is required, so `host:80` is not a location). */
const TEXT_LOCATION_RE = /(?<![\w@/.-])((?:\.{0,2}\/)?(?:[\w@.+-]+\/)*[\w@+-]+(?:\.[\w+-]+)*\.[A-Za-z0-9]{1,10}):(\d+)(?:-(\d+))?(?!\d)/g;

/**
 * The locations a tool result names, so that an agent's answer may cite what its tools showed.
 * Deliberately simple, and documented here because tools' output formats are not typed:
 *
 * - plain `path:line` and `path:start-end` anywhere in the text (a path needs an extension);
 * - bracketed citations (`[note:…]`, `[thread:…#n]`, `[commit:…]`, `[path:line]`);
 * - a repository map (`path:` header, `  L42 …` rows), as `get_repo_map` returns;
 * - in JSON, every object with a string `path` (or `file`) and a numeric `line`, `start_line`
 *   or `startLine` (with `end_line`/`endLine` when present) at any depth.
 */
export function locationsInText(text: string): CitableLocation[] {
  const out: CitableLocation[] = [];
  for (const m of text.matchAll(TEXT_LOCATION_RE)) {
    const start = Number(m[2]);
    const end = m[3] !== undefined ? Number(m[3]) : start;
    if (start >= 1 && end >= start) out.push({ source: 'code', path: normalizePath(m[1] ?? ''), startLine: start, endLine: end });
  }
  for (const c of parseCitations(text)) {
    if (c.source === 'code') continue; // already found as plain text above
    out.push({ source: c.source, path: c.path, citation: c.citation });
  }
  out.push(...repoMapLocations(text));
  const trimmed = text.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      collectJsonLocations(JSON.parse(trimmed) as unknown, out, 0);
    } catch {
      // Not JSON after all (or cut short): the text patterns above are all there is.
    }
  }
  return out;
}

function collectJsonLocations(v: unknown, out: CitableLocation[], depth: number): void {
  if (depth > 12 || typeof v !== 'object' || v === null) return;
  if (Array.isArray(v)) {
    for (const x of v) collectJsonLocations(x, out, depth + 1);
    return;
  }
  const o = v as Record<string, unknown>;
  const path = typeof o.path === 'string' ? o.path : typeof o.file === 'string' ? o.file : undefined;
  const start = [o.line, o.start_line, o.startLine].find((x): x is number => typeof x === 'number' && Number.isInteger(x) && x >= 1);
  if (path && start !== undefined) {
    const endRaw = [o.end_line, o.endLine].find((x): x is number => typeof x === 'number' && Number.isInteger(x) && x >= start);
    out.push({ source: 'code', path: normalizePath(path), startLine: start, endLine: endRaw ?? start });
  }
  for (const x of Object.values(o)) collectJsonLocations(x, out, depth + 1);
}

/**
 * Splits an answer's citations into those pointing at something in `context` (or in `extra`,
 * e.g. what an agent's tools returned) and those pointing at nothing the model was shown.
 *
 * - A citation written exactly as one the model was shown is valid.
 * - A code citation `[path:line]` is valid when a shown code location of that path (not a git
 *   result: a commit names a file without showing its lines) covers the line, give or take
 *   {@link LINE_SLACK}; a location without a range covers the whole file. For `[path:a-b]`
 *   both ends must be covered so.
 * - `[note:path]` and `[thread:id#n]` must match a shown note or thread entry; `[commit:h]`
 *   matches a shown commit whose hash starts with `h` or is a prefix of it (models shorten and
 *   lengthen hashes).
 */
export function checkCitations(text: string, context: AssembledContext, extra: readonly CitableLocation[] = []): CitationCheck {
  const shown = [...citableLocations(context), ...extra];
  const exact = new Set(shown.map((l) => l.citation).filter((c): c is string => c !== undefined));
  const valid: Citation[] = [];
  const unknown: string[] = [];
  for (const c of parseCitations(text)) {
    if (exact.has(c.citation) || isShown(c, shown)) valid.push(c);
    else unknown.push(c.citation);
  }
  return { valid, unknown };
}

function isShown(c: Citation, shown: readonly CitableLocation[]): boolean {
  switch (c.source) {
    case 'note':
      return shown.some((l) => l.source === 'note' && normalizePath(l.path) === c.path);
    case 'thread':
      return shown.some((l) => l.source === 'thread' && l.citation !== undefined && sameThreadEntry(l.citation, c));
    case 'git':
      return shown.some((l) => {
        const hash = l.source === 'git' ? /^\[commit:([0-9a-f]+)\]$/i.exec(l.citation ?? '')?.[1]?.toLowerCase() : undefined;
        return hash !== undefined && Math.min(hash.length, c.path.length) >= 7 && (hash.startsWith(c.path) || c.path.startsWith(hash));
      });
    default: {
      const range = /:(\d+)(?:-(\d+))?\]$/.exec(c.citation);
      const start = Number(range?.[1] ?? c.line ?? 0);
      const end = Number(range?.[2] ?? start);
      const ranges = shown.filter((l) => l.source !== 'git' && l.source !== 'note' && l.source !== 'thread' && l.path !== '' && normalizePath(l.path) === c.path);
      const covered = (line: number): boolean =>
        ranges.some((l) => l.startLine === undefined || (line >= l.startLine - LINE_SLACK && line <= (l.endLine ?? l.startLine) + LINE_SLACK));
      return covered(start) && covered(end);
    }
  }
}

function sameThreadEntry(shownCitation: string, c: Citation): boolean {
  const p = parseCitations(shownCitation)[0];
  return p !== undefined && p.source === 'thread' && p.path === c.path && p.line === c.line;
}
