/**
 * Note paths: validation of what a caller asks for, and the rule that turns a note name into
 * one note. Both are pure string functions so that every entry point (CLI, MCP tools, the
 * Librarian) refuses and resolves exactly alike.
 */
import * as path from 'node:path';
import { VltError } from '../errors';

/** A note path longer than this is refused: no file system keeps longer names. */
const MAX_PATH_CHARS = 1000;
const MAX_SEGMENT_CHARS = 255;

/**
 * Checks a caller's note path and returns its canonical form: forward slashes, no `.` or
 * empty segments. Refuses (VltError) what could leave the vault or hide a note:
 * - absolute paths (`/x`, `\\x`, `C:\x`) and any `..` segment: PATH_OUTSIDE_VAULT;
 * - empty paths, control characters, hidden segments (`.git/x.md`), over-long names: USAGE.
 * With `ensureMd`, `.md` is appended when the path does not already end in it.
 */
export function normalizeNotePath(input: string, opts: { ensureMd?: boolean; allowEmpty?: boolean } = {}): string {
  if (typeof input !== 'string') throw new VltError('USAGE', 'a note path must be a string');
  if (input.length > MAX_PATH_CHARS) throw new VltError('USAGE', `note path is longer than ${MAX_PATH_CHARS} characters`);
  if (/[\x00-\x1f\x7f]/.test(input)) throw new VltError('USAGE', 'note path contains control characters');
  const trimmed = input.trim();
  if (/^(?:[/\\]|[A-Za-z]:)/.test(trimmed) || path.isAbsolute(trimmed)) {
    throw new VltError('PATH_OUTSIDE_VAULT', `note path ${JSON.stringify(input)} is absolute; give a path relative to the vault, such as "ideas/cache.md"`);
  }
  const segments = trimmed.replace(/\\/g, '/').split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) {
    throw new VltError('PATH_OUTSIDE_VAULT', `note path ${JSON.stringify(input)} contains "..", which could leave the vault; give a path inside it`);
  }
  for (const s of segments) {
    if (s.startsWith('.')) throw new VltError('USAGE', `note path ${JSON.stringify(input)} has a hidden segment "${s}"; hidden files and folders are not part of the vault`);
    if (s.length > MAX_SEGMENT_CHARS) throw new VltError('USAGE', `a segment of note path ${JSON.stringify(input)} is longer than ${MAX_SEGMENT_CHARS} characters`);
  }
  if (segments.length === 0) {
    if (opts.allowEmpty) return '';
    throw new VltError('USAGE', 'note path is empty');
  }
  let out = segments.join('/');
  if (opts.ensureMd && !/\.md$/i.test(out)) out += '.md';
  return out;
}

/** `guides/Setup.md` → `Setup`. */
export function noteName(notePath: string): string {
  return path.posix.basename(notePath).replace(/\.md$/i, '');
}

/** `guides/Setup.md` → `guides`; a top-level note's folder is ''. */
export function noteFolder(notePath: string): string {
  const d = path.posix.dirname(notePath);
  return d === '.' ? '' : d;
}

/**
 * The duplicate-name rule. When several notes answer to one name (`[[Setup]]` with both
 * `Setup.md` and `guides/Setup.md` in the vault), the winner is the note with the fewest
 * folders in its path, and among those the smallest path in plain code-unit order
 * (`A/x.md` < `a/x.md` < `b/x.md`). The rule depends only on the set of paths, never on
 * which note links or on the order files were found, so every reader, every process and
 * every run resolves a name to the same note. A link that must reach another note names its
 * path: `[[guides/Setup]]`.
 */
export function compareByResolutionRule(a: string, b: string): number {
  const depth = a.split('/').length - b.split('/').length;
  if (depth !== 0) return depth;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Resolves a Markdown link's destination (already URL-decoded, without `#anchor`) against the
 * folder of the note holding it. A destination starting with `/` is taken from the vault root.
 * Returns undefined when it climbs above the root.
 */
export function resolveRelative(fromFolder: string, target: string): string | undefined {
  const joined = target.startsWith('/') ? target.slice(1) : fromFolder ? `${fromFolder}/${target}` : target;
  const norm = path.posix.normalize(joined);
  if (norm === '..' || norm.startsWith('../') || norm.startsWith('/')) return undefined;
  return norm.replace(/^\.\//, '');
}

/** The relative Markdown destination from a note in `fromFolder` to `toPath`. */
export function relativeLink(fromFolder: string, toPath: string): string {
  const rel = path.posix.relative(fromFolder || '.', toPath);
  return rel === '' ? path.posix.basename(toPath) : rel;
}

/**
 * Resolves a wikilink target (or a read by name) in a name table: a path form (`a/b`) matches
 * the note at that path or, failing that, notes whose path ends with it; a bare name matches
 * by file name. Case is ignored; ties follow {@link compareByResolutionRule}.
 */
export function resolveWikiIn(names: Map<string, string[]>, target: string): string | undefined {
  const clean = target.trim().replace(/\\/g, '/').replace(/^\.?\//, '').replace(/\.md$/i, '');
  if (!clean) return undefined;
  const candidates = names.get(path.posix.basename(clean).toLowerCase()) ?? [];
  if (!clean.includes('/')) return candidates[0];
  const want = `${clean.toLowerCase()}.md`;
  const exact = candidates.filter((p) => p.toLowerCase() === want);
  if (exact.length) return exact[0];
  return candidates.find((p) => p.toLowerCase().endsWith(`/${want}`));
}

/** The shortest wikilink target that reaches `target`: its bare name when that resolves to it, else its path. */
export function wikiTargetFor(target: string, names: Map<string, string[]>): string {
  const bare = noteName(target);
  return resolveWikiIn(names, bare) === target ? bare : target.replace(/\.md$/i, '');
}
