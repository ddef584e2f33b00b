/**
 * The code graph: files and their resolved import edges, built from the index in one pass and
 * cached by the engine per index state. Reference and call edges are not materialised here:
 * the store's posting table already answers "which files use name X", and the navigation
 * chain resolves individual uses on demand.
 */
import * as path from 'node:path';
import type { WorkspaceFs } from '../ports';
import type { FileRow, IndexStore } from '../store/store';
import type { ImportSpec, LanguageId } from '../types';
import { ModuleResolver, parseJsonc, tsPathConfigOf, type ResolverConfig, type TsPathConfig } from './resolve';

export interface FileNode {
  id: number;
  path: string;
  language: LanguageId;
}

export interface ImportEdge {
  spec: ImportSpec;
  /** Resolved target file ids, most specific first; empty when unresolved. */
  targets: number[];
}

/** A {@link CodeGraph} being built; see {@link CodeGraph.builder}. */
export interface GraphBuilder {
  readonly done: boolean;
  /** Resolves imports until `until` (a `performance.now()` time) or the end; true when the graph is complete. */
  step(until: number): boolean;
  /** Resolves whatever is left and returns the graph (the same one on every call). */
  finish(): CodeGraph;
}

export class CodeGraph {
  private readonly byPath = new Map<string, FileNode>();
  private readonly byId = new Map<number, FileNode>();
  private readonly importsOf = new Map<number, ImportEdge[]>();
  private readonly importersOf = new Map<number, number[]>();
  /** Import edges that resolved to a workspace file, and all of them. */
  readonly stats = { imports: 0, resolved: 0, ms: 0 };

  private constructor(readonly resolver: ModuleResolver) {}

  static build(store: IndexStore, config: ResolverConfig, files?: readonly FileRow[]): CodeGraph {
    return CodeGraph.builder(store, config, files).finish();
  }

  /**
   * A build that can run in slices: the index is read at once (so that the graph is of one
   * index state, whatever happens between slices), and the imports are resolved a slice at a
   * time by {@link GraphBuilder.step}. A host warms the graph this way while no request runs;
   * a caller that needs the graph now calls {@link GraphBuilder.finish}, which resolves the rest
   * without pausing.
   */
  static builder(store: IndexStore, config: ResolverConfig, files: readonly FileRow[] = store.listFiles()): GraphBuilder {
    const t0 = performance.now();
    const resolver = new ModuleResolver(
      files.map((f) => f.path),
      config,
    );
    const g = new CodeGraph(resolver);
    for (const f of files) {
      const node: FileNode = { id: f.id, path: f.path, language: f.language };
      g.byPath.set(f.path, node);
      g.byId.set(f.id, node);
    }
    const pending = [...store.allImportSpecs()];
    let next = 0;
    let ms = performance.now() - t0;
    const builder: GraphBuilder = {
      get done() {
        return next >= pending.length;
      },
      step(until) {
        const t1 = performance.now();
        // A file's imports are resolved in one go; the clock is read every few files.
        while (next < pending.length) {
          const [fileId, specs] = pending[next++]!;
          g.addImports(fileId, specs);
          if (next % 16 === 0 && performance.now() >= until) break;
        }
        ms += performance.now() - t1;
        if (next >= pending.length) g.stats.ms = ms;
        return next >= pending.length;
      },
      finish() {
        builder.step(Infinity);
        return g;
      },
    };
    return builder;
  }

  /** Resolves one file's imports into edges (and the importers of their targets). */
  private addImports(fileId: number, specs: readonly ImportSpec[]): void {
    const from = this.byId.get(fileId);
    if (!from) return;
    const edges: ImportEdge[] = [];
    for (const spec of specs) {
      this.stats.imports++;
      const targets: number[] = [];
      for (const p of this.resolver.resolve(from.path, from.language, spec)) {
        const t = this.byPath.get(p);
        if (t && t.id !== fileId) targets.push(t.id);
      }
      if (targets.length > 0) this.stats.resolved++;
      edges.push({ spec, targets });
      for (const t of targets) {
        let list = this.importersOf.get(t);
        if (!list) this.importersOf.set(t, (list = []));
        if (list[list.length - 1] !== fileId) list.push(fileId);
      }
    }
    this.importsOf.set(fileId, edges);
  }

  file(pathOrId: string | number): FileNode | undefined {
    return typeof pathOrId === 'number' ? this.byId.get(pathOrId) : this.byPath.get(pathOrId);
  }

  get fileCount(): number {
    return this.byId.size;
  }

  imports(fileId: number): readonly ImportEdge[] {
    return this.importsOf.get(fileId) ?? [];
  }

  /** Files importing this one directly. */
  importers(fileId: number): readonly number[] {
    return this.importersOf.get(fileId) ?? [];
  }

  /**
   * Files that can see the definitions of `fileId` by import: its importers, and the
   * importers of every file that re-exports it (TS barrels, Python `__init__` imports),
   * transitively, up to `limit` files.
   */
  visibleFrom(fileId: number, limit = 5000): number[] {
    const seen = new Set<number>([fileId]);
    const out: number[] = [];
    const queue = [fileId];
    while (queue.length > 0 && out.length < limit) {
      const cur = queue.shift()!;
      for (const imp of this.importers(cur)) {
        if (seen.has(imp)) continue;
        seen.add(imp);
        out.push(imp);
        const node = this.byId.get(imp);
        // A file that passes names on (a barrel, a package __init__) makes its own importers
        // see them as well.
        const passes = this.imports(imp).some(
          (e) => e.targets.includes(cur) && (e.spec.reexport === true || e.spec.star === true || node?.path.endsWith('__init__.py') === true),
        );
        if (passes) queue.push(imp);
      }
    }
    return out;
  }

  /** Every resolved file→file import edge, for ranking (the repository map). */
  fileEdges(): Array<{ from: number; to: number; weight: number }> {
    const out: Array<{ from: number; to: number; weight: number }> = [];
    for (const [from, edges] of this.importsOf) {
      for (const e of edges) for (const to of e.targets) out.push({ from, to, weight: 1 });
    }
    return out;
  }
}

/**
 * Reads what module resolution needs beyond the path set: `tsconfig.json`/`jsconfig.json`
 * at the root and one directory down, the root `go.mod`, and whether the root is a Python
 * package. Unreadable or invalid files are skipped (resolution just finds less).
 */
export async function loadResolverConfig(root: string, fs: WorkspaceFs, paths: readonly string[]): Promise<ResolverConfig> {
  const readText = async (rel: string): Promise<string | undefined> => {
    try {
      return new TextDecoder().decode(await fs.readFile(path.join(root, rel)));
    } catch {
      return undefined;
    }
  };
  const topDirs = new Set<string>(['']);
  let hasTs = false;
  let hasGo = false;
  for (const p of paths) {
    if (/\.(m|c)?[jt]sx?$/.test(p)) {
      hasTs = true;
      const slash = p.indexOf('/');
      if (slash > 0) topDirs.add(p.slice(0, slash));
    } else if (p.endsWith('.go')) hasGo = true;
  }
  const tsConfigs: TsPathConfig[] = [];
  if (hasTs) {
    for (const dir of topDirs) {
      for (const name of ['tsconfig.json', 'jsconfig.json']) {
        const text = await readText(dir ? `${dir}/${name}` : name);
        if (text === undefined) continue;
        try {
          const cfg = tsPathConfigOf(dir, parseJsonc(text));
          if (cfg) tsConfigs.push(cfg);
        } catch {
          // An invalid config contributes no path mappings.
        }
        break;
      }
    }
  }
  let goModule: string | undefined;
  if (hasGo) {
    const mod = await readText('go.mod');
    goModule = mod ? /^module\s+(\S+)/m.exec(mod)?.[1] : undefined;
  }
  const config: ResolverConfig = {
    rootName: path.basename(root),
    rootIsPythonPackage: paths.includes('__init__.py'),
    tsConfigs,
  };
  if (goModule) config.goModule = goModule;
  return config;
}
