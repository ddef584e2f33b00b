/**
 * AST-aware chunking, in the spirit of LlamaIndex's CodeSplitter and Sweep's chunker: walk
 * the syntax tree, pack sibling nodes into a chunk until the next one would overflow it,
 * descend into nodes that are too big on their own, then merge small neighbours. Chunks are
 * line ranges, so a chunk never splits a line. Each chunk then gets the context that makes
 * it readable alone: its main definition, the header of the enclosing class, decorators and
 * the doc comment.
 */
import type { Node, TreeCursor } from 'web-tree-sitter';
import type { Chunk, LanguageId, SymbolDef, SymbolKind } from '../types';

export interface ChunkOptions {
  /** Size limit of a chunk in characters; only a single line longer than this exceeds it. */
  maxChars: number;
  /** Hard limit of a chunk in lines. */
  maxLines: number;
  /** Chunks smaller than this are merged with a neighbour when the result fits. */
  minChars: number;
}

export const DEFAULT_CHUNK_OPTIONS: ChunkOptions = { maxChars: 1500, maxLines: 80, minChars: 200 };

/** Longest signature, container header, decorator or docstring we keep, in characters. */
const MAX_CONTEXT_CHARS = 200;
const MAX_DOCSTRING_CHARS = 1000;

/**
 * A definition or scope found by the tag query, with the live node it came from. The node is
 * only valid until the tree is deleted, so chunking runs before the parser frees the tree.
 */
export interface DefInfo {
  kind: SymbolKind | 'scope';
  qualifiedName: string;
  signature: string;
  /** 0-based rows of the definition node. */
  startRow: number;
  endRow: number;
  /** 0-based row of the name; its line is the header shown as a chunk's container. */
  headerRow: number;
  node: Node;
  /** The innermost definition or scope that encloses this one. */
  parent: DefInfo | undefined;
  /** The emitted symbol; undefined for scopes (impl blocks, extensions), which are not symbols. */
  symbol: SymbolDef | undefined;
}

/** Kinds whose header is worth showing as the container of the chunks inside them. */
const CONTAINER_KINDS: ReadonlySet<string> = new Set(['class', 'interface', 'struct', 'enum', 'trait', 'module', 'scope']);

/** Line offsets of a source text; rows are 0-based. */
export class LineIndex {
  /** Start offset of each row, plus a final sentinel at the end of the text. */
  private readonly starts: number[];
  /** Number of rows that hold text (a final newline does not open a new row). */
  readonly rowCount: number;

  constructor(readonly source: string) {
    const starts = [0];
    let i = source.indexOf('\n');
    while (i !== -1) {
      starts.push(i + 1);
      i = source.indexOf('\n', i + 1);
    }
    const endsWithNewline = source.length > 0 && source.charCodeAt(source.length - 1) === 10;
    this.rowCount = source.length === 0 ? 0 : endsWithNewline ? starts.length - 1 : starts.length;
    if (!endsWithNewline) starts.push(source.length + 1);
    this.starts = starts;
  }

  /** The row that holds a character offset. */
  rowOf(index: number): number {
    const starts = this.starts;
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] as number) <= index) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** Offset of the first character of a row. */
  start(row: number): number {
    return this.starts[row] ?? this.source.length;
  }

  /** Offset just past the last character of a row, before its newline. */
  end(row: number): number {
    const next = this.starts[row + 1];
    return next === undefined ? this.source.length : Math.min(next - 1, this.source.length);
  }

  /** Characters of rows s..e inclusive, counting their newlines. */
  size(s: number, e: number): number {
    return this.end(e) - this.start(s) + 1;
  }

  line(row: number): string {
    return this.source.slice(this.start(row), this.end(row));
  }

  /** Text of rows s..e inclusive, without the final newline and without carriage returns. */
  text(s: number, e: number): string {
    const t = this.source.slice(this.start(s), this.end(e));
    return t.includes('\r') ? t.replace(/\r(?=\n|$)/g, '') : t;
  }

  isBlank(row: number): boolean {
    const a = this.start(row);
    const b = this.end(row);
    for (let i = a; i < b; i++) {
      const c = this.source.charCodeAt(i);
      if (c !== 32 && c !== 9 && c !== 13 && c !== 12 && c !== 11) return false;
    }
    return true;
  }

  /** Non-whitespace characters in rows s..e, counted up to `limit` (to stay cheap). */
  solidChars(s: number, e: number, limit: number): number {
    let n = 0;
    const b = this.end(e);
    for (let i = this.start(s); i < b && n < limit; i++) {
      const c = this.source.charCodeAt(i);
      if (c > 32) n++;
    }
    return n;
  }
}

/** A range of rows, 0-based and inclusive. */
export interface Span {
  s: number;
  e: number;
}

/** Comment node types of the supported grammars contain "comment" in their name. */
function isComment(type: string): boolean {
  return type.includes('comment');
}

/** Nodes that annotate the declaration after them and belong in the same chunk. */
const DECORATOR_TYPES: ReadonlySet<string> = new Set([
  'decorator', // Python, TypeScript
  'annotation', // Java, Kotlin
  'marker_annotation', // Java
  'attribute_item', // Rust
  'attribute_list', // C#, PHP
  'attribute', // Swift (inside modifiers)
  'attribute_declaration', // C++ [[nodiscard]]
]);

/**
 * Sibling nodes that stick to the node after them when packing chunks. Swift's `attribute`
 * is left out: it only occurs inside modifiers, and Python uses the name for `obj.attr`.
 */
const GLUE_TYPES: ReadonlySet<string> = new Set([...DECORATOR_TYPES].filter((t) => t !== 'attribute'));

/** Nodes that hold a declaration's modifiers, annotations included. */
const MODIFIER_TYPES: ReadonlySet<string> = new Set(['modifiers', 'modifier', 'visibility_modifier', 'accessibility_modifier']);

/** The row a node ends on, not counting a final newline that some grammars include in a node. */
function endRowOf(startRow: number, end: { row: number; column: number }): number {
  return end.column === 0 && end.row > startRow ? end.row - 1 : end.row;
}

/**
 * Packs the tree's nodes into line spans of at most maxChars/maxLines. A TreeCursor is used
 * instead of recursion so that deeply nested code cannot overflow the stack, and because it
 * creates no Node objects for the nodes it only measures.
 */
/** The row where the cursor's node's `body` field starts (a definition's body), or -1 without one. */
function bodyStartRow(cursor: TreeCursor): number {
  return cursor.currentNode.childForFieldName('body')?.startPosition.row ?? -1;
}

// eslint-disable-next-line max-lines-per-function -- one walk of the syntax tree with a cursor; its cases share the walk's position
function collectSpans(root: Node, L: LineIndex, o: ChunkOptions): Span[] {
  const out: Span[] = [];
  const fits = (s: number, e: number): boolean => e - s + 1 <= o.maxLines && L.size(s, e) <= o.maxChars;
  const splitRows = (s: number, e: number): void => {
    let a = s;
    for (let r = s; r <= e; r++) {
      if (r > a && !fits(a, r)) {
        out.push({ s: a, e: r - 1 });
        a = r;
      }
    }
    out.push({ s: a, e });
  };

  interface Level {
    cur: Span | undefined;
    /** Start row of comments/decorators waiting for the node they annotate, or -1. */
    pending: number;
    pendingEnd: number;
    /** Last row covered by the children seen so far. */
    covered: number;
    /** Last row of the node whose children this level walks. */
    endRow: number;
  }
  const flush = (lvl: Level): void => {
    // Text after the last child that no child covers (the rest of a string whose only children
    // are escape sequences) is handled like trailing comments.
    if (lvl.endRow > lvl.covered) {
      if (lvl.pending < 0) lvl.pending = lvl.covered + 1;
      lvl.pendingEnd = lvl.endRow;
    }
    if (lvl.pending >= 0) {
      // Trailing comments of a level stay with the code before them when they fit.
      if (lvl.cur && fits(lvl.cur.s, lvl.pendingEnd)) lvl.cur.e = Math.max(lvl.cur.e, lvl.pendingEnd);
      else {
        if (lvl.cur) out.push(lvl.cur);
        lvl.cur = undefined;
        splitRows(lvl.pending, lvl.pendingEnd);
      }
      lvl.pending = -1;
    }
    if (lvl.cur) out.push(lvl.cur);
    lvl.cur = undefined;
  };

  const cursor = root.walk();
  try {
    if (!cursor.gotoFirstChild()) return out;
    const rootEnd = endRowOf(root.startPosition.row, root.endPosition);
    const levels: Level[] = [{ cur: undefined, pending: -1, pendingEnd: -1, covered: -1, endRow: rootEnd }];
    for (;;) {
      const lvl = levels[levels.length - 1] as Level;
      const type = cursor.nodeType;
      const sRow = cursor.startPosition.row;
      const eRow = endRowOf(sRow, cursor.endPosition);
      // Rows between the previous child and this one (blank lines, or text that belongs to
      // no child) count as part of this node, so that their size is never overlooked.
      const uStart = Math.min(sRow, lvl.covered + 1);
      lvl.covered = Math.max(lvl.covered, eRow);
      let descended = false;
      let bodyRow = -1;
      if (isComment(type) || GLUE_TYPES.has(type)) {
        if (lvl.pending < 0) lvl.pending = uStart;
        lvl.pendingEnd = Math.max(lvl.pendingEnd, eRow);
      } else {
        const s = lvl.pending >= 0 ? Math.min(lvl.pending, uStart) : uStart;
        lvl.pending = -1;
        lvl.pendingEnd = -1;
        if (fits(s, eRow)) {
          if (lvl.cur && fits(lvl.cur.s, eRow)) lvl.cur.e = Math.max(lvl.cur.e, eRow);
          else {
            if (lvl.cur) out.push(lvl.cur);
            lvl.cur = { s, e: eRow };
          }
        } else if (eRow > sRow && (bodyRow = bodyStartRow(cursor)) !== null && cursor.gotoFirstChild()) {
          // Too big: descend. The open chunk goes down too, so that a definition's header
          // (doc comment, signature) starts the same chunk as the first lines of its body.
          // Comments and gap rows before the big node go with its first piece. But when the
          // open chunk cannot also hold the header up to where the body starts, it closes here:
          // a header split between chunks (C's `int` on the line above `xmlParseCharRef(`)
          // leaves the definition's name apart from its type and its doc comment.
          if (lvl.cur && bodyRow > sRow && !fits(lvl.cur.s, bodyRow)) {
            out.push(lvl.cur);
            lvl.cur = undefined;
          }
          levels.push({ cur: lvl.cur, pending: -1, pendingEnd: -1, covered: s - 1, endRow: eRow });
          lvl.cur = undefined;
          descended = true;
        } else {
          // A single line cannot be split, so only multi-line nodes are worth descending into.
          if (lvl.cur) out.push(lvl.cur);
          lvl.cur = undefined;
          splitRows(s, eRow);
        }
      }
      if (descended) continue;
      // Advance to the next sibling, closing every level that has run out of children.
      let done = false;
      while (!cursor.gotoNextSibling()) {
        flush(levels.pop() as Level);
        if (levels.length === 0 || !cursor.gotoParent()) {
          done = true;
          break;
        }
      }
      if (done) break;
    }
    while (levels.length > 0) flush(levels.pop() as Level);
  } finally {
    cursor.delete();
  }
  return out;
}

/**
 * Turns raw spans into ordered, non-overlapping spans that cover every non-blank line: nodes
 * that share a line (`} else {`) make spans overlap, and blank lines between nodes belong to
 * no node. Gaps go to the following span, then blank lines at span edges are trimmed.
 */
function normalize(spans: Span[], L: LineIndex): Span[] {
  const res: Span[] = [];
  let prevE = -1;
  for (const sp of spans) {
    const e = sp.e;
    if (e <= prevE) continue;
    res.push({ s: prevE + 1, e });
    prevE = e;
  }
  const lastRow = L.rowCount - 1;
  if (lastRow >= 0) {
    if (res.length === 0) res.push({ s: 0, e: lastRow });
    else if (prevE < lastRow) (res[res.length - 1] as Span).e = lastRow;
  }
  const out: Span[] = [];
  for (const sp of res) {
    let { s, e } = sp;
    while (s <= e && L.isBlank(s)) s++;
    while (e >= s && L.isBlank(e)) e--;
    if (s <= e) out.push({ s, e });
  }
  return out;
}

/** Merges a small span into its neighbour when the result still fits the limits. */
function mergeSmall(spans: Span[], L: LineIndex, o: ChunkOptions): Span[] {
  const out: Span[] = [];
  for (const sp of spans) {
    const last = out[out.length - 1];
    if (last) {
      const small = L.size(last.s, last.e) < o.minChars || L.size(sp.s, sp.e) < o.minChars;
      if (small && sp.e - last.s + 1 <= o.maxLines && L.size(last.s, sp.e) <= o.maxChars) {
        last.e = sp.e;
        continue;
      }
    }
    out.push({ s: sp.s, e: sp.e });
  }
  return out;
}

/** Splits a tree into line spans (0-based, inclusive) ready to become chunks. */
export function chunkSpans(root: Node, L: LineIndex, o: ChunkOptions = DEFAULT_CHUNK_OPTIONS): Span[] {
  return mergeSmall(normalize(collectSpans(root, L, o), L), L, o);
}

function clip(s: string, max = MAX_CONTEXT_CHARS): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

function collapse(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/** Wrappers whose leading decorators and comments belong to the definition inside them. */
const WRAPPERS: ReadonlySet<string> = new Set(['decorated_definition', 'export_statement', 'template_declaration']);

/**
 * Statements that wrap a definition starting on the same line: `type X struct` (Go
 * type_declaration around type_spec), `const x = ...` (lexical_declaration around its
 * declarator), `static int n;` (C declaration), `X = 1` (Python expression_statement).
 */
const SAME_ROW_WRAPPERS: ReadonlySet<string> = new Set([
  'lexical_declaration',
  'variable_declaration',
  'type_declaration',
  'const_declaration',
  'var_declaration',
  'declaration',
  'expression_statement',
]);

/** The node that carries a definition's leading decorators and comments. */
function outerNode(node: Node): Node {
  let n = node;
  for (let p = n.parent; p; p = p.parent) {
    if (WRAPPERS.has(p.type) || (SAME_ROW_WRAPPERS.has(p.type) && p.startPosition.row === n.startPosition.row)) n = p;
    else break;
  }
  return n;
}

/** Decorators, annotations and attributes attached to a definition, as written. */
export function decoratorsOf(node: Node): string[] {
  const own: string[] = [];
  const take = (n: Node): void => {
    own.push(clip(collapse(n.text)));
  };
  const scanChildren = (n: Node): void => {
    for (let i = 0; i < n.namedChildCount; i++) {
      const c = n.namedChild(i);
      if (!c) break;
      if (DECORATOR_TYPES.has(c.type)) take(c);
      else if (MODIFIER_TYPES.has(c.type)) {
        for (let j = 0; j < c.namedChildCount; j++) {
          const m = c.namedChild(j);
          if (m && DECORATOR_TYPES.has(m.type)) take(m);
        }
      } else if (!isComment(c.type)) break;
    }
  };
  // Wrappers (export_statement, decorated_definition) hold decorators written before the
  // definition's own ones, so they are scanned outermost first.
  const outer = outerNode(node);
  const chain: Node[] = [];
  for (let n: Node | null = node; n; n = n.parent) {
    chain.unshift(n);
    if (n.id === outer.id) break;
  }
  for (const n of chain) scanChildren(n);
  // Decorators written as siblings before the definition (TS class members, Rust attributes).
  const before: string[] = [];
  for (let p = outer.previousNamedSibling; p; p = p.previousNamedSibling) {
    if (DECORATOR_TYPES.has(p.type)) before.unshift(clip(collapse(p.text)));
    else if (!isComment(p.type)) break;
  }
  return [...before, ...own];
}

function cleanComment(raw: string): string {
  const lines = raw.split('\n').map((l) =>
    l
      .replace(/\r$/, '')
      .trim()
      .replace(/^\/\*\*?!?/, '')
      .replace(/\*\/$/, '')
      .replace(/^\/\/[/!]?/, '')
      .replace(/^\*(?!\/)/, '')
      .replace(/^#+(?![[!])/, '')
      .replace(/<\/?summary>/g, '')
      .trim(),
  );
  while (lines.length > 0 && lines[0] === '') lines.shift();
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines.join('\n');
}

/** Python docstring text: quotes and prefixes removed, common indentation stripped. */
function cleanPyDocstring(raw: string): string {
  const m = /^[rRuUbBfF]*("""|'''|"|')([\s\S]*?)\1$/.exec(raw.trim());
  const body = m ? (m[2] ?? '') : raw;
  const lines = body.split('\n');
  const rest = lines.slice(1).filter((l) => l.trim() !== '');
  const indent = rest.length > 0 ? Math.min(...rest.map((l) => (/^\s*/.exec(l)?.[0].length ?? 0))) : 0;
  const out = [lines[0]?.trim() ?? '', ...lines.slice(1).map((l) => l.slice(indent).trimEnd())];
  while (out.length > 0 && out[0] === '') out.shift();
  while (out.length > 0 && out[out.length - 1] === '') out.pop();
  return out.join('\n');
}

/**
 * A definition's documentation: the Python docstring, else the block of comments right above
 * it (no blank line in between, decorators may sit between the comments and the definition).
 */
export function docstringOf(node: Node, language: LanguageId, L: LineIndex): string | undefined {
  if (language === 'python') {
    const body = node.childForFieldName('body');
    const first = body?.firstNamedChild;
    if (first?.type === 'expression_statement') {
      const str = first.firstNamedChild;
      if (str?.type === 'string') return clip(cleanPyDocstring(str.text), MAX_DOCSTRING_CHARS) || undefined;
    }
  }
  const outer = outerNode(node);
  let expectRow = outer.startPosition.row;
  const parts: string[] = [];
  for (let p = outer.previousNamedSibling; p; p = p.previousNamedSibling) {
    const sRow = p.startPosition.row;
    const eRow = endRowOf(sRow, p.endPosition);
    if (eRow < expectRow - 1) break;
    if (DECORATOR_TYPES.has(p.type)) {
      expectRow = sRow;
      continue;
    }
    if (!isComment(p.type)) break;
    // A comment that trails code on its line documents that code, not this definition.
    const col = p.startPosition.column;
    if (L.source.slice(L.start(sRow), L.start(sRow) + col).trim() !== '') break;
    // Some grammars (Rust) include the newline that ends a line comment in the node.
    parts.unshift(p.text.replace(/\r?\n$/, ''));
    expectRow = sRow;
  }
  if (parts.length === 0) return undefined;
  const text = cleanComment(parts.join('\n'));
  return text ? clip(text, MAX_DOCSTRING_CHARS) : undefined;
}

/**
 * Builds the chunks of a parsed file. `defs` must be sorted by start row (then outermost
 * first), which is the order the parser produces.
 */
export function buildChunks(
  root: Node,
  L: LineIndex,
  defs: DefInfo[],
  language: LanguageId,
  o: ChunkOptions = DEFAULT_CHUNK_OPTIONS,
): Chunk[] {
  const spans = chunkSpans(root, L, o);
  const chunks: Chunk[] = [];
  let first = 0;
  for (const sp of spans) {
    // The main definition is the one starting in the chunk with the most lines inside it
    // (the first on ties). Scopes compete too: a chunk holding a whole Rust impl block is
    // best described by it. Modules and namespaces only count when nothing else starts in
    // the chunk, since they start in a chunk without being what it is about.
    while (first < defs.length && (defs[first] as DefInfo).startRow < sp.s) first++;
    let main: DefInfo | undefined;
    let mainScore = -1;
    let mainWeak = true;
    for (let i = first; i < defs.length; i++) {
      const d = defs[i] as DefInfo;
      if (d.startRow > sp.e) break;
      const weak = d.kind === 'module';
      const score = Math.min(d.endRow, sp.e) - d.startRow + 1;
      if (!main || (mainWeak && !weak) || (weak === mainWeak && score > mainScore)) {
        main = d;
        mainScore = score;
        mainWeak = weak;
      }
    }
    const chunk: Chunk = { startLine: sp.s + 1, endLine: sp.e + 1, kind: 'block', text: L.text(sp.s, sp.e) };
    let containerFrom: DefInfo | undefined;
    if (main) {
      chunk.kind = main.kind === 'scope' ? 'block' : main.kind;
      chunk.symbol = main.qualifiedName;
      if (main.signature) chunk.signature = main.signature;
      const decorators = decoratorsOf(main.node);
      if (decorators.length > 0) chunk.decorators = decorators;
      const doc = docstringOf(main.node, language, L);
      if (doc) chunk.docstring = doc;
      containerFrom = main.parent;
    } else {
      // A piece of a large definition: name the definition it belongs to.
      let inner: DefInfo | undefined;
      for (const d of defs) {
        if (d.startRow > sp.s) break;
        if (d.endRow >= sp.s) inner = d;
      }
      if (inner) {
        chunk.symbol = inner.qualifiedName;
        if (inner.signature) chunk.signature = inner.signature;
      }
      for (const d of defs) {
        if (d.startRow > sp.s) break;
        if (d.endRow >= sp.s) containerFrom = d;
      }
    }
    for (let c = containerFrom; c; c = c.parent) {
      if (CONTAINER_KINDS.has(c.kind) && c.headerRow < sp.s) {
        chunk.container = clip(L.line(c.headerRow).trim());
        break;
      }
    }
    chunks.push(chunk);
  }
  return chunks;
}

// ---------------------------------------------------------------------------------------------
// Markdown: no grammar, sections are delimited by ATX headings outside fenced code blocks.
// ---------------------------------------------------------------------------------------------

interface Heading {
  row: number;
  level: number;
  text: string;
}

const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

function findHeadings(L: LineIndex): Heading[] {
  const out: Heading[] = [];
  let fence: string | undefined;
  for (let row = 0; row < L.rowCount; row++) {
    const line = L.line(row).replace(/\r$/, '');
    const f = FENCE.exec(line);
    if (fence !== undefined) {
      // A fence closes with the same character, at least as long, and nothing else on the line.
      if (f && f[1] && f[1][0] === fence[0] && f[1].length >= fence.length && line.trim() === f[1]) fence = undefined;
      continue;
    }
    if (f && f[1]) {
      fence = f[1];
      continue;
    }
    const m = ATX.exec(line);
    if (m && m[1]) out.push({ row, level: m[1].length, text: (m[2] ?? '').replace(/[ \t]+#+$/, '').trim() });
  }
  return out;
}

/** Splits rows s..e at blank lines into pieces of at most maxChars/maxLines. */
function splitSection(L: LineIndex, s: number, e: number, o: ChunkOptions): Span[] {
  const out: Span[] = [];
  let a = s;
  let lastBlank = -1;
  for (let r = s; r <= e; r++) {
    const over = r - a + 1 > o.maxLines || L.size(a, r) > o.maxChars;
    if (over && r > a) {
      // Prefer to cut after the last blank line of the piece, else right before this row.
      const cut = lastBlank > a ? lastBlank : r - 1;
      out.push({ s: a, e: cut });
      a = cut + 1;
      lastBlank = -1;
    }
    if (L.isBlank(r)) lastBlank = r;
  }
  if (a <= e) out.push({ s: a, e });
  return normalize(out, L).filter((sp) => sp.s >= s && sp.e <= e);
}

/** Symbols (one `heading` per heading) and chunks (one `section` per heading) of a markdown file. */
export function chunkMarkdown(source: string, o: ChunkOptions = DEFAULT_CHUNK_OPTIONS): { symbols: SymbolDef[]; chunks: Chunk[] } {
  const L = new LineIndex(source);
  const headings = findHeadings(L);
  const symbols: SymbolDef[] = [];
  const chunks: Chunk[] = [];
  const lastNonBlank = (from: number, to: number): number => {
    let e = to;
    while (e > from && L.isBlank(e)) e--;
    return e;
  };
  // The chain of open headings, outermost first, to qualify names and find containers.
  const stack: { h: Heading; qualified: string }[] = [];
  const pushChunk = (s: number, e: number, h: Heading | undefined, container: string | undefined): void => {
    let a = s;
    while (a <= e && L.isBlank(a)) a++;
    const b = lastNonBlank(a, e);
    if (a > b) return;
    const pieces = L.size(a, b) > o.maxChars * 2 || b - a + 1 > o.maxLines * 2 ? splitSection(L, a, b, o) : [{ s: a, e: b }];
    for (const p of pieces) {
      const c: Chunk = { startLine: p.s + 1, endLine: p.e + 1, kind: 'section', text: L.text(p.s, p.e) };
      if (h) {
        c.symbol = h.text;
        c.signature = clip(L.line(h.row).trim());
      }
      if (container) c.container = container;
      chunks.push(c);
    }
  };
  if (L.rowCount > 0) pushChunk(0, (headings[0]?.row ?? L.rowCount) - 1, undefined, undefined);
  headings.forEach((h, i) => {
    while (stack.length > 0 && (stack[stack.length - 1] as { h: Heading }).h.level >= h.level) stack.pop();
    const parent = stack[stack.length - 1];
    const qualified = parent ? `${parent.qualified} > ${h.text}` : h.text;
    // The section of a heading runs to the next heading of the same or a higher level.
    let end = L.rowCount - 1;
    for (let j = i + 1; j < headings.length; j++) {
      const next = headings[j] as Heading;
      if (next.level <= h.level) {
        end = next.row - 1;
        break;
      }
    }
    const sym: SymbolDef = {
      name: h.text,
      kind: 'heading',
      qualifiedName: qualified,
      signature: clip(L.line(h.row).trim()),
      startLine: h.row + 1,
      endLine: lastNonBlank(h.row, end) + 1,
    };
    if (parent) sym.container = parent.qualified;
    symbols.push(sym);
    const ownEnd = (headings[i + 1]?.row ?? L.rowCount) - 1;
    pushChunk(h.row, ownEnd, h, parent ? clip(L.line(parent.h.row).trim()) : undefined);
    stack.push({ h, qualified });
  });
  return { symbols, chunks };
}
