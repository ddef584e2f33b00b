/**
 * Chunks and definitions for a language without a tree-sitter grammar (Lua, Elixir, Haskell,
 * SQL, …), so that every source file is searchable by its words, its path and the names it
 * defines. It reads the text, not a syntax tree:
 *
 * - definitions come from the language's line patterns in `queries/text-definitions.json`
 *   (data, like the `.scm` queries): a match gives a name, a kind and the definition's first
 *   line; its last line is where the indentation returns to the header's level (a closing
 *   `end`, `}` or `)` at that level belongs to it);
 * - a definition nests in the nearest earlier one whose span holds it (`M.f` inside `M`);
 * - the chunks follow the top-level definitions with their leading comments, and the blank
 *   lines between the rest, packed up to the chunk limits as the syntax chunker packs siblings.
 *
 * What it cannot know (a definition whose header does not fit a pattern, a body at the same
 * indentation as its header with no closer) degrades to plain line blocks, never to a lost file.
 */
import { LineIndex, type ChunkOptions } from './chunker';
import type { Chunk, SymbolDef, SymbolKind } from '../types';

/** One line pattern of a language: its first capture group is the defined name. */
export interface TextDefinitionPattern {
  kind: SymbolKind;
  pattern: string;
  /** Regular expression flags (`i` for SQL's keywords); `u` is always added. */
  flags?: string;
  /** Only lines indented at most this many columns (a tab counts 4) define something here. */
  maxIndent?: number;
  /**
   * The definition's last line is the first line from its header on that matches this (`@end`,
   * `end function`, a clause's closing `.`), for languages whose bodies are not indented.
   */
  end?: string;
  /** The `end` line must be indented no deeper than the header (Fortran's nested `end function`). */
  endAtLevel?: boolean;
}

export interface TextLanguageRules {
  definitions: TextDefinitionPattern[];
  /** A line comment or doc comment, kept with the definition below it. */
  comment?: string;
}

interface CompiledRules {
  defs: Array<{ kind: SymbolKind; re: RegExp; maxIndent: number; end: RegExp | undefined; endAtLevel: boolean }>;
  comment: RegExp;
}

/** Words that a loose function pattern catches in a statement (`if (x) {`) and that never name a definition. */
const NOT_NAMES: ReadonlySet<string> = new Set(
  'if else elif elsif for foreach while do switch case catch try finally return throw new await yield with match sizeof typeof assert fn function sub def super this self'.split(' '),
);

/** A line that closes the block its indentation level opened. */
const CLOSER = /^\s*(?:[}\])]|end\b|fi\b|done\b|esac\b|@end\b|END\b)/u;
/** A line at the header's level that continues its block (`else`, `where`, Fortran's `contains`, an Allman `{`). */
const CONTINUES = /^\s*(?:\{|(?:else|elif|elsif|rescue|ensure|catch|finally|except|where|contains|of|then)\b)/u;
/** How far an `end` pattern is looked for before the indentation rule decides instead. */
const MAX_END_SCAN = 5000;
const DEFAULT_COMMENT = /^\s*(?:\/\/|#(?![[!])|--|;|%|\(\*|\/\*|\*|\{-|"""|''')/u;
/** Annotations and attributes above a definition belong to it, as comments do. */
const ANNOTATION = /^\s*(?:@[\w.]+|#\[|\[<)/u;
const MAX_SIGNATURE_CHARS = 200;

const compiled = new WeakMap<TextLanguageRules, CompiledRules>();

function compile(rules: TextLanguageRules): CompiledRules {
  let c = compiled.get(rules);
  if (!c) {
    c = {
      defs: rules.definitions.map((d) => ({
        kind: d.kind,
        re: new RegExp(d.pattern, `${d.flags ?? ''}u`),
        maxIndent: d.maxIndent ?? Number.POSITIVE_INFINITY,
        end: d.end !== undefined ? new RegExp(d.end, `${d.flags ?? ''}u`) : undefined,
        endAtLevel: d.endAtLevel === true,
      })),
      comment: rules.comment ? new RegExp(rules.comment, 'u') : DEFAULT_COMMENT,
    };
    compiled.set(rules, c);
  }
  return c;
}

function indentOf(line: string): number {
  let n = 0;
  for (const ch of line) {
    if (ch === ' ') n++;
    else if (ch === '\t') n += 4;
    else break;
  }
  return n;
}

interface TextDef {
  name: string;
  qualifiedName: string;
  kind: SymbolKind;
  startRow: number;
  endRow: number;
  indent: number;
  signature: string;
  parent: TextDef | undefined;
  end: RegExp | undefined;
  endAtLevel: boolean;
}

/** The definitions of a text, in order, with their spans and nesting. */
function findDefinitions(L: LineIndex, rules: CompiledRules): TextDef[] {
  const found: TextDef[] = [];
  for (let r = 0; r < L.rowCount; r++) {
    const line = L.line(r);
    if (line.length > 2000 || L.isBlank(r)) continue;
    const indent = indentOf(line);
    for (const d of rules.defs) {
      if (indent > d.maxIndent) continue;
      const m = d.re.exec(line);
      const raw = m?.[1]?.trim();
      if (!raw) continue;
      const parts = raw.split(/[.:]+|::/u).filter(Boolean);
      const name = parts[parts.length - 1] ?? raw;
      if (NOT_NAMES.has(raw)) continue;
      const prev = found[found.length - 1];
      // The next clause of one function (Haskell, Erlang, Elixir) continues it.
      if (prev && prev.name === name && prev.indent === indent && prev.kind === d.kind && r - prev.startRow < 400 && !hasOtherCodeBetween(L, prev, r, indent)) {
        prev.endRow = r;
        break;
      }
      found.push({ name, qualifiedName: parts.join('.') || raw, kind: d.kind, startRow: r, endRow: r, indent, signature: line.trim().slice(0, MAX_SIGNATURE_CHARS), parent: undefined, end: d.end, endAtLevel: d.endAtLevel });
      break;
    }
  }
  for (const def of found) def.endRow = Math.max(def.endRow, (def.end && endByPattern(L, def, def.end)) ?? endOf(L, def));
  // Nesting: the nearest earlier definition that is less indented and still open.
  const open: TextDef[] = [];
  for (const def of found) {
    while (open.length && (open[open.length - 1]!.endRow < def.startRow || open[open.length - 1]!.indent >= def.indent)) open.pop();
    const parent = open[open.length - 1];
    if (parent) {
      def.parent = parent;
      if (!def.qualifiedName.includes('.')) def.qualifiedName = `${parent.qualifiedName}.${def.name}`;
    }
    open.push(def);
  }
  return found;
}

/** Whether a line between two clauses of a name starts at the clauses' indentation with other code. */
function hasOtherCodeBetween(L: LineIndex, prev: TextDef, row: number, indent: number): boolean {
  for (let r = prev.endRow + 1; r < row; r++) {
    if (L.isBlank(r)) continue;
    const line = L.line(r);
    if (indentOf(line) <= indent && !CLOSER.test(line) && !/^\s*(?:--|%|#|\/\/|@)/u.test(line) && !line.trimStart().startsWith(prev.name)) return true;
  }
  return false;
}

/** The first row from the last clause's header on that matches `end`; undefined when none is near. */
function endByPattern(L: LineIndex, def: TextDef, end: RegExp): number | undefined {
  const limit = Math.min(L.rowCount, def.endRow + MAX_END_SCAN);
  for (let r = def.endRow; r < limit; r++) {
    const line = L.line(r);
    if (end.test(line) && (!def.endAtLevel || indentOf(line) <= def.indent)) return r;
  }
  return undefined;
}

/** The last row of a definition: where the indentation returns to its header's level. */
function endOf(L: LineIndex, def: TextDef): number {
  let last = def.endRow;
  for (let r = def.endRow + 1; r < L.rowCount; r++) {
    if (L.isBlank(r)) continue;
    const line = L.line(r);
    const indent = indentOf(line);
    if (indent > def.indent) {
      last = r;
      continue;
    }
    // A header that continues on the next lines at its own level (`(`, `,`, `=` at its end) is not closed yet.
    if ((r === last + 1 && /[(,=[{]\s*$/u.test(L.line(last))) || CONTINUES.test(line)) {
      last = r;
      continue;
    }
    if (indent === def.indent && CLOSER.test(line)) last = r;
    break;
  }
  return last;
}

/** Definitions as symbols: 1-based lines, qualified names, containers. */
function toSymbols(defs: readonly TextDef[]): SymbolDef[] {
  return defs.map((d) => ({
    name: d.name,
    kind: d.kind,
    qualifiedName: d.qualifiedName,
    signature: d.signature,
    startLine: d.startRow + 1,
    endLine: d.endRow + 1,
    ...(d.parent ? { container: d.parent.qualifiedName } : {}),
  }));
}

/**
 * Chunks a text whose language has line rules (`rules`) or none (blank-line paragraphs and
 * line windows only). Chunks never split a line and never leave a non-blank line out.
 */
// eslint-disable-next-line max-lines-per-function -- one pass over the lines; the rule, paragraph and window cases share the pass's position
export function chunkText(source: string, rules: TextLanguageRules | undefined, o: ChunkOptions): { symbols: SymbolDef[]; chunks: Chunk[] } {
  const L = new LineIndex(source);
  if (L.rowCount === 0) return { symbols: [], chunks: [] };
  const compiledRules = rules ? compile(rules) : undefined;
  const defs = compiledRules ? findDefinitions(L, compiledRules) : [];
  const comment = compiledRules?.comment ?? DEFAULT_COMMENT;
  const fits = (s: number, e: number) => e - s + 1 <= o.maxLines && L.size(s, e) <= o.maxChars;

  // The lines above a definition that belong to it: comments and annotations, no blank line between.
  const leadOf = (def: TextDef, floor: number): number => {
    let s = def.startRow;
    while (s - 1 > floor && !L.isBlank(s - 1) && (comment.test(L.line(s - 1)) || ANNOTATION.test(L.line(s - 1)))) s--;
    return s;
  };

  /** Atoms covering rows [from, to]: the definitions at this level with their leads, and paragraphs between. */
  const atoms = (from: number, to: number, level: readonly TextDef[]): Array<[number, number]> => {
    const out: Array<[number, number]> = [];
    const paragraphs = (s: number, e: number) => {
      let a = s;
      for (let r = s; r <= e; r++) {
        if (L.isBlank(r) && r > a) {
          out.push([a, r - 1]);
          a = r + 1;
        } else if (L.isBlank(r)) a = r + 1;
      }
      if (a <= e) out.push([a, e]);
    };
    let cursor = from;
    for (const def of level) {
      if (def.startRow < cursor || def.startRow > to) continue;
      const s = leadOf(def, cursor - 1);
      const e = Math.min(def.endRow, to);
      if (s > cursor) paragraphs(cursor, s - 1);
      if (fits(s, e)) out.push([s, e]);
      else {
        // Too big alone: its nested definitions become the atoms inside it.
        const children = defs.filter((c) => c.parent === def);
        const inner = children.length ? atoms(def.startRow, e, children) : [];
        if (inner.length > 1) {
          const first = inner[0]!;
          if (s < first[0]) inner.unshift([s, first[0] - 1]);
          out.push(...inner);
        } else paragraphs(s, e);
      }
      cursor = e + 1;
    }
    if (cursor <= to) paragraphs(cursor, to);
    return out;
  };

  const top = defs.filter((d) => d.parent === undefined);
  const pieces: Array<[number, number]> = [];
  // Atoms still too big (a long paragraph) are cut into line windows.
  for (const [s, e] of atoms(0, L.rowCount - 1, top)) {
    let a = s;
    for (let r = s; r <= e; r++) {
      if (r > a && !fits(a, r)) {
        pieces.push([a, r - 1]);
        a = r;
      }
    }
    if (a <= e) pieces.push([a, e]);
  }

  // Pack neighbours while they fit; a definition is not packed after a big neighbour.
  const packed: Array<[number, number]> = [];
  for (const p of pieces) {
    const cur = packed[packed.length - 1];
    if (cur && fits(cur[0], p[1]) && (L.size(cur[0], cur[1]) < o.minChars || L.size(p[0], p[1]) < o.minChars)) cur[1] = p[1];
    else packed.push([p[0], p[1]]);
  }

  const chunks: Chunk[] = [];
  for (let [s, e] of packed) {
    while (s <= e && L.isBlank(s)) s++;
    while (e >= s && L.isBlank(e)) e--;
    if (s > e) continue;
    // The chunk's main definition: the outermost that starts inside it; else the one around it.
    const inside = defs.filter((d) => d.startRow >= s && d.startRow <= e);
    const main = inside.reduce<TextDef | undefined>((best, d) => (!best || d.indent < best.indent ? d : best), undefined);
    const around = main?.parent ?? defs.filter((d) => d.startRow < s && d.endRow >= s).pop();
    chunks.push({
      startLine: s + 1,
      endLine: e + 1,
      kind: main?.kind ?? 'block',
      ...(main ? { symbol: main.qualifiedName, signature: main.signature } : {}),
      ...(around ? { container: around.signature } : {}),
      text: L.text(s, e),
    });
  }
  return { symbols: toSymbols(defs), chunks };
}
