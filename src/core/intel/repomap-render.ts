/**
 * Stage 5 of the repository map: ranked units (definitions, or bare files) rendered as
 * `path:` and one `L<line> <signature>` row per definition, members indented under their type.
 */
import type { SymbolRow } from '../store/store';
import type { SymbolKind } from '../types';
import { byPosition, type MapState, type Ranking } from './repomap-rank';

export interface RepoMapSymbol {
  name: string;
  kind: SymbolKind;
  line: number;
  end_line: number;
  signature: string;
  /**
   * The rank that reached this definition through the files using it; a definition no other
   * file uses gets a small share of its own file's rank instead.
   */
  rank: number;
}

export interface RepoMapFile {
  path: string;
  /** The file's PageRank (the ranks of all files sum to 1). */
  rank: number;
  /** The ranked definitions shown for this file, in line order (context headers excluded). */
  symbols: RepoMapSymbol[];
}

/** A signature longer than this is cut: the map is a table of contents, not the code. */
const MAX_SIGNATURE_CHARS = 160;
/** One file defining the same name many times (overloads, generated tables) shows this many, then a count. */
const MAX_ROWS_PER_ENTRY = 12;

/** A rendered map: its text and the files it shows. */
export interface Page {
  text: string;
  files: RepoMapFile[];
}

function oneLine(s: string): string {
  // A declaration over several lines, joined: no blank inside brackets, no trailing comma.
  const flat = s
    .replace(/\s+/g, ' ')
    .replace(/([([]) /g, '$1')
    .replace(/,? ([)\]])/g, '$1')
    .trim();
  const chars = [...flat];
  return chars.length > MAX_SIGNATURE_CHARS ? `${chars.slice(0, MAX_SIGNATURE_CHARS).join('')}…` : flat;
}

function lastSegment(qualified: string): string {
  const m = /([^.:#/]+)$/.exec(qualified);
  return m ? m[1]! : qualified;
}

/** The definitions enclosing `row` in its own file, outermost first (a method's class, ...). */
function enclosing(rows: readonly SymbolRow[], row: SymbolRow): SymbolRow[] {
  const chain: SymbolRow[] = [];
  let cur = row;
  for (let depth = 0; depth < 8 && cur.container; depth++) {
    const want = cur.container;
    let best: SymbolRow | undefined;
    for (const r of rows) {
      if (r.startLine > cur.startLine) break;
      if (r !== cur && r.qualifiedName === want && r.endLine >= cur.endLine) best = r;
    }
    if (!best) break;
    chain.unshift(best);
    cur = best;
  }
  return chain;
}

/**
 * Renders units (entries or bare files) grouped by file, files in the order their first unit
 * ranks, definitions in line order under their enclosing definitions. `minimal` shows only
 * the first definition of each entry, by name, for the one-entry fallback of a tiny budget.
 */
export function renderPage(state: MapState, ranking: Ranking, units: readonly number[], minimal = false): Page {
  const nEntries = state.entries.length;
  const byNode = new Map<number, { selected: SymbolRow[]; more: number }>();
  const rankOf = new Map<SymbolRow, number>();
  for (const u of units) {
    const node = u < nEntries ? state.entries[u]!.node : u - nEntries;
    let slot = byNode.get(node);
    if (!slot) {
      slot = { selected: [], more: 0 };
      byNode.set(node, slot);
    }
    if (u >= nEntries) continue;
    const rows = state.entries[u]!.rows;
    const limit = minimal ? 1 : MAX_ROWS_PER_ENTRY;
    slot.selected.push(...rows.slice(0, limit));
    for (const r of rows) rankOf.set(r, ranking.entryRank[u]!);
    slot.more += Math.max(0, rows.length - limit);
  }
  const lines: string[] = [];
  const files: RepoMapFile[] = [];
  for (const [node, slot] of byNode) {
    const file = state.files[node]!;
    const rankValue = Number(ranking.nodeRank[node]!.toPrecision(6));
    if (slot.selected.length === 0) {
      lines.push(file.path);
      files.push({ path: file.path, rank: rankValue, symbols: [] });
      continue;
    }
    lines.push(`${file.path}:`);
    const allRows = state.fileRows[node]!;
    const shown = new Map<SymbolRow, number>();
    for (const row of slot.selected) {
      const chain = enclosing(allRows, row);
      chain.forEach((r, depth) => {
        if (!shown.has(r)) shown.set(r, depth);
      });
      shown.set(row, chain.length);
    }
    const ordered = [...shown.keys()].sort((a, b) => a.startLine - b.startLine || b.endLine - a.endLine || a.id - b.id);
    for (const row of ordered) {
      const depth = shown.get(row)!;
      let sig = minimal ? row.qualifiedName || row.name : oneLine(row.signature || row.name);
      // A member declared outside its type's body (a Rust impl method) names the type, unless its signature does (a Go receiver).
      if (depth === 0 && row.container && !minimal) {
        const owner = lastSegment(row.container);
        if (!sig.includes(owner)) sig += ` (in ${owner})`;
      }
      lines.push(`  L${row.startLine} ${'  '.repeat(depth)}${sig}`);
    }
    if (slot.more > 0) lines.push(`  ⋮ ${slot.more} more definition${slot.more > 1 ? 's' : ''} of these names`);
    files.push({
      path: file.path,
      rank: rankValue,
      symbols: [...slot.selected]
        .sort(byPosition)
        .map((r) => ({ name: r.name, kind: r.kind, line: r.startLine, end_line: r.endLine, signature: oneLine(r.signature || r.name), rank: Number(rankOf.get(r)!.toPrecision(6)) })),
    });
  }
  return { text: lines.length ? `${lines.join('\n')}\n` : '', files };
}
