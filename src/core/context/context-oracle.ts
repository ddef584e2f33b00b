/**
 * The Context Oracle: what an agent about to change something asks for in one call. For one or
 * more nodes of the architecture graph it builds a versioned bundle (what the thing is, what it
 * is part of, what it uses and what uses it, the docs that describe it and whether they are
 * stale, the rules that constrain it, its routes and tests, how active it is in git); it also
 * answers impact analysis (`why`), the workspace's routes and `lint`.
 *
 * Hosts pass the git activity (a port: the engine runs no programs); without it the bundle says
 * that activity and staleness are unknown.
 */
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { discoverFiles } from '../discovery';
import type { Engine } from '../engine';
import { VltError } from '../errors';
import { lastChange, activityOf, type ActivitySource, type GitActivity } from './activity';
import { bfsSubgraph, collectChunks } from './bundle';
import { ArchitectureGraph } from './architecture-graph';
import { analyzeImpact, type WhyResult } from './impact';
import type { FileRow } from '../store/store';
import type { ArchNode, CodeSymbol, ContextBundle, FocusInfo, Route, StaleDoc, TestInfo } from './model';
import { extractRoutes, ROUTE_HINTS, SCHEMA_FILES } from './routes';
import { lint, rulesFor, type LintReport } from './rules';
import { TestMap } from './test-map';

export const CONTEXT_DEFAULTS = { depth: 2, maxNodes: 20, maxChunks: 10 } as const;

/** Bundles kept per engine, most recently used last. */
const BUNDLE_CACHE_SIZE = 64;
const bundleCache = new WeakMap<Engine, Map<string, ContextBundle>>();
/** Code symbols a bundle lists. */
const MAX_CODE_SYMBOLS = 30;
/** Routes a bundle lists (the CLI's `vlt routes` lists all). */
const MAX_BUNDLE_ROUTES = 50;
/** Files whose last change is compared with a note's, per described node. */
const MAX_STALE_FILES = 500;

export interface ContextOptions {
  depth?: number;
  maxNodes?: number;
  maxChunks?: number;
  signal?: AbortSignal;
}

export interface ContextOracleDeps {
  activity?: ActivitySource;
  /** Unix seconds; tests fix it. */
  now?: () => number;
}

/** Each engine's routes, for the index state they were read at (kept across calls in a long-lived host). */
const routeCaches = new WeakMap<Engine, { state: string; routes: Route[] }>();
/** Each engine's routes per file, by content hash. */
const fileRouteCaches = new WeakMap<Engine, Map<string, { hash: string; routes: Route[] }>>();
/** Files of a bundle's focus read for routes (a folder the size of a whole repository reads no more). */
const MAX_ROUTE_FILES = 2000;

export class ContextOracle {
  constructor(
    readonly engine: Engine,
    private readonly deps: ContextOracleDeps = {},
  ) {}

  graph(): Promise<ArchitectureGraph> {
    return ArchitectureGraph.of(this.engine);
  }

  /** The nodes the ids name; REF_NOT_FOUND (with up to 5 suggestions) for one that names none, USAGE for an ambiguous one. */
  async resolve(refs: readonly string[]): Promise<ArchNode[]> {
    const graph = await this.graph();
    if (refs.length === 0) throw new VltError('USAGE', 'no ref id given: name a file, folder, symbol (path#Name or Name) or component:NAME');
    const out: ArchNode[] = [];
    for (const ref of refs) {
      const all = graph.resolveAll(ref);
      if (all.length === 1) out.push(all[0]!);
      else if (all.length > 1) {
        const ids = all.slice(0, 8).map((n) => n.ref_id);
        throw new VltError('USAGE', `${ref} is ambiguous: ${ids.join(', ')}${all.length > ids.length ? `, and ${all.length - ids.length} more` : ''}; give one of these ids`, { ref, candidates: ids });
      } else {
        const suggestions = graph.suggest(ref);
        throw new VltError('REF_NOT_FOUND', `no node ${ref}${suggestions.length ? `; did you mean ${suggestions.join(', ')}?` : ''}`, { ref, suggestions });
      }
    }
    return out;
  }

  private async activity(signal: AbortSignal | undefined): Promise<GitActivity | undefined> {
    if (!this.deps.activity) return undefined;
    try {
      return await this.deps.activity(signal);
    } catch (e) {
      if (e instanceof VltError && e.code === 'CANCELLED') throw e;
      return undefined;
    }
  }

  private now(): number {
    return this.deps.now?.() ?? Math.floor(Date.now() / 1000);
  }

  /**
   * The bundle around `refs`, from the cache when the index, the git history, the day (activity
   * counts days) and the request are the same as for a bundle built before.
   */
  async buildContext(refs: readonly string[], opts: ContextOptions = {}): Promise<ContextBundle> {
    const depth = opts.depth ?? CONTEXT_DEFAULTS.depth;
    const maxNodes = opts.maxNodes ?? CONTEXT_DEFAULTS.maxNodes;
    const maxChunks = opts.maxChunks ?? CONTEXT_DEFAULTS.maxChunks;
    const git = await this.activity(opts.signal);
    const key = JSON.stringify([this.engine.stateVersion, git?.head ?? null, Math.floor(this.now() / 86_400), refs, depth, maxNodes, maxChunks]);
    let cache = bundleCache.get(this.engine);
    if (!cache) bundleCache.set(this.engine, (cache = new Map()));
    const hit = cache.get(key);
    if (hit) {
      // Most recently used last: the oldest entry is the one to drop.
      cache.delete(key);
      cache.set(key, hit);
      return hit;
    }
    const built = await this.assemble(refs, { depth, maxNodes, maxChunks }, git);
    const { etag: _none, ...rest } = built;
    const bundle: ContextBundle = { ...rest, etag: createHash('sha256').update(JSON.stringify(rest)).digest('hex').slice(0, 16) };
    cache.set(key, bundle);
    while (cache.size > BUNDLE_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    return bundle;
  }

  private async assemble(refs: readonly string[], opts: { depth: number; maxNodes: number; maxChunks: number }, git: GitActivity | undefined): Promise<ContextBundle> {
    const { depth, maxNodes, maxChunks } = opts;
    const graph = await this.graph();
    const focus = await this.resolve(refs);
    const sub = bfsSubgraph(graph, focus, depth, Math.max(maxNodes, focus.length));
    const text_chunks = collectChunks(graph, sub, focus, maxChunks);
    const now = this.now();
    const focusInfo = focus.map((f): FocusInfo => {
      const info: FocusInfo = { ref_id: f.ref_id, kind: f.kind, summary: f.summary };
      const links = graph.notesFor(f, { inherited: true }).flatMap((n) => graph.noteInfo(n)?.links ?? []);
      if (links.length) info.links = dedupeBy(links, (l) => l.url).slice(0, 10);
      if (git) info.activity = activityOf(git, graph.filesOf(f).map((x) => x.path), now);
      return info;
    });
    // Notes: those whose chunks the bundle carries and those in the subgraph.
    const notes = new Set<string>([...text_chunks.map((c) => c.doc_path), ...sub.nodes.filter((n) => n.kind === 'note').map((n) => n.ref_id)]);
    const stale = git ? staleDocs(graph, git, notes) : [];
    const components = new Set<string>();
    for (const n of sub.nodes) for (const c of graph.componentsOf(n)) components.add(c);
    const warnings: string[] = [];
    if (sub.leftOut > 0) warnings.push(`the subgraph stopped at max_nodes (${maxNodes}): ${sub.leftOut} more neighbours were left out; raise max_nodes or lower depth`);
    if (!git) warnings.push('no git history was read (not a repository, or a restricted workspace): activity and stale docs are unknown');
    return {
      version: 2,
      focus: focusInfo[0]!,
      focus_nodes: focusInfo,
      graph: { nodes: sub.nodes, edges: sub.edges },
      text_chunks,
      code_symbols: codeSymbols(graph, focus, sub.nodes),
      sync_status: { stale_docs: stale, last_reindex: this.engine.store.lastUpdate(), history: git ? 'git' : 'none' },
      constraints: rulesFor(this.engine.config.architecture.rules, components),
      routes: (await this.routesOf(focus)).slice(0, MAX_BUNDLE_ROUTES),
      tests: mergeTests(focus.map((f) => TestMap.of(graph).testsOf(f))),
      warning: warnings.length ? warnings.join('; ') : null,
      etag: '',
    };
  }

  async why(ref: string, opts: { depth?: number; reverse?: boolean; signal?: AbortSignal } = {}): Promise<WhyResult> {
    const graph = await this.graph();
    const [node] = await this.resolve([ref]);
    const git = await this.activity(opts.signal);
    const staleCache = new Map<string, boolean>();
    const isStale = (note: string) => {
      if (!git) return false;
      let v = staleCache.get(note);
      if (v === undefined) staleCache.set(note, (v = staleDocs(graph, git, new Set([note])).length > 0));
      return v;
    };
    return analyzeImpact(graph, node!, { ...(opts.depth !== undefined ? { depth: opts.depth } : {}), ...(opts.reverse !== undefined ? { reverse: opts.reverse } : {}), isStale });
  }

  /** Every route of the workspace (cached per index state), or of the files of `scope`. */
  async routes(scope?: string): Promise<Route[]> {
    if (scope === undefined) return this.allRoutes();
    return this.routesOf(await this.resolve([scope]));
  }

  /** The routes in the files of these nodes (a symbol's: those of its lines), reading only those files. */
  private async routesOf(nodes: readonly ArchNode[]): Promise<Route[]> {
    const graph = await this.graph();
    const files = [...new Map(nodes.flatMap((n) => graph.filesOf(n)).map((f) => [f.path, f])).values()];
    const symbols = nodes.filter((n) => n.kind === 'symbol');
    const routes: Route[] = [];
    for (const f of files.slice(0, MAX_ROUTE_FILES)) routes.push(...(await this.routesOfFile(f)));
    return routes.filter((r) => symbols.length === 0 || symbols.some((s) => s.path === r.file && s.line !== undefined && r.line >= s.line - 5 && r.line <= (s.end_line ?? s.line)));
  }

  /** One file's routes, read when its indexed text holds a route hint; kept per content hash. */
  private async routesOfFile(f: FileRow): Promise<Route[]> {
    if (f.language === 'markdown') return [];
    let cache = fileRouteCaches.get(this.engine);
    if (!cache) fileRouteCaches.set(this.engine, (cache = new Map()));
    const hit = cache.get(f.path);
    if (hit?.hash === f.hash) return hit.routes;
    let routes: Route[] = [];
    if (this.engine.store.chunksOfFile(f.id).some((c) => ROUTE_HINTS.some((h) => c.text.includes(h)))) {
      const text = await this.engine.readText(f.path).catch(() => undefined);
      const parser = await this.engine.syntaxParser().catch(() => undefined);
      if (text !== undefined) routes = extractRoutes(f.path, f.language, text, parser);
    }
    cache.set(f.path, { hash: f.hash, routes });
    return routes;
  }

  private async allRoutes(): Promise<Route[]> {
    const state = this.engine.stateVersion;
    const cached = routeCaches.get(this.engine);
    if (cached?.state === state) return cached.routes;
    const graph = await this.graph();
    const routes: Route[] = [];
    for (const id of this.engine.store.filesContainingAny(ROUTE_HINTS)) {
      const f = graph.fileById(id);
      if (f) routes.push(...(await this.routesOfFile(f)));
    }
    const schema = await discoverFiles(this.engine.root, this.engine.config, this.engine.workspaceFs, { alsoList: SCHEMA_FILES }).then((d) => d.listed, () => [] as string[]);
    for (const p of schema) {
      // The index's size limit holds for schema files too: a huge one is skipped, not read.
      const size = await this.engine.workspaceFs.stat(path.join(this.engine.root, p)).then((st) => st.size, () => Infinity);
      if (size > this.engine.config.index.maxFileBytes) continue;
      const text = await this.engine.readText(p).catch(() => undefined);
      if (text !== undefined) routes.push(...extractRoutes(p, 'schema', text, undefined));
    }
    routes.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
    routeCaches.set(this.engine, { state, routes });
    return routes;
  }

  async lint(opts: { strict?: boolean } = {}): Promise<LintReport> {
    const graph = await this.graph();
    return lint(graph, TestMap.of(graph), this.engine.config.architecture.rules, opts);
  }
}

function dedupeBy<T>(list: readonly T[], key: (x: T) => string): T[] {
  const seen = new Set<string>();
  return list.filter((x) => {
    const k = key(x);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** Notes whose described code changed in a commit after the note's own last commit. */
function staleDocs(graph: ArchitectureGraph, git: GitActivity, notes: ReadonlySet<string>): StaleDoc[] {
  const out: StaleDoc[] = [];
  for (const doc of notes) {
    const info = graph.noteInfo(doc);
    const docTime = lastChange(git, doc);
    if (!info || docTime === 0) continue;
    for (const id of info.describes) {
      const node = graph.node(id);
      if (!node) continue;
      let newest = { time: 0, file: '' };
      for (const f of graph.filesOf(node).slice(0, MAX_STALE_FILES)) {
        if (f.path === doc) continue;
        const t = lastChange(git, f.path);
        if (t > newest.time) newest = { time: t, file: f.path };
      }
      if (newest.time > docTime) {
        out.push({ doc_path: doc, ref_id: id, code_changed: new Date(newest.time * 1000).toISOString(), doc_changed: new Date(docTime * 1000).toISOString(), code_file: newest.file });
      }
    }
  }
  return out;
}

/** The symbols of the subgraph (focus first), and a focus file's own top-level definitions. */
function codeSymbols(graph: ArchitectureGraph, focus: readonly ArchNode[], nodes: readonly ArchNode[]): CodeSymbol[] {
  const out: CodeSymbol[] = [];
  const seen = new Set<string>();
  const push = (n: ArchNode) => {
    if (n.kind !== 'symbol' || seen.has(n.ref_id) || out.length >= MAX_CODE_SYMBOLS) return;
    seen.add(n.ref_id);
    const row = graph.symbolRow(n);
    const annotations = { ...(n.path ? graph.fileAnnotations.get(n.path) : undefined), ...(row ? graph.symbolAnnotations.get(row.id) : undefined) };
    out.push({
      ref_id: n.ref_id,
      file_path: n.path ?? '',
      symbol_name: row?.qualifiedName ?? n.ref_id.slice((n.path?.length ?? -1) + 1),
      kind: n.symbol_kind ?? 'symbol',
      line_start: n.line ?? 0,
      line_end: n.end_line ?? n.line ?? 0,
      ...(Object.keys(annotations).length ? { annotations } : {}),
    });
  };
  for (const f of focus) push(f);
  for (const f of focus) {
    if (f.kind !== 'file' || !f.path) continue;
    const file = graph.file(f.path);
    for (const s of file ? graph.symbolsOf(file.id) : []) if (!s.container && s.kind !== 'heading' && s.kind !== 'variable' && s.kind !== 'field') push(graph.symbolNode(s));
  }
  for (const n of nodes) push(n);
  return out;
}

function mergeTests(list: readonly TestInfo[]): TestInfo | null {
  if (list.length === 0) return null;
  if (list.length === 1) return list[0]!;
  const files = [...new Set(list.flatMap((t) => t.test_files))].sort();
  const framework = list.find((t) => t.framework)?.framework ?? null;
  const count = list.reduce((n, t) => n + t.test_count, 0);
  const order = ['none', 'low', 'medium', 'high'] as const;
  const coverage = list.map((t) => t.coverage_estimate).sort((a, b) => order.indexOf(b) - order.indexOf(a))[0]!;
  return { framework, test_files: files, test_count: count, coverage_estimate: coverage };
}
