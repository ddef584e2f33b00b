/**
 * `vlt:key=value` annotations in code comments (the seed's `beadloom:` annotations): they attach
 * code to components (`vlt:component=billing`) and carry any other key a team wants to see in a
 * context bundle (`vlt:owner=payments`, `vlt:entity=Invoice`).
 *
 * An annotation before a file's first definition applies to the whole file (module level); one
 * on the comment or decorator lines just above a later definition, or in the first lines of a
 * definition's body (a docstring), applies to that definition and takes precedence over the
 * file's. An annotation anywhere else in a body is ignored.
 */
import type { ChunkRow, SymbolRow } from '../store/store';

/** Annotation keys and values: `vlt:` then a key of letters, digits, `_` and `-`, `=`, a value up to space, comma or a quote. */
const ANNOTATION = /\bvlt:([A-Za-z][\w-]{0,63})=("[^"\n]{0,200}"|[^\s,;'"`]{1,200})/g;
/** Something that starts a comment (or a docstring) before the annotation on its line. */
const COMMENT_START = /(\/\/|#|\/\*|--|<!--|"""|'''|^\s*\*)/;
/** A line of a doc comment or a decorator, between an annotation and its definition. */
const COMMENT_OR_DECORATOR = /^\s*(\/\/|#|\/\*|\*|--|@|\"\"\"|''')/;
/** How far above a definition an annotation still belongs to it (doc comment, decorators). */
const ABOVE_LINES = 4;
/** How far into a definition an annotation still belongs to it (a docstring, the first comment). */
const INSIDE_LINES = 3;

/** The annotations on one line of code, only where they stand in a comment. */
export function parseAnnotations(line: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of line.matchAll(ANNOTATION)) {
    if (!COMMENT_START.test(line.slice(0, m.index))) continue;
    const raw = m[2]!;
    out[m[1]!.toLowerCase()] = raw.startsWith('"') ? raw.slice(1, -1) : raw.replace(/(\*\/|-->)$/, '');
  }
  return out;
}

export interface FileAnnotations {
  /** Annotations that apply to the whole file. */
  file: Record<string, string>;
  /** By symbol id (the symbol's row id), those that apply to it. */
  symbols: Map<number, Record<string, string>>;
}

/**
 * The annotations of one file, from its chunks that hold `vlt:` (chunks may overlap; a line is
 * read once) and its definitions.
 */
export function fileAnnotations(chunks: readonly ChunkRow[], symbols: readonly SymbolRow[]): FileAnnotations {
  const defs = symbols.filter((s) => s.kind !== 'heading' && s.kind !== 'variable' && s.kind !== 'field').sort((a, b) => a.startLine - b.startLine || b.endLine - a.endLine);
  const firstDef = defs[0]?.startLine ?? Infinity;
  const out: FileAnnotations = { file: {}, symbols: new Map() };
  const seen = new Set<number>();
  for (const c of [...chunks].sort((a, b) => a.startLine - b.startLine)) {
    const text = c.text.split('\n');
    for (let i = 0; i < text.length; i++) {
      const line = text[i]!;
      const at = c.startLine + i;
      if (!line.includes('vlt:') || seen.has(at)) continue;
      seen.add(at);
      const found = parseAnnotations(line);
      if (Object.keys(found).length === 0) continue;
      // Before the first definition: the file's (its header), whatever follows it.
      if (at < firstDef) {
        Object.assign(out.file, found);
        continue;
      }
      const target = annotatedDefinition(at, c, defs);
      if (target) out.symbols.set(target.id, { ...out.symbols.get(target.id), ...found });
    }
  }
  return out;
}

/**
 * The definition an annotation on line `at` (after the first definition) of chunk `c` belongs
 * to: the next definition when only comment or decorator lines stand between, else the innermost
 * one whose first lines (a docstring) hold it; undefined for any other line.
 */
function annotatedDefinition(at: number, c: ChunkRow, defs: readonly SymbolRow[]): SymbolRow | undefined {
  // The next definition, when only comment or decorator lines stand between (no blank line, no code).
  const next = defs.find((s) => s.startLine > at);
  if (next && next.startLine - at <= ABOVE_LINES) {
    const text = c.text.split('\n');
    const between = text.slice(at - c.startLine + 1, next.startLine - c.startLine);
    if (between.length === next.startLine - at - 1 && between.every((l) => COMMENT_OR_DECORATOR.test(l))) return next;
  }
  const holding = defs.filter((s) => s.startLine <= at && at <= s.endLine).sort((a, b) => b.startLine - a.startLine);
  return holding.find((s) => at - s.startLine <= INSIDE_LINES);
}
