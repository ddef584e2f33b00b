/**
 * The symbol tables search reads (definitions by normalised name and by sub-word) over one
 * index: read in place from the table the last commit persisted (a process that answers one
 * query, and any host until its index changes), or built in memory from the symbol rows and
 * patched with each index run's changes (a writer that changed the index, a long-lived host once
 * warm), and encoded for each commit that changed symbols.
 */
import type { Logger } from '../ports';
import { SYMBOLS_BLOB, type ByteSource, type IndexStore, type SymbolRow, type SymbolTableUpdate } from '../store/store';
import { identifierParts } from './tokenizer';
import type { SymbolCandidate } from './hybrid';
import { normalizeSymbolName } from './symbol-name';
import { encodeSymbolRows, encodeSymbolTable, PersistedSymbolTable } from './symbol-table';

/** Most changed files patched into the tables; more reload them from the store. */
export const MAX_PATCHED_FILES = 200;

/**
 * Definitions above which a writer does not build the name table from the committed one to
 * patch it, but reads that table in place with the changed files' definitions laid over it: on
 * the Linux kernel (3.1 M definitions) building it took minutes, and every edit waited for it.
 */
export const OVERLAY_ABOVE = 250_000;

/**
 * A large committed table read in place, and the definitions of the files changed since, over
 * it. A writer's commit persists the overlay as a delta beside the table (readers lay it over
 * the same way) until it holds more than {@link MAX_PATCHED_FILES} files.
 */
interface Overlay {
  base: PersistedSymbolTable;
  /** The changed files: the base's definitions of these are hidden. */
  paths: Set<string>;
  /** The changed files' definitions now, in the order they were laid over (a file changed again goes last). */
  files: Map<string, SymbolCandidate[]>;
  byName: Map<string, SymbolCandidate[]>;
  byPart: Map<string, SymbolCandidate[]>;
}

/** The persisted form of an overlay (JSON): the table it lies over, the generation it describes. */
interface DeltaJson {
  v: 1;
  base: number;
  generation: number;
  paths: string[];
  files: Array<[string, SymbolCandidate[]]>;
}

function encodeDelta(o: Overlay, generation: number): Uint8Array {
  const json: DeltaJson = { v: 1, base: o.base.generation, generation, paths: [...o.paths], files: [...o.files] };
  return new TextEncoder().encode(JSON.stringify(json));
}

/** The overlay a delta describes over `base`, when it lies over that table and describes `generation`. */
function overlayFromDelta(base: PersistedSymbolTable, bytes: Uint8Array, generation: number): Overlay | undefined {
  let d: DeltaJson;
  try {
    d = JSON.parse(new TextDecoder().decode(bytes)) as DeltaJson;
  } catch {
    return undefined;
  }
  if (d.v !== 1 || d.base !== base.generation || d.generation !== generation || !Array.isArray(d.paths) || !Array.isArray(d.files)) return undefined;
  const o: Overlay = { base, paths: new Set(d.paths), files: new Map(), byName: new Map(), byPart: new Map() };
  for (const [p, defs] of d.files) layFile(o, p, defs);
  return o;
}

/** Puts a changed file's definitions last in the overlay's lists. */
function layFile(o: Overlay, p: string, defs: SymbolCandidate[]): void {
  o.files.set(p, defs);
  for (const def of defs) {
    const key = normalizeSymbolName(def.name);
    const list = o.byName.get(key);
    if (list) list.push(def);
    else o.byName.set(key, [def]);
    addToParts(o.byPart, def);
  }
}

export interface SymbolTablesDeps {
  store: IndexStore;
  mode: 'read' | 'write';
  logger: Logger;
  /** The index's `[index] generated` mode: navigation-only files have no definitions in search. */
  generatedMode(): string;
  isNavigationOnly(file: { generated: boolean; path?: string }): boolean;
  /** Replaces {@link OVERLAY_ABOVE}. */
  overlayAbove?: number;
}

/** The table the last commit persisted, opened where it lies, and the generation it must carry. */
export interface CommittedTable {
  source: ByteSource;
  generation: number;
  /** The changes a writer laid over the table since (see {@link Overlay}). */
  delta?: Uint8Array;
}

/** What search asks of the tables. */
export interface SymbolLookup {
  named(key: string): SymbolCandidate[];
  withPart(part: string): SymbolCandidate[];
  /** Definitions of two or more sub-words all among `parts` (see {@link PersistedSymbolTable.coveredBy}). */
  coveredBy(parts: readonly string[]): SymbolCandidate[];
}

export class SymbolTables {
  private byName: Map<string, SymbolCandidate[]> | undefined;
  private byPart: Map<string, SymbolCandidate[]> | undefined;
  /** Read lazily by a reader from the last commit (null: none usable). */
  private persisted: PersistedSymbolTable | null | undefined;
  private names: string[] | undefined;
  private overlay: Overlay | undefined;

  constructor(private readonly deps: SymbolTablesDeps) {}

  /**
   * The tables search reads: the in-memory ones when built, else the persisted one (a reader),
   * else the in-memory ones, built now.
   */
  lookup(): SymbolLookup {
    if (!this.byName) {
      if (this.overlay) return overlayLookup(this.overlay);
      const persisted = this.readPersisted();
      // A committed delta became the overlay as the table was read.
      if (this.overlay) return overlayLookup(this.overlay);
      if (persisted) return persisted;
    }
    const withPart = (part: string) => this.partMap().get(part) ?? [];
    return { named: (key) => this.nameMap().get(key) ?? [], withPart, coveredBy: (parts) => coveredIn(parts, withPart) };
  }

  /** Every distinct definition name (suggestions; not those of navigation-only files). */
  allNames(): readonly string[] {
    if (!this.names) {
      const names = new Set<string>();
      const persisted = this.byName ? undefined : (this.overlay?.base ?? this.readPersisted());
      if (persisted) {
        // With an overlay, a name only the changed files defined before may stay: these are suggestions.
        for (const n of persisted.allNames()) names.add(n);
        for (const list of this.overlay?.byName.values() ?? []) for (const c of list) names.add(c.name);
      } else for (const list of this.nameMap().values()) for (const c of list) names.add(c.name);
      this.names = [...names];
    }
    return this.names;
  }

  /**
   * Readies the tables for the first search (a long-lived host, while idle): nothing while the
   * committed table describes the index (it is read in place, and caches what it decodes), else
   * the in-memory name table, built now.
   */
  warm(): void {
    if (!this.byName && (this.overlay || this.readPersisted())) return;
    this.nameMap();
  }

  /** The persisted form of the tables for the commit of `generation` (a writer). */
  encode(generation: number): SymbolTableUpdate {
    const t0 = performance.now();
    // A checkpoint in between may have dropped the table the overlay lies over from the index.
    if (!this.byName && this.overlay && this.deps.store.hasBlob(SYMBOLS_BLOB)) {
      // The committed table stays; the changes laid over it are persisted beside it.
      const delta = encodeDelta(this.overlay, generation);
      this.deps.logger.debug(`symbol table: a delta of ${this.overlay.paths.size} changed files over the table of generation ${this.overlay.base.generation}, ${delta.byteLength} bytes`);
      return { delta };
    }
    if (!this.byName) {
      // Not held (a build that changed many files, or an overlay): encoded from the rows, without
      // building the tables, which a search builds or reads from this commit's table when it
      // needs them. The overlay is done with: this commit's table holds its changes.
      const bytes = encodeSymbolRows(this.searchableRows(), generation, this.deps.generatedMode());
      // An overlay whose table a checkpoint dropped: this table holds its changes.
      this.overlay = undefined;
      this.deps.logger.debug(`symbol table: ${(bytes.byteLength / 2 ** 20).toFixed(1)} MiB, encoded from the rows in ${(performance.now() - t0).toFixed(0)} ms`);
      return { table: bytes };
    }
    const maps = { byName: this.nameMap(), byPart: this.partMap() };
    const t1 = performance.now();
    const bytes = encodeSymbolTable(maps, generation, this.deps.generatedMode());
    this.deps.logger.debug(`symbol table: ${(bytes.byteLength / 2 ** 20).toFixed(1)} MiB, tables ${(t1 - t0).toFixed(0)} ms, encoded in ${(performance.now() - t1).toFixed(0)} ms`);
    return { table: bytes };
  }

  /**
   * Before an index run: the table as committed, when the run's writer holds none in memory. Its
   * commit then patches that table with the run's changes instead of reading every symbol row.
   */
  beforeRun(): CommittedTable | undefined {
    return this.byName ? undefined : this.deps.store.symbolTable();
  }

  /** After the run's changes, before its commit: the tables follow them. Closes `before`. */
  applyRun(changed: readonly string[], before: CommittedTable | undefined): void {
    if (!this.byName && !this.overlay && before && changed.length > 0 && changed.length <= MAX_PATCHED_FILES) {
      const table = PersistedSymbolTable.open(before.source);
      const fromDelta = table && before.delta && table.mode === this.deps.generatedMode() ? overlayFromDelta(table, before.delta, before.generation) : undefined;
      const usable = table && table.generation === before.generation && table.mode === this.deps.generatedMode();
      if (fromDelta) this.overlay = fromDelta;
      else if (usable && table.symbolCount > (this.deps.overlayAbove ?? OVERLAY_ABOVE)) {
        this.overlay = { base: table, paths: new Set(), files: new Map(), byName: new Map(), byPart: new Map() };
      } else {
        if (usable) this.byName = table.byName();
        table?.close();
      }
    } else before?.source.close();
    this.invalidate(changed);
  }

  /**
   * Drops what the tables know about changed files. A few changed files are patched into the
   * name table (an edit must be searchable at once, and reloading every symbol costs a quarter
   * second on a large repository); many changes reload it lazily.
   */
  invalidate(changed: readonly string[]): void {
    this.names = undefined;
    this.byPart = undefined;
    // The table as committed no longer describes the index (its next commit writes another).
    if (changed.length > 0) this.forgetPersisted();
    if (this.overlay && changed.length > 0) this.extendOverlay(this.overlay, changed);
    if (changed.length === 0 || !this.byName) return;
    if (changed.length > MAX_PATCHED_FILES) {
      this.byName = undefined;
      return;
    }
    const paths = new Set(changed);
    for (const [key, list] of this.byName) {
      const kept = list.filter((s) => !paths.has(s.path));
      if (kept.length !== list.length) {
        if (kept.length) this.byName.set(key, kept);
        else this.byName.delete(key);
      }
    }
    const { store } = this.deps;
    for (const p of paths) {
      const file = store.getFile(p);
      if (file && !this.deps.isNavigationOnly(file)) addSymbols(this.byName, store.symbolsOfFile(file.id));
    }
  }

  /**
   * Lays the changed files' current definitions over the base (in place of what they had), as
   * patching the name table would: their definitions after the others', in the order changed.
   * Too many changes drop the overlay: the tables are then built from the rows when needed.
   */
  private extendOverlay(overlay: Overlay, changed: readonly string[]): void {
    if (overlay.paths.size + changed.length > MAX_PATCHED_FILES) {
      this.overlay = undefined;
      return;
    }
    const paths = new Set(changed);
    for (const map of [overlay.byName, overlay.byPart]) {
      for (const [key, list] of map) {
        const kept = list.filter((c) => !paths.has(c.path));
        if (kept.length === list.length) continue;
        if (kept.length) map.set(key, kept);
        else map.delete(key);
      }
    }
    const { store } = this.deps;
    for (const p of paths) {
      overlay.paths.add(p);
      overlay.files.delete(p);
      const file = store.getFile(p);
      if (!file || this.deps.isNavigationOnly(file)) continue;
      const added = new Map<string, SymbolCandidate[]>();
      addSymbols(added, store.symbolsOfFile(file.id));
      layFile(overlay, p, [...added.values()].flat());
    }
  }

  /** Another state of the index was loaded: everything is read again. */
  drop(): void {
    this.overlay = undefined;
    this.byName = undefined;
    this.byPart = undefined;
    this.forgetPersisted();
    this.names = undefined;
  }

  /**
   * Forgets the table read in place; the next read opens the committed one again. It is not
   * closed here: a search may still hold it, and its file is released when it is collected.
   */
  private forgetPersisted(): void {
    this.persisted = undefined;
  }

  /**
   * The persisted table, when it describes the index as loaded and was built under the same
   * `[index] generated` mode. A writer reads it only while its index is the committed one (no
   * change since the last commit): a long-lived writer, such as the workspace daemon, answers
   * its first searches from it instead of building the name table first (about a second on the
   * Go standard library), and its own tables follow its edits from then on.
   */
  private readPersisted(): PersistedSymbolTable | undefined {
    if (this.deps.mode !== 'read' && this.deps.store.hasUnsavedChanges) return undefined;
    if (this.persisted === undefined) {
      const stored = this.deps.store.symbolTable();
      const table = stored ? PersistedSymbolTable.open(stored.source) : undefined;
      const modeOk = table?.mode === this.deps.generatedMode();
      const fromDelta = table && modeOk && stored?.delta ? overlayFromDelta(table, stored.delta, stored.generation) : undefined;
      const usable = table && modeOk && (fromDelta !== undefined || table.generation === stored?.generation);
      if (table && !usable) table.close();
      this.persisted = usable ? table : null;
      // The table as committed is the table with the delta laid over it.
      if (fromDelta) this.overlay = fromDelta;
    }
    return this.persisted ?? undefined;
  }

  private nameMap(): Map<string, SymbolCandidate[]> {
    if (this.byName) return this.byName;
    const map = new Map<string, SymbolCandidate[]>();
    addSymbols(map, this.searchableRows());
    this.byName = map;
    return map;
  }

  /**
   * The definitions search knows, streamed in row order. Search knows no definition of a
   * navigation-only file: it could never return one, and the count of a name's definitions
   * weighs each of its hits.
   */
  private searchableRows(): Iterable<SymbolRow> {
    const rows = this.deps.store.eachSymbol(this.deps.generatedMode() === 'navigation' ? { generated: false } : {});
    // Go vendor directories are navigation-only whatever the mode.
    return filtered(rows, (r) => !this.deps.isNavigationOnly({ generated: false, path: r.path }));
  }

  /** Sub-word → definitions, built from the name table on first use. */
  private partMap(): Map<string, SymbolCandidate[]> {
    if (this.byPart) return this.byPart;
    const map = new Map<string, SymbolCandidate[]>();
    for (const list of this.nameMap().values()) for (const def of list) addToParts(map, def);
    this.byPart = map;
    return map;
  }
}

function* filtered<T>(items: Iterable<T>, keep: (item: T) => boolean): Generator<T, void, undefined> {
  for (const item of items) if (keep(item)) yield item;
}

function addSymbols(map: Map<string, SymbolCandidate[]>, rows: Iterable<SymbolRow>): void {
  for (const s of rows) {
    const key = normalizeSymbolName(s.name);
    let list = map.get(key);
    if (!list) {
      list = [];
      map.set(key, list);
    }
    list.push({ name: s.name, qualifiedName: s.qualifiedName, kind: s.kind, fileId: s.fileId, path: s.path, startLine: s.startLine, parts: identifierParts(s.name).length, ...(s.container ? { container: s.container } : {}) });
  }
}

/** Files `def` under each of its sub-words, when it has two or more. */
function addToParts(map: Map<string, SymbolCandidate[]>, def: SymbolCandidate): void {
  if (def.parts < 2) return;
  for (const part of new Set(identifierParts(def.name))) {
    let l = map.get(part);
    if (!l) map.set(part, (l = []));
    l.push(def);
  }
}

/** Lookups over a base read in place, its changed files' definitions hidden, and theirs now after. */
function overlayLookup(o: Overlay): SymbolLookup {
  const visible = (list: SymbolCandidate[]) => (o.paths.size === 0 ? list : list.filter((c) => !o.paths.has(c.path)));
  return {
    named: (key) => [...visible(o.base.named(key)), ...(o.byName.get(key) ?? [])],
    withPart: (part) => [...visible(o.base.withPart(part)), ...(o.byPart.get(part) ?? [])],
    coveredBy: (parts) => o.base.coveredBy(parts, { hidden: o.paths, extra: (part) => o.byPart.get(part) ?? [] }),
  };
}

/** {@link SymbolLookup.coveredBy} over lists held in memory: each part's list counted. */
export function coveredIn(parts: readonly string[], withPart: (part: string) => readonly SymbolCandidate[]): SymbolCandidate[] {
  const counts = new Map<SymbolCandidate, number>();
  for (const part of parts) for (const def of withPart(part)) counts.set(def, (counts.get(def) ?? 0) + 1);
  const out: SymbolCandidate[] = [];
  for (const [def, n] of counts) if (def.parts >= 2 && n >= def.parts) out.push(def);
  return out;
}
