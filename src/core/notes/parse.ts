/**
 * One Markdown note, parsed: YAML frontmatter (every field), title, tags, outbound links
 * (`[[wikilinks]]` and Markdown links to `.md` files) with their exact positions, a short
 * summary, and the fused text that search and answer contexts use.
 *
 * Pure and synchronous: it sees a text and a file name, never the file system, so it is
 * tested on strings and reused by the vault, the move rewriter and the Librarian.
 */
import { parseDocument } from 'yaml';
import { clip } from '../memory/extract';
import { errorMessage } from '../errors';

/** A problem found while parsing; the note is still indexed (as plain text when the frontmatter is bad). */
export interface NoteIssue {
  /** 1-based line in the file. */
  line: number;
  message: string;
}

export interface NoteLink {
  kind: 'wiki' | 'markdown';
  /** `![[…]]` or `![…](…)`: an embed rather than a reference. */
  embed: boolean;
  /**
   * What the link names: for a wikilink the name or vault path as written (`Setup`,
   * `guides/Setup`); for a Markdown link the URL-decoded path (`../guides/setup.md`).
   */
  target: string;
  /** `#heading` (or `#^block`) part, without the `#`. */
  heading: string | undefined;
  /** Wikilink alias after `|`, or a Markdown link's text. */
  label: string | undefined;
  /** 1-based line of the link in the file. */
  line: number;
  /** Offsets of the whole link (`[[…]]` or `[…](…)`) in the file text. */
  start: number;
  end: number;
  /**
   * Offsets of the part a move rewrites: a wikilink's target (before any `#` or `|`), a
   * Markdown link's destination (with its `<>` and `#anchor`, without a title).
   */
  targetStart: number;
  targetEnd: number;
}

export interface ParsedNote {
  /** Frontmatter fields; empty when there is none or it is invalid. */
  frontmatter: Record<string, unknown>;
  /** Problems with the frontmatter, each with its line in the file. */
  issues: NoteIssue[];
  /** The text after the frontmatter (the whole text when the frontmatter is invalid). */
  body: string;
  /** Offset of {@link body} in the file text. */
  bodyOffset: number;
  title: string;
  /** Lower-cased, without `#`, from frontmatter `tags`/`tag` and inline `#tags`, in first-seen order. */
  tags: string[];
  links: NoteLink[];
  /** Every frontmatter field but title and tags, flattened to `key: value` lines. */
  fieldsText: string;
  /** `summary` or `chronicle` field, else the first paragraph: what a linked neighbour contributes. */
  summary: string;
  /** The body and every extra field in one text: what a note contributes as context. */
  context: string;
}

/** Fields that have their own slot in the index and in the context. */
const OWN_FIELDS = new Set(['title', 'tags', 'tag']);

/** A neighbour's summary is a taste of the note, not the note. */
const SUMMARY_MAX_CHARS = 600;

/**
 * Parses a note. `name` is the file name without `.md`, the title of last resort.
 * Never throws: bad input yields issues, not exceptions.
 */
export function parseNote(text: string, name: string): ParsedNote {
  const issues: NoteIssue[] = [];
  const fm = splitFrontmatter(text, issues);
  const start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const frontmatter = fm ? parseFields(fm.yaml, fm.yamlLine, issues) : {};
  // Frontmatter that failed to parse still belongs to the file: it is searched as body text.
  const bodyOffset = fm && issues.length === 0 ? fm.bodyOffset : start;
  const body = text.slice(bodyOffset);

  const masked = maskCode(text);
  const lineStarts = lineStartsOf(text);
  const links = findLinks(text, masked, bodyOffset, lineStarts);
  const tags = collectTags(frontmatter, masked.slice(bodyOffset));
  const title = titleOf(frontmatter, masked.slice(bodyOffset), body, name);
  const fieldsText = Object.entries(frontmatter)
    .filter(([k]) => !OWN_FIELDS.has(k.toLowerCase()))
    .map(([k, v]) => `${k}: ${flatten(v)}`)
    .join('\n');
  const summaryField = stringField(frontmatter, 'summary') ?? stringField(frontmatter, 'chronicle');
  const summary = clip((summaryField ?? firstParagraph(body, masked.slice(bodyOffset))).replace(/\s+/g, ' ').trim(), SUMMARY_MAX_CHARS);
  const context = fieldsText ? `${body.trimEnd()}\n\n${fieldsText}` : body.trimEnd();
  return { frontmatter, issues, body, bodyOffset, title, tags, links, fieldsText, summary, context };
}

interface FrontmatterSlice {
  yaml: string;
  /** 1-based file line of the first YAML line. */
  yamlLine: number;
  bodyOffset: number;
}

/** Finds a `---` … `---` (or `...`) block at the very top; reports an unclosed one. */
function splitFrontmatter(text: string, issues: NoteIssue[]): FrontmatterSlice | undefined {
  const start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const open = /^---[ \t]*\r?\n/.exec(text.slice(start));
  if (!open) return undefined;
  const yamlStart = start + open[0].length;
  const close = /^(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/m;
  const rest = text.slice(yamlStart);
  const m = close.exec(rest);
  if (!m) {
    issues.push({ line: 1, message: 'frontmatter starts with --- but is never closed; the note is indexed as plain text' });
    return undefined;
  }
  return { yaml: rest.slice(0, m.index), yamlLine: 2, bodyOffset: yamlStart + m.index + m[0].length };
}

function parseFields(yaml: string, firstLine: number, issues: NoteIssue[]): Record<string, unknown> {
  if (yaml.trim() === '') return {};
  const doc = parseDocument(yaml, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    for (const err of doc.errors.slice(0, 5)) {
      const at = err.linePos?.[0]?.line ?? 1;
      const reason = (err.message.split('\n')[0] ?? err.message).replace(/ at line \d+, column \d+:?\s*$/, '');
      issues.push({ line: firstLine + at - 1, message: `invalid frontmatter: ${reason}; the note is indexed as plain text` });
    }
    return {};
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    issues.push({ line: firstLine, message: `invalid frontmatter: ${errorMessage(e)}; the note is indexed as plain text` });
    return {};
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    issues.push({ line: firstLine, message: 'invalid frontmatter: expected key: value pairs; the note is indexed as plain text' });
    return {};
  }
  return value as Record<string, unknown>;
}

/** A value as one line of text: lists joined by commas, maps as `key: value` pairs. */
function flatten(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (Array.isArray(v)) return v.map(flatten).join(', ');
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'object') return Object.entries(v as Record<string, unknown>).map(([k, x]) => `${k}: ${flatten(x)}`).join('; ');
  return String(v).trim();
}

function stringField(fm: Record<string, unknown>, key: string): string | undefined {
  const v = fm[key];
  return typeof v === 'string' && v.trim() ? v.trim() : undefined;
}

/**
 * The text with fenced code blocks and inline code spans replaced by spaces (newlines kept),
 * so that offsets and lines still match the original while no link, tag or heading is seen
 * inside code.
 */
export function maskCode(text: string): string {
  const blank = (s: string): string => s.replace(/[^\n]/g, ' ');
  // Fenced blocks: an opening fence of 3+ backticks or tildes to the same fence or the end.
  let out = text.replace(/^( {0,3})(`{3,}|~{3,})[^\n]*\n[\s\S]*?(?:^ {0,3}\2[`~]*[ \t]*$|(?![\s\S]))/gm, blank);
  // Inline spans: a run of backticks to the same run, on one paragraph.
  out = out.replace(/(`+)(?!`)[^\n]*?(?<!`)\1(?!`)/g, blank);
  // HTML comments hide their content from readers, so links inside them are not links.
  out = out.replace(/<!--[\s\S]*?-->/g, blank);
  return out;
}

function lineStartsOf(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

/** 1-based line of an offset. */
function lineAt(lineStarts: number[], offset: number): number {
  let lo = 0;
  let hi = lineStarts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((lineStarts[mid] ?? 0) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

const WIKILINK = /(!?)\[\[([^[\]\n]+?)\]\]/g;
const MDLINK = /(!?)\[((?:[^[\]\n]|\[[^\]\n]*\])*)\]\(\s*(<[^>\n]+>|[^\s)]+)(?:\s+(?:"[^"\n]*"|'[^'\n]*'|\([^)\n]*\)))?\s*\)/g;

/** A link found by `m` (whose group 1 is `!` for an embed) at `start`, its target at `targetStart`. */
function linkAt(lineStarts: number[], kind: NoteLink['kind'], m: RegExpMatchArray, at: Pick<NoteLink, 'target' | 'heading' | 'label' | 'start' | 'targetStart' | 'targetEnd'>): NoteLink {
  return { kind, embed: m[1] === '!', ...at, line: lineAt(lineStarts, at.start), end: at.start + m[0].length };
}

function findLinks(text: string, masked: string, from: number, lineStarts: number[]): NoteLink[] {
  const links: NoteLink[] = [];
  const scan = masked.slice(from);
  for (const m of scan.matchAll(WIKILINK)) {
    const inner = m[2] ?? '';
    const pipe = inner.indexOf('|');
    const ref = pipe === -1 ? inner : inner.slice(0, pipe);
    const label = pipe === -1 ? undefined : inner.slice(pipe + 1).trim();
    const hash = ref.indexOf('#');
    const rawTarget = hash === -1 ? ref : ref.slice(0, hash);
    const target = rawTarget.trim();
    const heading = hash === -1 ? undefined : ref.slice(hash + 1).trim();
    // `[[#Heading]]` points into the note itself; it names no other note.
    if (!target) continue;
    const start = from + (m.index ?? 0);
    const innerStart = start + (m[1] ?? '').length + 2;
    const targetStart = innerStart + (rawTarget.length - rawTarget.trimStart().length);
    links.push(linkAt(lineStarts, 'wiki', m, { target, heading, label, start, targetStart, targetEnd: targetStart + target.length }));
  }
  for (const m of scan.matchAll(MDLINK)) {
    const rawHref = m[3] ?? '';
    let href = rawHref;
    if (href.startsWith('<')) href = href.slice(1, -1);
    // External URLs, mail links and in-page anchors are not notes.
    if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('#') || href.startsWith('//')) continue;
    const hash = href.indexOf('#');
    let target = hash === -1 ? href : href.slice(0, hash);
    const heading = hash === -1 ? undefined : href.slice(hash + 1);
    try {
      target = decodeURI(target);
    } catch {
      // A malformed escape is kept as written.
    }
    if (!/\.md$/i.test(target)) continue;
    const start = from + (m.index ?? 0);
    // The original text, not the masked one: a link label may hold inline code.
    const label = text.slice(start, start + m[0].length).match(/^!?\[([\s\S]*)\]\(/)?.[1];
    // The destination is the first occurrence of its raw text after the label's `](`.
    const labelEnd = start + (m[1] ?? '').length + 1 + (m[2] ?? '').length + 2;
    const targetStart = text.indexOf(rawHref, labelEnd);
    links.push(linkAt(lineStarts, 'markdown', m, { target, heading, label, start, targetStart, targetEnd: targetStart + rawHref.length }));
  }
  return links.sort((a, b) => a.start - b.start);
}

/** `#tag` after whitespace or an opening bracket; must start with a letter or `_`, like Obsidian's. */
const INLINE_TAG = /(?<=^|[\s(,;[])#([\p{L}_][\p{L}\p{N}_/-]*)/gmu;

function collectTags(fm: Record<string, unknown>, maskedBody: string): string[] {
  const out = new Set<string>();
  const add = (raw: string): void => {
    const t = raw.trim().replace(/^#/, '').toLowerCase();
    if (t && /^[\p{L}\p{N}_/-]+$/u.test(t)) out.add(t);
  };
  for (const key of ['tags', 'tag']) {
    const v = fm[key];
    if (typeof v === 'string') v.split(/[,\s]+/).forEach(add);
    else if (Array.isArray(v)) for (const x of v) if (typeof x === 'string' || typeof x === 'number') add(String(x));
  }
  // Link targets like [[Note#Heading]] are masked out so their `#` is not a tag.
  const withoutLinks = maskedBody.replace(WIKILINK, (s) => ' '.repeat(s.length)).replace(MDLINK, (s) => ' '.repeat(s.length));
  for (const m of withoutLinks.matchAll(INLINE_TAG)) add(m[1] ?? '');
  return [...out];
}

function titleOf(fm: Record<string, unknown>, maskedBody: string, body: string, name: string): string {
  const fromFm = stringField(fm, 'title');
  if (fromFm) return clip(fromFm.replace(/\s+/g, ' '), 200);
  const h = /^ {0,3}#\s+(.+?)\s*#*\s*$/m.exec(maskedBody);
  if (h) return clip(body.slice(h.index, h.index + h[0].length).replace(/^ {0,3}#\s+/, '').replace(/\s*#*\s*$/, ''), 200);
  return name;
}

/** The first block of prose: not a heading, a rule, a code block, a table or an HTML tag. */
function firstParagraph(body: string, maskedBody: string): string {
  const lines = body.split('\n');
  const maskedLines = maskedBody.split('\n');
  const para: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const masked = (maskedLines[i] ?? '').trim();
    const isProse = masked !== '' && !/^(?:#{1,6}\s|[-*_]{3,}\s*$|\||<|>\s*\[!)/.test(masked);
    if (isProse) para.push(line.trim());
    else if (para.length > 0) break;
  }
  return para.join(' ');
}
