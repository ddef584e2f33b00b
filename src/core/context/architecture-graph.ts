/**
 * The architecture graph over the code graph: components, modules (folders), files, symbols and
 * notes, and the edges between them (model.ts). Nothing is materialised for the whole
 * workspace: what is cheap and small (folders, components, annotations, notes and what they
 * describe) is read once per index state; a node's neighbours are computed when a walk reaches
 * it, from the index (definitions, references per file, resolved imports).
 *
 * Symbol-level `uses` are found by name, as the repository map finds them: a use of `Name` in a
 * file counts for the definition of `Name` that file can see (the same file, a file it imports,
 * the same folder, or the only definition in the workspace). That is exact for most names and
 * cheap; `find_references` is the exact answer for one symbol.
 */
import picomatch from 'picomatch';
import { distance } from 'fastest-levenshtein';
import type { Engine } from '../engine';
import { VltError, errorMessage } from '../errors';
import type { CodeGraph } from '../intel/code-graph';
import { maskCode, parseNote } from '../notes/parse';
import { checkPathGlob } from '../search/hybrid';
import type { FileRow, SymbolRow } from '../store/store';
import { fileAnnotations } from './annotations';
import {
  COMPONENT_PREFIX,
  componentId,
  EDGE_PRIORITY,
  moduleOf,
  symbolId,
  type ArchNode,
  type EdgeKind,
  type Neighbour,
  type SectionKind,
} from './model';

/** Children listed per node and edge kind (a folder's files, a file's definitions), best first. */
const MAX_CHILDREN = 8;
/** Uses followed per symbol and direction. */
const MAX_USES = 25;
/** Files whose uses of a name are resolved when listing its users. */
const MAX_USER_FILES = 60;
/** Notes read for what they describe. */
const MAX_NOTES = 2000;
/** Chunks with `vlt:` read for annotations. */
const MAX_ANNOTATED_CHUNKS = 5000;

const TYPE_KINDS = new Set(['class', 'interface', 'struct', 'enum', 'trait', 'type']);
/** Definitions that are nodes of their own (not headings, fields or local variables). */
const NODE_KINDS = new Set(['function', 'method', 'class', 'interface', 'struct', 'enum', 'trait', 'type', 'module', 'constant']);

/** A Markdown file and what it says about the code. */
export interface NoteInfo {
  path: string;
  title: string;
  /** Ids of the nodes it describes. */
  describes: Set<string>;
  /** Its external links. */
  links: Array<{ url: string; label: string }>;
}

interface ComponentInfo {
  name: string;
  summary: string;
  declared: boolean;
  match?: (path: string) => boolean;
}

/** Which section kind a heading names. */
export function sectionOf(heading: string): SectionKind {
  const h = heading.toLowerCase();
  if (/invariant/.test(h)) return 'invariants';
  if (/constraint|\brules?\b|limit|restriction|security|must/.test(h)) return 'constraints';
  if (/spec|overview|purpose|design|architecture|about|introduction|summary|what it is/.test(h)) return 'spec';
  if (/\bapi\b|interface|endpoint|reference|usage|commands?\b|\bcli\b|protocol|contract|routes?\b/.test(h)) return 'api';
  if (/test|verification|benchmark/.test(h)) return 'tests';
  return 'other';
}

export class ArchitectureGraph {
  private readonly files = new Map<string, FileRow>();
  private readonly filesById = new Map<number, FileRow>();
  /** Folder → its direct files and sub-folders. */
  private readonly modules = new Map<string, { files: string[]; children: Set<string> }>();
  /** Folder → every file under it, at any depth. */
  private readonly treeFiles = new Map<string, FileRow[]>();
  private readonly components = new Map<string, ComponentInfo>();
  /** File path → the components it belongs to (declared globs, or its file-level annotation). */
  private readonly componentsOfFile = new Map<string, Set<string>>();
  /** Symbol row id → annotations; and the component its own annotation puts it in. */
  readonly symbolAnnotations = new Map<number, Record<string, string>>();
  readonly fileAnnotations = new Map<string, Record<string, string>>();
  private readonly notes = new Map<string, NoteInfo>();
  /** Node id → the notes that describe it. */
  private readonly notesOf = new Map<string, string[]>();
  private readonly symbolCache = new Map<number, SymbolRow[]>();
  private readonly neighbourCache = new Map<string, Neighbour[]>();

  private constructor(
    readonly engine: Engine,
    readonly code: CodeGraph,
  ) {}

  /** The graph of the engine's current index state (built once per state). */
  static async of(engine: Engine): Promise<ArchitectureGraph> {
    const cached = graphs.get(engine);
    if (cached && cached.state === engine.stateVersion) return cached.graph;
    const state = engine.stateVersion;
    const graph = new ArchitectureGraph(engine, await engine.graph());
    graph.load();
    graphs.set(engine, { state, graph });
    return graph;
  }

  private load(): void {
    const store = this.engine.store;
    for (const f of store.listFiles()) {
      if (this.engine.isNavigationOnly(f)) continue;
      this.files.set(f.path, f);
      this.filesById.set(f.id, f);
    }
    for (const p of [...this.files.keys()].sort()) {
      const f = this.files.get(p)!;
      let dir = moduleOf(p);
      this.moduleEntry(dir).files.push(p);
      for (;;) {
        let list = this.treeFiles.get(dir);
        if (!list) this.treeFiles.set(dir, (list = []));
        list.push(f);
        if (dir === '.') break;
        const parent = moduleOf(dir);
        this.moduleEntry(parent).children.add(dir);
        dir = parent;
      }
    }
    for (const c of this.engine.config.architecture.components) {
      const globs = c.paths.map((g) => {
        try {
          checkPathGlob(g);
        } catch (e) {
          throw new VltError('CONFIG_INVALID', `vlt.toml: architecture.component '${c.name}': ${errorMessage(e)}`);
        }
        return picomatch(g, { dot: true });
      });
      // `src/core/**` also names the folder `src/core` itself.
      const match = (p: string) => globs.some((m) => m(p) || m(`${p}/`));
      this.components.set(c.name, { name: c.name, summary: c.summary ?? '', declared: true, match });
      for (const p of this.files.keys()) if (match(p)) this.addToComponent(p, c.name);
    }
    this.loadAnnotations();
    this.loadNotes();
  }

  private moduleEntry(dir: string): { files: string[]; children: Set<string> } {
    let e = this.modules.get(dir);
    if (!e) this.modules.set(dir, (e = { files: [], children: new Set() }));
    return e;
  }

  private addToComponent(path: string, name: string): void {
    let set = this.componentsOfFile.get(path);
    if (!set) this.componentsOfFile.set(path, (set = new Set()));
    set.add(name);
  }

  private ensureComponent(name: string): void {
    if (!this.components.has(name)) this.components.set(name, { name, summary: 'named by vlt:component annotations', declared: false });
  }

  private loadAnnotations(): void {
    const byFile = new Map<number, Array<ReturnType<Engine['store']['chunksContaining']>[number]>>();
    for (const c of this.engine.store.chunksContaining('vlt:', MAX_ANNOTATED_CHUNKS)) {
      if (c.language === 'markdown') continue;
      let list = byFile.get(c.fileId);
      if (!list) byFile.set(c.fileId, (list = []));
      list.push(c);
    }
    for (const [fileId, chunks] of byFile) {
      const file = this.filesById.get(fileId);
      if (!file) continue;
      const found = fileAnnotations(chunks, this.symbolsOf(fileId));
      if (Object.keys(found.file).length) {
        this.fileAnnotations.set(file.path, found.file);
        const comp = found.file.component;
        if (comp) {
          this.ensureComponent(comp);
          this.addToComponent(file.path, comp);
        }
      }
      for (const [id, ann] of found.symbols) {
        this.symbolAnnotations.set(id, ann);
        if (ann.component) this.ensureComponent(ann.component);
      }
    }
  }

  private loadNotes(): void {
    let read = 0;
    for (const f of this.files.values()) {
      if (f.language !== 'markdown' || read++ >= MAX_NOTES) continue;
      const text = this.textOf(f.id);
      const parsed = parseNote(text, f.path);
      const note: NoteInfo = { path: f.path, title: parsed.title || f.path, describes: new Set(), links: [] };
      const describe = (id: string | undefined) => {
        if (id && id !== f.path) note.describes.add(id);
      };
      const refs = [parsed.frontmatter.ref, parsed.frontmatter.refs].flat().filter((r): r is string => typeof r === 'string');
      for (const r of refs) describe(this.lookup(r.trim())?.ref_id);
      const dir = moduleOf(f.path);
      // Links to any file (the vault's own parser keeps only links to notes), and wikilinks by path.
      const targets = [...parsed.links.map((l) => l.target), ...[...maskCode(parsed.body).matchAll(/\[[^\]\n]{0,200}\]\(<?([^)\s>]{1,500})>?(?:\s+"[^"\n]{0,200}")?\)/g)].map((m) => m[1]!)];
      for (const target of targets) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue;
        const joined = joinPath(target.startsWith('/') ? '.' : dir, target.replace(/^\//, ''));
        if (joined !== undefined) describe(this.pathNode(joined)?.ref_id);
      }
      for (const m of parsed.body.matchAll(/\[([^\]\n]{0,200})\]\((https?:\/\/[^)\s]{1,500})\)/g)) note.links.push({ label: m[1]!.trim() || m[2]!, url: m[2]! });
      for (const m of parsed.body.matchAll(/`([^`\n]{2,200})`/g)) {
        const span = m[1]!.trim().replace(/:\d+(?::\d+)?$/, '').replace(/\/$/, '');
        if (span.includes('/') || /\.[a-z]{1,5}$/i.test(span)) describe(this.pathNode(span)?.ref_id);
      }
      // A README (or index) describes its folder.
      if (/^(readme|index)\.md$/i.test(f.path.slice(dir === '.' ? 0 : dir.length + 1))) describe(dir);
      this.notes.set(f.path, note);
      for (const id of note.describes) {
        let list = this.notesOf.get(id);
        if (!list) this.notesOf.set(id, (list = []));
        list.push(f.path);
      }
    }
  }

  /** A file's text as the index holds it (its chunks, in order; overlaps are rare and harmless here). */
  textOf(fileId: number): string {
    const lines: string[] = [];
    let next = 1;
    for (const c of this.engine.store.chunksOfFile(fileId)) {
      const text = c.text.split('\n');
      const skip = Math.max(0, next - c.startLine);
      if (skip >= text.length) continue;
      lines.push(...text.slice(skip));
      next = c.startLine + text.length;
    }
    return lines.join('\n');
  }

  symbolsOf(fileId: number): SymbolRow[] {
    let list = this.symbolCache.get(fileId);
    if (!list) this.symbolCache.set(fileId, (list = this.engine.store.symbolsOfFile(fileId)));
    return list;
  }

  // -------------------------------------------------------------------------------------------
  // Nodes and ids
  // -------------------------------------------------------------------------------------------

  file(path: string): FileRow | undefined {
    return this.files.get(path);
  }

  fileById(id: number): FileRow | undefined {
    return this.filesById.get(id);
  }

  /** A folder or file node for a workspace path, if the index has it. */
  private pathNode(raw: string): ArchNode | undefined {
    const p = normalisePath(raw);
    if (p === undefined) return undefined;
    const f = this.files.get(p);
    if (f) return this.fileNode(f);
    if (this.modules.has(p)) return this.moduleNode(p);
    return undefined;
  }

  /** A symbol id's file and qualified name: split at the `#` after which the part before is an indexed file (paths may hold `#`). */
  splitSymbolId(id: string): { file: FileRow; name: string } | undefined {
    for (let i = id.indexOf('#'); i > 0; i = id.indexOf('#', i + 1)) {
      const file = this.files.get(id.slice(0, i));
      if (file) return { file, name: id.slice(i + 1) };
    }
    return undefined;
  }

  /** The node an exact id names, or undefined. */
  node(id: string): ArchNode | undefined {
    if (id.startsWith(COMPONENT_PREFIX)) {
      const c = this.components.get(id.slice(COMPONENT_PREFIX.length));
      return c ? this.componentNode(c) : undefined;
    }
    const asPath = this.pathNode(id);
    if (asPath) return asPath;
    const sym = this.splitSymbolId(id);
    const s = sym && this.symbolsOf(sym.file.id).find((x) => x.qualifiedName === sym.name && NODE_KINDS.has(x.kind));
    return s ? this.symbolNode(s) : undefined;
  }

  /**
   * The node a user's words name: an exact id, a component's bare name, a path (with `./`, a
   * trailing `/` or `:LINE`), `path#Name`, or a definition's name or qualified name when only
   * one definition has it. Undefined when nothing or more than one thing matches.
   */
  lookup(input: string): ArchNode | undefined {
    const r = this.resolveAll(input);
    return r.length === 1 ? r[0] : undefined;
  }

  /** Every node `input` could name (see {@link lookup}); empty when none. */
  resolveAll(input: string): ArchNode[] {
    const text = input.trim();
    if (!text) return [];
    const exact = this.node(text);
    if (exact) return [exact];
    const comp = this.components.get(text);
    if (comp) return [this.componentNode(comp)];
    const at = /^(.+?):(\d+)(?::\d+)?$/.exec(text);
    if (at) {
      const f = this.files.get(normalisePath(at[1]!) ?? '');
      if (f) {
        const line = Number(at[2]);
        const holding = this.symbolsOf(f.id).filter((s) => NODE_KINDS.has(s.kind) && s.startLine <= line && line <= s.endLine).sort((a, b) => b.startLine - a.startLine);
        return [holding[0] ? this.symbolNode(holding[0]) : this.fileNode(f)];
      }
    }
    const p = this.pathNode(text);
    if (p) return [p];
    if (text.includes('#')) {
      const sym = this.splitSymbolId(text.replace(/\\/g, '/').replace(/^\.\//, ''));
      if (!sym) return [];
      return this.symbolsOf(sym.file.id).filter((s) => NODE_KINDS.has(s.kind) && (s.qualifiedName === sym.name || s.name === sym.name)).map((s) => this.symbolNode(s));
    }
    // A definition by name: `Name`, `Type.Method`, `pkg.Func` (the last part is the name).
    const parts = text.split(/\.|::/);
    const name = parts[parts.length - 1]!;
    if (!/^[\w$]+$/.test(name)) return [];
    const defs = this.engine.store.findSymbols(name, { limit: 200 }).filter((s) => NODE_KINDS.has(s.kind) && this.files.has(s.path));
    const qualified = text.replace(/::/g, '.');
    const matching = parts.length > 1 ? defs.filter((s) => s.qualifiedName === qualified || s.qualifiedName.endsWith(`.${qualified}`) || `${moduleOf(s.path).split('/').pop()}.${s.qualifiedName}` === qualified) : defs;
    return [...new Map(matching.map((s) => this.symbolNode(s)).map((n) => [n.ref_id, n])).values()];
  }

  /**
   * Up to 5 ids close to one that names nothing: prefix matches first (of the id, its last path
   * part or a definition's name, case-insensitive), then by edit distance.
   */
  suggest(input: string, max = 5): string[] {
    const q = input.trim().toLowerCase();
    if (!q) return [];
    const ids: string[] = [...[...this.components.keys()].map(componentId), ...this.modules.keys(), ...this.files.keys()];
    const last = (id: string) => id.slice(id.lastIndexOf('/') + 1).toLowerCase();
    const prefix = ids.filter((id) => id.toLowerCase().startsWith(q) || last(id).startsWith(q) || id.startsWith(`${COMPONENT_PREFIX}${q}`));
    const out = new Set<string>(prefix.sort((a, b) => a.length - b.length || a.localeCompare(b)).slice(0, max));
    if (out.size < max && /^[\w$.:]+$/.test(input.trim())) {
      const name = input.trim().split(/\.|::/).pop()!;
      for (const s of this.engine.store.findSymbols(name, { prefix: true, limit: 20 })) {
        if (out.size >= max) break;
        if (NODE_KINDS.has(s.kind) && this.files.has(s.path)) out.add(symbolId(s.path, s.qualifiedName));
      }
    }
    if (out.size < max) {
      const limit = Math.max(2, Math.floor(q.length / 3));
      const near = ids
        .map((id) => ({ id, d: Math.min(distance(q, id.toLowerCase()), distance(q, last(id))) }))
        .filter((x) => x.d <= limit && !out.has(x.id))
        .sort((a, b) => a.d - b.d || a.id.localeCompare(b.id));
      for (const x of near) {
        if (out.size >= max) break;
        out.add(x.id);
      }
    }
    return [...out];
  }

  componentNode(c: ComponentInfo): ArchNode {
    return { ref_id: componentId(c.name), kind: 'component', summary: c.summary };
  }

  moduleNode(dir: string): ArchNode {
    const e = this.modules.get(dir);
    const readme = (this.notesOf.get(dir) ?? []).find((n) => moduleOf(n) === dir);
    const title = readme ? this.notes.get(readme)?.title : undefined;
    const count = `${e?.files.length ?? 0} files, ${e?.children.size ?? 0} folders`;
    return { ref_id: dir, kind: 'module', path: dir, summary: title ? `${title} (${count})` : count };
  }

  fileNode(f: FileRow): ArchNode {
    if (f.language === 'markdown') return { ref_id: f.path, kind: 'note', path: f.path, summary: this.notes.get(f.path)?.title ?? f.path };
    // Overloads (TypeScript's, Java's) are one name.
    const all = [...new Set(this.symbolsOf(f.id).filter((s) => NODE_KINDS.has(s.kind) && !s.container).map((s) => s.name))];
    const names = all.slice(0, 5);
    const summary = names.length ? `${f.language}; defines ${names.join(', ')}${all.length > names.length ? `, and ${all.length - names.length} more` : ''}` : f.language;
    return { ref_id: f.path, kind: 'file', path: f.path, summary };
  }

  symbolNode(s: SymbolRow): ArchNode {
    return { ref_id: symbolId(s.path, s.qualifiedName), kind: 'symbol', path: s.path, line: s.startLine, end_line: s.endLine, symbol_kind: s.kind, summary: s.signature || s.qualifiedName };
  }

  /** The symbol row behind a symbol node. */
  symbolRow(node: ArchNode): SymbolRow | undefined {
    if (node.kind !== 'symbol' || !node.path) return undefined;
    const f = this.files.get(node.path);
    const qn = node.ref_id.slice(node.path.length + 1);
    return f ? this.symbolsOf(f.id).find((s) => s.qualifiedName === qn && s.startLine === node.line) : undefined;
  }

  /** Every node but the symbols (components, folders, files, notes), for a search over names. */
  namedNodes(): ArchNode[] {
    return [...this.allComponents(), ...[...this.modules.keys()].map((d) => this.moduleNode(d)), ...[...this.files.values()].map((f) => this.fileNode(f))];
  }

  /** The definitions (as nodes) whose name starts with `prefix`, at most `limit`. */
  symbolNodesByPrefix(prefix: string, limit: number): ArchNode[] {
    return this.engine.store
      .findSymbols(prefix, { prefix: true, limit: limit * 2 })
      .filter((s) => NODE_KINDS.has(s.kind) && this.files.has(s.path))
      .slice(0, limit)
      .map((s) => this.symbolNode(s));
  }

  /** Every component (declared, then named by annotations). */
  allComponents(): ArchNode[] {
    return [...this.components.values()].sort((a, b) => Number(b.declared) - Number(a.declared) || a.name.localeCompare(b.name)).map((c) => this.componentNode(c));
  }

  /** The components a node belongs to. */
  componentsOf(node: ArchNode): string[] {
    if (node.kind === 'component') return [node.ref_id.slice(COMPONENT_PREFIX.length)];
    if (node.kind === 'symbol') {
      const own = this.symbolRow(node);
      const ann = own ? this.symbolAnnotations.get(own.id)?.component : undefined;
      if (ann) return [ann];
    }
    if (node.kind === 'module') {
      const e = this.modules.get(node.ref_id);
      const sets = (e?.files ?? []).map((p) => this.componentsOfFile.get(p) ?? new Set<string>());
      if (sets.length === 0) return [];
      return [...sets[0]!].filter((c) => sets.every((s) => s.has(c)));
    }
    return node.path ? [...(this.componentsOfFile.get(node.path) ?? [])] : [];
  }

  /** The indexed files a node is made of (a folder's, recursively; a component's; a symbol's one). */
  filesOf(node: ArchNode): FileRow[] {
    switch (node.kind) {
      case 'file':
      case 'note':
      case 'symbol': {
        const f = node.path ? this.files.get(node.path) : undefined;
        return f ? [f] : [];
      }
      case 'module':
        return this.treeFiles.get(node.ref_id) ?? [];
      case 'component': {
        const name = node.ref_id.slice(COMPONENT_PREFIX.length);
        return [...this.files.values()].filter((f) => this.componentsOfFile.get(f.path)?.has(name));
      }
    }
  }

  /** The notes that describe a node (by path), and those of the folders and file it lies in. */
  notesFor(node: ArchNode, opts: { inherited?: boolean } = {}): string[] {
    const out = new Set(this.notesOf.get(node.ref_id) ?? []);
    if (opts.inherited && node.path) {
      if (node.kind === 'symbol') for (const n of this.notesOf.get(node.path) ?? []) out.add(n);
      // The README of its own folder; not those of the folders above, which describe everything below them.
      const dir = node.kind === 'module' ? node.ref_id : moduleOf(node.path);
      for (const n of this.notesOf.get(dir) ?? []) if (moduleOf(n) === dir) out.add(n);
    }
    if (node.kind === 'note') out.delete(node.ref_id);
    return [...out];
  }

  noteInfo(path: string): NoteInfo | undefined {
    return this.notes.get(path);
  }

  // -------------------------------------------------------------------------------------------
  // Neighbours
  // -------------------------------------------------------------------------------------------

  /** Every neighbour of a node, both directions, by edge priority and then id. */
  neighbours(node: ArchNode): Neighbour[] {
    const cached = this.neighbourCache.get(node.ref_id);
    if (cached) return cached;
    const list: Neighbour[] = [];
    const seen = new Set<string>();
    const add = (kind: EdgeKind, other: ArchNode, direction: 'out' | 'in') => {
      if (other.ref_id === node.ref_id) return;
      const key = `${direction}|${kind}|${other.ref_id}`;
      if (seen.has(key)) return;
      seen.add(key);
      const edge = direction === 'out' ? { src: node.ref_id, dst: other.ref_id, kind } : { src: other.ref_id, dst: node.ref_id, kind };
      list.push({ edge, node: other, direction });
    };
    // part_of: what it is part of, then what is part of it.
    for (const c of this.componentsOf(node)) if (node.kind !== 'component') add('part_of', this.componentNode(this.components.get(c)!), 'out');
    switch (node.kind) {
      case 'component':
        this.componentEdges(node, add);
        break;
      case 'module':
        this.moduleEdges(node.ref_id, add);
        break;
      case 'file':
        this.fileEdges(node, add);
        break;
      case 'note':
        add('part_of', this.moduleNode(moduleOf(node.ref_id)), 'out');
        for (const id of this.notes.get(node.ref_id)?.describes ?? []) {
          const other = this.node(id);
          if (other) add('touches_code', other, 'out');
        }
        break;
      case 'symbol':
        this.symbolEdges(node, add);
        break;
    }
    for (const n of this.notesOf.get(node.ref_id) ?? []) {
      const f = this.files.get(n);
      if (f) add('touches_code', this.fileNode(f), 'in');
    }
    list.sort((a, b) => EDGE_PRIORITY[a.edge.kind] - EDGE_PRIORITY[b.edge.kind] || (a.direction === b.direction ? 0 : a.direction === 'out' ? -1 : 1));
    this.neighbourCache.set(node.ref_id, list);
    return list;
  }

  private componentEdges(node: ArchNode, add: (k: EdgeKind, n: ArchNode, d: 'out' | 'in') => void): void {
    const name = node.ref_id.slice(COMPONENT_PREFIX.length);
    const files = this.filesOf(node);
    const inside = new Set(files.map((f) => f.path));
    // Its parts: the top-most folders wholly inside it, then files outside those, then annotated symbols.
    const parts: ArchNode[] = [];
    const covered = (p: string) => parts.some((n) => n.kind === 'module' && (n.ref_id === '.' || p.startsWith(`${n.ref_id}/`)));
    for (const dir of [...this.modules.keys()].sort((a, b) => a.length - b.length || a.localeCompare(b))) {
      if (covered(`${dir}/x`)) continue;
      const all = this.treeFiles.get(dir) ?? [];
      if (all.length > 0 && all.every((f) => inside.has(f.path))) parts.push(this.moduleNode(dir));
    }
    for (const f of files) if (!covered(f.path)) parts.push(this.fileNode(f));
    for (const [id, ann] of this.symbolAnnotations) {
      if (ann.component !== name) continue;
      const row = this.symbolRowById(id);
      if (row && NODE_KINDS.has(row.kind)) parts.push(this.symbolNode(row));
    }
    for (const p of parts.slice(0, MAX_CHILDREN)) add('part_of', p, 'in');
    // depends_on: other components its files import, and those whose files import it.
    const deps = new Map<string, number>();
    const users = new Map<string, number>();
    for (const f of files) {
      for (const e of this.code.imports(f.id)) {
        for (const t of e.targets) {
          const tf = this.filesById.get(t);
          for (const c of (tf && this.componentsOfFile.get(tf.path)) ?? []) if (c !== name) deps.set(c, (deps.get(c) ?? 0) + 1);
        }
      }
      for (const imp of this.code.importers(f.id)) {
        const tf = this.filesById.get(imp);
        for (const c of (tf && this.componentsOfFile.get(tf.path)) ?? []) if (c !== name) users.set(c, (users.get(c) ?? 0) + 1);
      }
    }
    for (const [c] of [...deps].sort((a, b) => b[1] - a[1])) add('depends_on', this.componentNode(this.components.get(c)!), 'out');
    for (const [c] of [...users].sort((a, b) => b[1] - a[1])) add('depends_on', this.componentNode(this.components.get(c)!), 'in');
  }

  private symbolRowById(id: number): SymbolRow | undefined {
    for (const [fileId] of this.symbolCache) {
      const s = this.symbolCache.get(fileId)!.find((x) => x.id === id);
      if (s) return s;
    }
    return undefined;
  }

  private moduleEdges(dir: string, add: (k: EdgeKind, n: ArchNode, d: 'out' | 'in') => void): void {
    if (dir !== '.') add('part_of', this.moduleNode(moduleOf(dir)), 'out');
    const e = this.modules.get(dir);
    if (!e) return;
    const children: Array<{ node: ArchNode; weight: number }> = [
      ...[...e.children].map((c) => ({ node: this.moduleNode(c), weight: this.treeFiles.get(c)?.length ?? 0 })),
      ...e.files.map((p) => {
        const f = this.files.get(p)!;
        return { node: this.fileNode(f), weight: this.code.importers(f.id).length + 1 };
      }),
    ];
    children.sort((a, b) => b.weight - a.weight || a.node.ref_id.localeCompare(b.node.ref_id));
    for (const c of children.slice(0, MAX_CHILDREN)) add('part_of', c.node, 'in');
    const deps = new Map<string, number>();
    const users = new Map<string, number>();
    for (const p of e.files) {
      const f = this.files.get(p)!;
      for (const imp of this.code.imports(f.id)) {
        for (const t of imp.targets) {
          const m = moduleOf(this.filesById.get(t)?.path ?? p);
          if (m !== dir) deps.set(m, (deps.get(m) ?? 0) + 1);
        }
      }
      for (const u of this.code.importers(f.id)) {
        const m = moduleOf(this.filesById.get(u)?.path ?? p);
        if (m !== dir) users.set(m, (users.get(m) ?? 0) + 1);
      }
    }
    for (const [m] of [...deps].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))) add('depends_on', this.moduleNode(m), 'out');
    for (const [m] of [...users].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))) add('depends_on', this.moduleNode(m), 'in');
  }

  private fileEdges(node: ArchNode, add: (k: EdgeKind, n: ArchNode, d: 'out' | 'in') => void): void {
    const f = this.files.get(node.ref_id)!;
    add('part_of', this.moduleNode(moduleOf(f.path)), 'out');
    const top = this.symbolsOf(f.id).filter((s) => NODE_KINDS.has(s.kind) && !s.container);
    // Types and functions before constants, then by how many files use the name.
    const kindRank = (k: string) => (TYPE_KINDS.has(k) ? 0 : k === 'function' || k === 'method' ? 1 : 2);
    const ranked = top.map((s) => ({ s, w: this.engine.store.countFilesReferencing(s.name) })).sort((a, b) => kindRank(a.s.kind) - kindRank(b.s.kind) || b.w - a.w || a.s.startLine - b.s.startLine);
    for (const { s } of ranked.slice(0, MAX_CHILDREN)) add('part_of', this.symbolNode(s), 'in');
    // An import of a package (Go's, a folder of several files) depends on the folder; of a module, on the file.
    for (const e of this.code.imports(f.id)) {
      const targets = e.targets.map((t) => this.filesById.get(t)).filter((t): t is FileRow => t !== undefined);
      const dirs = new Set(targets.map((t) => moduleOf(t.path)));
      if (targets.length > 1 && dirs.size === 1) add('depends_on', this.moduleNode([...dirs][0]!), 'out');
      else for (const t of targets) add('depends_on', this.fileNode(t), 'out');
    }
    for (const u of this.code.importers(f.id)) {
      const uf = this.filesById.get(u);
      if (uf) add('depends_on', this.fileNode(uf), 'in');
    }
  }

  private symbolEdges(node: ArchNode, add: (k: EdgeKind, n: ArchNode, d: 'out' | 'in') => void): void {
    const s = this.symbolRow(node);
    const f = node.path ? this.files.get(node.path) : undefined;
    if (!s || !f) return;
    const defs = this.symbolsOf(f.id);
    const container = s.container ? defs.find((d) => d.id !== s.id && TYPE_KINDS.has(d.kind) && (d.qualifiedName === s.container || d.name === s.container) && d.startLine <= s.startLine) ?? defs.find((d) => TYPE_KINDS.has(d.kind) && d.name === s.container) : undefined;
    add('part_of', container ? this.symbolNode(container) : this.fileNode(f), 'out');
    for (const m of defs.filter((d) => d.id !== s.id && NODE_KINDS.has(d.kind) && d.container !== undefined && (d.container === s.qualifiedName || d.container === s.name)).slice(0, MAX_CHILDREN)) add('part_of', this.symbolNode(m), 'in');
    // What it uses: the names referenced in its lines, resolved from its file.
    let out = 0;
    const done = new Set<string>();
    for (const r of this.engine.store.getRefs(f.id)) {
      if (out >= MAX_USES) break;
      if (r.line < s.startLine || r.line > s.endLine || done.has(r.name)) continue;
      done.add(r.name);
      const target = this.resolveName(r.name, f);
      if (!target || target.id === s.id || (target.fileId === f.id && target.startLine >= s.startLine && target.endLine <= s.endLine)) continue;
      add(edgeKindFor(r.kind, target.kind), this.symbolNode(target), 'out');
      out++;
    }
    // What uses it: files that reference its name and can see its file.
    let users = 0;
    const candidates = this.engine.store.filesReferencing(s.name).filter((c) => this.files.has(c.path));
    // A method's name is matched by every object's method of that name: count only files that name its type too.
    const ownerFiles = s.container && container ? new Set(this.engine.store.filesReferencing(container.name).map((c) => c.fileId).concat(f.id)) : undefined;
    const visible = candidates.filter((c) => this.canSee(c.fileId, f) && (!ownerFiles || ownerFiles.has(c.fileId)));
    for (const c of visible.slice(0, MAX_USER_FILES)) {
      if (users >= MAX_USES) break;
      const userFile = this.filesById.get(c.fileId)!;
      // The use must resolve back here from where it stands.
      if (this.resolveName(s.name, userFile)?.id !== s.id) continue;
      const userDefs = this.symbolsOf(c.fileId).filter((d) => NODE_KINDS.has(d.kind));
      const seenHere = new Set<string>();
      for (const r of this.engine.store.getRefs(c.fileId, s.name)) {
        if (r.name !== s.name) continue;
        if (c.fileId === f.id && r.line >= s.startLine && r.line <= s.endLine) continue;
        const holder = userDefs.filter((d) => d.startLine <= r.line && r.line <= d.endLine).sort((a, b) => b.startLine - a.startLine)[0];
        // Top-level code of its own file is its container, not a user.
        if (!holder && c.fileId === f.id) continue;
        const other = holder ? this.symbolNode(holder) : this.fileNode(userFile);
        if (seenHere.has(other.ref_id)) continue;
        seenHere.add(other.ref_id);
        add(edgeKindFor(r.kind, s.kind), other, 'in');
        if (++users >= MAX_USES) break;
      }
    }
  }

  /** Whether code in file `from` can see the definitions of file `def`: the same file or folder, or an import of it. */
  private canSee(from: number, def: FileRow): boolean {
    if (from === def.id) return true;
    const f = this.filesById.get(from);
    if (!f) return false;
    if (moduleOf(f.path) === moduleOf(def.path)) return true;
    return this.code.imports(from).some((e) => e.targets.includes(def.id));
  }

  /**
   * The definition a name used in `from` most likely means: one in the same file, then in a file
   * it imports, then in its folder, else the workspace's only one. Undefined when ambiguous.
   */
  resolveName(name: string, from: FileRow): SymbolRow | undefined {
    const defs = this.engine.store.findSymbols(name, { limit: 50 }).filter((d) => NODE_KINDS.has(d.kind) && this.files.has(d.path));
    if (defs.length === 0) return undefined;
    const same = defs.filter((d) => d.fileId === from.id);
    if (same.length) return same[0];
    const imported = new Set(this.code.imports(from.id).flatMap((e) => e.targets));
    const viaImport = defs.filter((d) => imported.has(d.fileId));
    if (viaImport.length) return new Set(viaImport.map((d) => d.fileId)).size === 1 || viaImport.every((d) => moduleOf(d.path) === moduleOf(viaImport[0]!.path)) ? viaImport[0] : undefined;
    const dir = moduleOf(from.path);
    const folder = defs.filter((d) => moduleOf(d.path) === dir);
    if (folder.length) return folder[0];
    return new Set(defs.map((d) => d.fileId)).size === 1 ? defs[0] : undefined;
  }
}

const graphs = new WeakMap<Engine, { state: string; graph: ArchitectureGraph }>();

function edgeKindFor(refKind: string, targetKind: string): EdgeKind {
  if (refKind === 'inherit') return 'implements';
  return TYPE_KINDS.has(targetKind) ? 'touches_entity' : 'uses';
}

/** A workspace-relative path in the index's form, or undefined for one that leaves it. */
function normalisePath(raw: string): string | undefined {
  let p = raw.replace(/\\/g, '/').replace(/^\.\//, '').replace(/\/+$/, '');
  if (p === '' || p === '.') return '.';
  if (p.startsWith('/') || p.split('/').includes('..')) return undefined;
  p = p.replace(/\/\.\//g, '/');
  return p;
}

/** `dir` + a relative path, with `.` and `..` parts resolved; undefined when it climbs out. */
function joinPath(dir: string, rel: string): string | undefined {
  const parts = dir === '.' ? [] : dir.split('/');
  for (const part of rel.split('#')[0]!.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) return undefined;
      parts.pop();
    }
    else {
      try {
        parts.push(decodeURIComponent(part));
      } catch {
        parts.push(part);
      }
    }
  }
  return parts.join('/') || '.';
}
