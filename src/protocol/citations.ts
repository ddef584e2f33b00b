/**
 * The citations of an answer's text, as every reader of an answer finds them (the oracle that
 * checks them, the chat's server that records their lines, the chat's view that links them):
 * `[path:line]`, `[path:start-end]`, `[note:path]`, `[thread:id#n]`, `[commit:abc1234]`. The
 * format is part of the answer's contract, so its one parser lives with the wire types; it
 * depends on nothing.
 */

/** One citation as written, and what it points at. */
export interface CitationRef {
  /** As written in the answer (normalised): `[path:line]`, `[note:path]`, `[thread:id#n]`, `[commit:abc1234]`. */
  citation: string;
  source: 'code' | 'note' | 'thread' | 'git';
  /** A workspace path, a vault path, a thread name or a commit hash. */
  path: string;
  /** The (first) cited line, or a thread entry's number. */
  line?: number;
}

/**
 * One bracketed group not followed by `(`: `[text](url)` is a Markdown link (or image), not a
 * citation. Adjacent groups (`[a.go:3][b.go:9]`) are each a candidate; what a group holds
 * decides whether it is a citation.
 */
const BRACKET_RE = /\[([^\[\]\n]{3,400})\](?!\()/g;

/** `path:line` or `path:start-end`; the path needs a letter and no whitespace. */
const CODE_PART_RE = /^((?:[^\s:\[\]]+)):(\d+)(?:\s*[-–]\s*(\d+))?$/;
/** Vault paths may hold spaces (`[note:design/Cache plan.md]`); thread ids and hashes may not. */
const PREFIXED_PART_RE = /^(note|thread|commit):\s*([^\[\]]*[^\s\[\]])$/i;
const THREAD_RE = /^(.+)#(\d+)$/;
const COMMIT_RE = /^[0-9a-f]{4,40}$/i;

/** Fenced code blocks: a slice like `xs[a:10]` in a snippet is code, not a citation. */
const FENCE_RE = /^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1[ \t]*$/gm;

/**
 * The citations of an answer, in order of first use, without duplicates. A bracket holding
 * several citations separated by `,` or `;` (`[a.go:3, b.go:9]`, which models write although
 * told not to) yields each of them, written back as `[a.go:3]` and `[b.go:9]`. Markdown links,
 * footnote numbers (`[1]`), task boxes and anything inside fenced code blocks are ignored.
 */
export function parseCitations(text: string): CitationRef[] {
  const out: CitationRef[] = [];
  const seen = new Set<string>();
  const prose = text.replace(FENCE_RE, (block) => block.replace(/[^\n]/g, ' '));
  for (const m of prose.matchAll(BRACKET_RE)) {
    const parts = (m[1] ?? '').split(/\s*[;,]\s*/);
    const parsed = parts.map(parsePart);
    // A bracket is a citation group only when every part is one: `[see a.go:3, or not]` is prose.
    if (parsed.length === 0 || parsed.some((p) => p === undefined)) continue;
    for (const c of parsed as CitationRef[]) {
      if (seen.has(c.citation)) continue;
      seen.add(c.citation);
      out.push(c);
    }
  }
  return out;
}

function parsePart(raw: string): CitationRef | undefined {
  const part = raw.trim();
  const pre = PREFIXED_PART_RE.exec(part);
  if (pre) {
    const kind = (pre[1] ?? '').toLowerCase();
    const rest = pre[2] ?? '';
    const citation = `[${kind}:${rest}]`;
    if (kind === 'note') return { citation, source: 'note', path: normalizePath(rest) };
    if (/\s/.test(rest)) return undefined;
    if (kind === 'thread') {
      const t = THREAD_RE.exec(rest);
      return t ? { citation, source: 'thread', path: t[1] ?? '', line: Number(t[2]) } : { citation, source: 'thread', path: rest };
    }
    return COMMIT_RE.test(rest) ? { citation, source: 'git', path: rest.toLowerCase() } : undefined;
  }
  const code = CODE_PART_RE.exec(part);
  if (!code) return undefined;
  const path = code[1] ?? '';
  // `[12:30]` is a time and `[a:1]` a slice, not a file: a path needs a letter and a `.` or `/`
  // (extension-less files such as `Makefile` are cited with their folder or not at all).
  if (!/[A-Za-z]/.test(path) || !/[./]/.test(path) || /^[a-z][a-z0-9+.-]*\/\//i.test(path)) return undefined;
  const start = Number(code[2]);
  const end = code[3] !== undefined ? Number(code[3]) : undefined;
  if (start < 1 || (end !== undefined && end < start)) return undefined;
  const citation = end !== undefined && end > start ? `[${path}:${start}-${end}]` : `[${path}:${start}]`;
  return { citation, source: 'code', path: normalizePath(path), line: start };
}

/** `./src\a.ts` and `src/a.ts` name the same file. */
export function normalizePath(p: string): string {
  return p.replace(/\\/g, '/').replace(/^(?:\.\/)+/, '');
}
