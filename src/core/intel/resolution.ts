/**
 * The index's own resolution of an identifier, without a language server: the syntax tree of
 * the file (locals scopes, member receivers), imports resolved to files, re-exports followed,
 * class members and base classes searched, namespaces, and for names no scope binds, the
 * indexed definitions of the name ranked as candidates.
 */
import type { Node } from 'web-tree-sitter';
import { isTsFamily } from '../parse/languages';
import type { IndexStore, SymbolRow } from '../store/store';
import type { CodeGraph } from './code-graph';
import { goFileMatches, goFileNameMatches } from './go-build';
import { GoTypes } from './go-types';
import { KIND_RANK } from './names';
import { narrowByDiscriminant, orderCandidateOverloads, orderOverloads } from './narrowing';
import { memo, nameCol, type FileFacts, type Loc, type SourceFiles, type SourceTree } from './sources';
import { analyzePosition, assignedType, classAt, classInfo, classMembers, type CallShape, type ClassInfo, type Target } from './syntax';

/** How deep a resolution follows imports, re-exports and base classes. */
export const MAX_DEPTH = 6;

export interface Resolution {
  name: string | undefined;
  locs: Loc[];
  how: string;
  candidates: SymbolRow[];
}

export class IndexResolver {
  /** Per-call caches: export lookups and resolutions of the positions a call touches. */
  private exportsCache = new Map<string, Promise<Loc[]>>();
  /** Export lookups in progress, by key: a lookup that reaches its own key is a cycle. */
  private readonly exportsPending = new Set<string>();

  /** Go types as declarations state them, for members of values and struct literal keys. */
  private readonly goTypes: GoTypes;

  constructor(
    private readonly deps: { store: IndexStore; graph(): Promise<CodeGraph> },
    private readonly files: SourceFiles,
  ) {
    this.goTypes = new GoTypes({
      store: deps.store,
      fileFacts: (rel) => this.fileFacts(rel),
      syntax: (rel, facts) => this.syntax(rel, facts),
      packageFiles: (file, facts, local) => this.moduleOfBinding(file, facts, local),
      exportsOf: (file, name, depth) => this.exportsOf(file, name, depth),
      freeName: (file, facts, name, depth) => this.freeName(file, facts, name, depth),
    });
  }

  private fileFacts(rel: string): Promise<FileFacts | undefined> {
    return this.files.fileFacts(rel);
  }

  private syntax(rel: string, facts: FileFacts): Promise<SourceTree> {
    return this.files.syntax(rel, facts);
  }

  /** Forgets the per-call caches (the files' own caches are reset by their owner). */
  reset(): void {
    this.exportsCache.clear();
    this.resolved.clear();
    this.ancestorCache.clear();
  }

  async analyze(rel: string, line: number, col: number): Promise<{ target: Target | undefined; line: number; col: number; call?: CallShape; facts: FileFacts } | undefined> {
    const facts = await this.fileFacts(rel);
    if (!facts) return undefined;
    const { root, scopes } = await this.syntax(rel, facts);
    return { ...analyzePosition(root, facts.language, line, col, scopes), facts };
  }
  // ---- the graph provider: resolution ----------------------------------------------------------

  /** Top-level definitions named `name` that `file` provides, following re-exports. */
  private exportsOf(file: string, name: string, depth: number): Promise<Loc[]> {
    const key = `${file}\0${name}`;
    // A lookup that comes back to itself (a Go test package dot-importing its own package, star
    // re-exports in a circle) would wait on its own pending answer forever: it finds nothing
    // along that path instead.
    if (this.exportsPending.has(key)) return Promise.resolve([]);
    return memo(this.exportsCache, key, () => {
      this.exportsPending.add(key);
      return this.findExport(file, name, depth).finally(() => this.exportsPending.delete(key));
    });
  }

  private async findExport(file: string, name: string, depth: number): Promise<Loc[]> {
    if (depth > MAX_DEPTH) return [];
    const facts = await this.fileFacts(file);
    if (!facts) return [];
    const own = facts.symbols.filter((s) => s.name === name && s.container === undefined);
    const ownLocs = own.map((s) => ({ path: file, line: s.startLine, col: nameCol(facts, s.startLine, name) }));
    // A Go file outside the default build (`_plan9.go`, `//go:build windows`) answers only when
    // no file of the build defines the name too.
    if (own.length > 0 && (facts.language !== 'go' || goFileMatches(file, facts.text))) return ownLocs;
    const aliased = await this.exportClauseOf(file, facts, name);
    if (aliased.length > 0) return aliased;
    const graph = await this.deps.graph();
    // Names the file imports and passes on: `export { x } from`, `from .a import x` in __init__.
    for (const spec of facts.importSpecs) {
      const n = spec.names?.find((x) => x.local === name);
      if (!n) continue;
      const targets = graph.resolver.resolve(file, facts.language, spec);
      for (const t of targets) {
        if (facts.language === 'python' && graph.resolver.pythonModuleOf(t)?.endsWith(`.${n.name}`)) return [{ path: t, line: 1, col: 1 }];
        const found = await this.exportsOf(t, n.name, depth + 1);
        if (found.length > 0) return found;
      }
    }
    const starred = await this.throughStarImports(file, facts, (t) => this.exportsOf(t, name, depth + 1));
    if (starred.length > 0) return starred;
    if (facts.language === 'python') {
      // A module-level name the index does not list: `X = other.X`, or bound in both branches
      // of `if`/`try` at the top level. The last binding is the one importers get.
      const { root } = await this.syntax(file, facts);
      const assigned = moduleAssignments(root, name).at(-1);
      if (assigned) return [{ path: file, ...assigned }];
      // `pkg.sub`: a submodule is an attribute of its package.
      const mod = graph.resolver.pythonModuleOf(file);
      const sub = mod ? graph.resolver.pythonModule(`${mod}.${name}`) : undefined;
      if (sub && file.endsWith('__init__.py')) return [{ path: sub, line: 1, col: 1 }];
    }
    if (facts.language === 'go') {
      // A Go package is its directory: the name may be defined in a sibling file.
      // Files the default build compiles first (by name, then by their constraint lines).
      const dir = file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '';
      // A test file sees the package's other files too, unless it is an external test package
      // (`package x_test`), which imports them.
      const test = file.endsWith('_test.go');
      const sibs = graph.resolver.filesIn(dir).filter((sib) => sib !== file && sib.endsWith('.go') && (test || !sib.endsWith('_test.go')));
      sibs.sort((x, y) => Number(!goFileNameMatches(x)) - Number(!goFileNameMatches(y)));
      const pkg = test ? goPackageName(facts.text) : undefined;
      let outside: Loc[] | undefined = own.length > 0 ? ownLocs : undefined;
      for (const sib of sibs) {
        const sf = await this.fileFacts(sib);
        const hit = sf?.symbols.filter((s) => s.name === name && s.container === undefined) ?? [];
        if (!sf || hit.length === 0) continue;
        if (test && !sib.endsWith('_test.go') && goPackageName(sf.text) !== pkg) continue;
        const locs = hit.map((s) => ({ path: sib, line: s.startLine, col: nameCol(sf, s.startLine, name) }));
        if (goFileMatches(sib, sf.text)) return locs;
        outside ??= locs;
      }
      if (outside) return outside;
    }
    return ownLocs;
  }

  /** The module files an import binding names, when the binding is a module (namespace). */
  private async moduleOfBinding(file: string, facts: FileFacts, local: string): Promise<string[] | undefined> {
    const graph = await this.deps.graph();
    for (const spec of facts.importSpecs) {
      if (spec.namespace === local) {
        const targets = graph.resolver.resolve(file, facts.language, spec);
        // Python `import a.b` binds `a`: the package, not the leaf module.
        if (facts.language === 'python' && !spec.source.startsWith('.') && spec.source.split('.')[0] === local && spec.source.includes('.')) {
          const top = graph.resolver.pythonModule(local);
          return top ? [top] : [];
        }
        return targets;
      }
      const n = spec.names?.find((x) => x.local === local);
      if (n && facts.language === 'python') {
        for (const t of graph.resolver.resolve(file, facts.language, spec)) {
          if (graph.resolver.pythonModuleOf(t)?.endsWith(`.${n.name}`)) return [t];
        }
      }
      // `import { z } from "zod/v3"` where that module exports a namespace named `z`.
      if (n && facts.language !== 'python') {
        for (const t of graph.resolver.resolve(file, facts.language, spec)) {
          const modules = await this.namespaceExportOf(t, n.name, 0);
          if (modules.length > 0) return modules;
        }
      }
    }
    return undefined;
  }

  /**
   * The module files a TS/JS file exports under `name` as a namespace: `export * as name from`,
   * or `import * as name from …` plus `export { name }`, followed through re-exports.
   */
  private async namespaceExportOf(file: string, name: string, depth: number): Promise<string[]> {
    if (depth > MAX_DEPTH) return [];
    const facts = await this.fileFacts(file);
    if (!facts || facts.language === 'python') return [];
    const graph = await this.deps.graph();
    let clause: ReadonlyMap<string, string> | undefined;
    for (const spec of facts.importSpecs) {
      if (spec.namespace === name) {
        clause ??= exportClause((await this.syntax(file, facts)).root);
        if (spec.reexport || [...clause.values()].includes(name)) {
          const targets = graph.resolver.resolve(file, facts.language, spec);
          if (targets.length > 0) return targets;
        }
      }
      const n = spec.names?.find((x) => x.local === name);
      if (n && spec.reexport) {
        for (const t of graph.resolver.resolve(file, facts.language, spec)) {
          const found = await this.namespaceExportOf(t, n.name, depth + 1);
          if (found.length > 0) return found;
        }
      }
    }
    return this.throughStarImports(file, facts, (t) => this.namespaceExportOf(t, name, depth + 1));
  }

  /** The first non-empty answer of `look` over the modules `file` star-imports (`export * from`, `from x import *`). */
  private async throughStarImports<T>(file: string, facts: FileFacts, look: (target: string) => Promise<T[]>): Promise<T[]> {
    const graph = await this.deps.graph();
    for (const spec of facts.importSpecs) {
      if (!spec.star) continue;
      for (const t of graph.resolver.resolve(file, facts.language, spec)) {
        if (t === file) continue;
        const found = await look(t);
        if (found.length > 0) return found;
      }
    }
    return [];
  }

  /** `export { local as name }` (without `from`) in a TS/JS file: where `local` is declared at the top level. */
  private async exportClauseOf(file: string, facts: FileFacts, name: string): Promise<Loc[]> {
    if (!isTsFamily(facts.language)) return [];
    if (!facts.text.includes(`as ${name}`)) return [];
    const { root } = await this.syntax(file, facts);
    const local = exportClause(root).get(name);
    if (!local || local === name) return [];
    const decl = topLevelDeclaration(root, local);
    return decl ? [{ path: file, line: decl.line, col: decl.col }] : [];
  }

  /** Members named `member` of the class declared at `cls` (its name's line), then of its bases. */
  private async membersOf(file: string, clsLine: number, clsName: string, member: string, depth: number, skipOwn = false): Promise<Loc[]> {
    if (depth > MAX_DEPTH) return [];
    const facts = await this.fileFacts(file);
    if (!facts) return [];
    const { root } = await this.syntax(file, facts);
    const node = classAt(root, clsLine, clsName);
    const found = node
      ? { own: skipOwn ? [] : classMembers(node, member).map((p) => ({ path: file, ...p })), bases: classInfo(node)?.bases ?? [] }
      : { own: [] as Loc[], bases: [] as ClassInfo['bases'] };
    // Python: `self.ptr = …` only assigns; when a base defines `ptr` as a property, the
    // assignment runs its setter, and the property is the definition (as pyright answers).
    const onlyAssigned = facts.language === 'python' && found.own.length > 0 && found.bases.length > 0 && found.own.every((p) => isAttributeTarget(root, p));
    if (found.own.length > 0 && !onlyAssigned) return found.own;
    for (const b of found.bases) {
      const defs = await this.resolveAt(file, b.line, b.col, depth + 1);
      for (const d of defs.locs) {
        const df = await this.fileFacts(d.path);
        const clsDef = df?.symbols.find((s) => s.name === b.name && s.startLine === d.line);
        if (!df || !clsDef) continue;
        const inherited = await this.membersOf(d.path, d.line, b.name, member, depth + 1);
        if (inherited.length === 0) continue;
        if (!onlyAssigned) return inherited;
        const where = inherited[0]!.path;
        const wf = await this.fileFacts(where);
        if (!wf) continue;
        const baseRoot = (await this.syntax(where, wf)).root;
        const properties = inherited.filter((p) => p.path === where && isPythonProperty(baseRoot, p));
        if (properties.length > 0) return properties;
      }
    }
    return found.own;
  }

  /**
   * Members named `member` of the Go type `typeName` as written in `file` (`T` in its package,
   * `pkg.T` through the file's imports): its methods and fields, in the type's package, then
   * those promoted from the types it embeds, nearest first.
   */
  private async goMembersOf(file: string, facts: FileFacts, typeName: string, member: string, depth: number): Promise<Loc[]> {
    if (depth > MAX_DEPTH) return [];
    const dot = typeName.lastIndexOf('.');
    const name = typeName.slice(dot + 1);
    let types: Loc[] = [];
    if (dot > 0) {
      for (const m of (await this.moduleOfBinding(file, facts, typeName.slice(0, dot))) ?? []) types.push(...(await this.exportsOf(m, name, depth + 1)));
    } else {
      types = await this.freeName(file, facts, name, depth + 1);
    }
    const out: Loc[] = [];
    for (const t of types) {
      const dir = t.path.slice(0, t.path.lastIndexOf('/') + 1);
      const own = this.deps.store
        .findSymbols(member, { limit: 500 })
        .filter((s) => s.name === member && s.path.slice(0, s.path.lastIndexOf('/') + 1) === dir && s.container?.split('.').pop() === name);
      for (const s of own) {
        const sf = await this.fileFacts(s.path);
        out.push({ path: s.path, line: s.startLine, col: sf ? nameCol(sf, s.startLine, member) : 1 });
      }
      if (out.length > 0) return out;
      // Promoted through an embedded field: the embedded types are the `inherit` references
      // inside the type's declaration.
      const tf = await this.fileFacts(t.path);
      const decl = tf?.symbols.find((s) => s.name === name && s.startLine === t.line);
      const fileId = this.deps.store.getFile(t.path)?.id;
      if (!tf || !decl || fileId === undefined) continue;
      for (const ref of this.deps.store.getRefs(fileId)) {
        if (ref.kind !== 'inherit' || ref.line < decl.startLine || ref.line > decl.endLine || ref.name === name) continue;
        // `sync.Mutex` embedded: the package qualifier sits just before the name.
        const qualifier = /(\w+)\.$/.exec((tf.lines[ref.line - 1] ?? '').slice(0, ref.col - 1))?.[1];
        const embedded = await this.goMembersOf(t.path, tf, qualifier ? `${qualifier}.${ref.name}` : ref.name, member, depth + 1);
        if (embedded.length > 0) return embedded;
      }
    }
    return out;
  }

  /** A class named `name` visible from `file`: its own, imported, or the only one indexed. */
  private async classByName(file: string, facts: FileFacts, name: string, depth: number): Promise<Loc[]> {
    const own = facts.symbols.filter((s) => s.name === name && s.container === undefined);
    if (own.length > 0) return own.map((s) => ({ path: file, line: s.startLine, col: nameCol(facts, s.startLine, name) }));
    const graph = await this.deps.graph();
    for (const spec of facts.importSpecs) {
      const n = spec.names?.find((x) => x.local === name);
      if (!n) continue;
      for (const t of graph.resolver.resolve(file, facts.language, spec)) {
        const found = await this.exportsOf(t, n.name, depth + 1);
        if (found.length > 0) return found;
      }
    }
    const all = this.deps.store.findSymbols(name).filter((s) => KIND_RANK[s.kind] === 0);
    return all.length === 1 ? all.map((s) => ({ path: s.path, line: s.startLine, col: 1 })) : [];
  }

  /**
   * The index's resolution of the identifier at a position. `locs` are the definitions it is
   * sure of (scope, import, class member); `candidates` are name matches when it is not.
   */
  private resolved = new Map<string, Promise<Resolution>>();
  private resolving = new Set<string>();

  async resolveAt(file: string, line: number, col: number, depth = 0): Promise<Resolution> {
    const key = `${file}:${line}:${col}`;
    // A resolution that needs itself (a class whose base is itself, an import cycle) ends
    // here with nothing instead of waiting on its own promise.
    if (this.resolving.has(key) || depth > MAX_DEPTH) return { name: undefined, locs: [], how: 'a resolution cycle', candidates: [] };
    let r = this.resolved.get(key);
    if (!r) {
      this.resolving.add(key);
      r = this.resolveUncached(file, line, col, depth).finally(() => this.resolving.delete(key));
      this.resolved.set(key, r);
    }
    return r;
  }

  private async resolveUncached(file: string, line: number, col: number, depth: number): Promise<Resolution> {
    const r = await this.resolveSyntax(file, line, col, depth);
    if (r.call && r.locs.length > 1) r.locs = await orderOverloads(this.files, r.locs, r.call);
    if (r.locs.length === 0 && r.candidates.length > 1) {
      if (r.candidates.some((c) => c.kind === 'field')) r.candidates = await narrowByDiscriminant(this.files, file, line, col, r.candidates);
      if (r.call) r.candidates = await orderCandidateOverloads(this.files, r.candidates, r.call);
    }
    return r;
  }


  private async resolveSyntax(file: string, line: number, col: number, depth: number): Promise<Resolution & { call?: CallShape }> {
    const a = await this.analyze(file, line, col);
    if (!a) return { name: undefined, locs: [], how: 'the file cannot be parsed', candidates: [] };
    const t = a.target;
    if (!t) return { name: undefined, locs: [], how: 'no identifier at this position', candidates: [] };
    const facts = a.facts;
    if (a.call) {
      const inner = await this.resolveTarget(file, t, a, facts, depth);
      return { ...inner, call: a.call };
    }
    return this.resolveTarget(file, t, a, facts, depth);
  }

  // eslint-disable-next-line max-lines-per-function -- one case per kind of target (local, import, member, qualified), in the order a name resolves
  private async resolveTarget(file: string, t: Target, a: { line: number; col: number; call?: CallShape }, facts: FileFacts, depth: number): Promise<Resolution> {
    const receiverName = t.kind === 'member' && t.receiver.kind === 'name' ? t.receiver.name : t.kind === 'member' && t.receiver.kind === 'typed' ? t.receiver.typeName : undefined;
    const none = (how: string): Resolution => ({
      name: t.name,
      locs: [],
      how,
      candidates: this.nameCandidates(t.name, file, { member: t.kind === 'member', receiver: receiverName, call: a.call !== undefined }),
    });
    if (facts.language === 'go' && t.kind !== 'declaration') {
      const go = await this.goTypes.definitionAt(file, a.line, a.col);
      if (go) return { name: t.name, locs: go.locs, how: go.how, candidates: [] };
    }
    switch (t.kind) {
      case 'declaration':
        return { name: t.name, locs: [{ path: file, line: t.line, col: t.col }], how: 'the position is the declaration', candidates: [] };
      case 'local':
        return { name: t.name, locs: [{ path: file, line: t.binding.line, col: t.binding.col }], how: 'bound in an enclosing scope', candidates: [] };
      case 'import': {
        const locs = await this.followImportBinding(file, facts, t.name, depth, t.imported === true, t.binding.line);
        if (locs.length > 0) return { name: t.name, locs, how: 'followed the import', candidates: [] };
        // The module is in the workspace, but the index finds no definition of the name in it
        // (a name bound by code the index does not read as a definition): say so, with the
        // name's candidates, rather than claim the module is elsewhere.
        const statement = { path: file, line: t.binding.line, col: t.binding.col };
        if (await this.importResolves(file, facts, t.name)) {
          const how = `imported from a workspace module in which the index finds no definition of ${t.name}`;
          const guess = none(`${how}; matched by name`);
          return guess.candidates.length > 0 ? guess : { name: t.name, locs: [statement], how, candidates: [] };
        }
        // An import of something outside the workspace: the import statement is what we know.
        return { name: t.name, locs: [statement], how: 'imported from outside the workspace', candidates: [] };
      }
      case 'free': {
        const locs = await this.freeName(file, facts, t.name, depth);
        if (locs.length > 0) return { name: t.name, locs, how: 'defined in the file, its package, or a star import', candidates: [] };
        return none('not bound in the file; matched by name');
      }
      case 'member': {
        const r = t.receiver;
        if (r.kind === 'self' || r.kind === 'super') {
          const locs = await this.membersOf(file, r.cls.line, r.cls.name, t.name, depth, r.kind === 'super');
          if (locs.length > 0) return { name: t.name, locs, how: `member of ${r.cls.name} or its bases`, candidates: [] };
          return none(`no member ${t.name} found in ${r.cls.name} or its bases; matched by name`);
        }
        if (r.kind === 'name') {
          const modules = r.target.kind === 'import' || r.target.kind === 'free' ? await this.moduleOfBinding(file, facts, r.name) : undefined;
          if (modules && modules.length > 0) {
            for (const m of modules) {
              const locs = await this.exportsOf(m, t.name, depth + 1);
              if (locs.length > 0) return { name: t.name, locs, how: `exported by module ${r.name}`, candidates: [] };
            }
            return none(`module ${r.name} does not define ${t.name}; matched by name`);
          }
          // The receiver is a class (a static member, Python `Cls.attr`).
          const recvLocs =
            r.target.kind === 'free'
              ? await this.classByName(file, facts, r.name, depth + 1)
              : (await this.resolveAt(file, ...this.posOfTarget(r.target), depth + 1)).locs;
          for (const d of recvLocs) {
            const df = await this.fileFacts(d.path);
            const cls = df?.symbols.find((s) => s.startLine === d.line && KIND_RANK[s.kind] === 0);
            if (!cls) continue;
            const locs = await this.membersOf(d.path, d.line, cls.name, t.name, depth + 1);
            if (locs.length > 0) return { name: t.name, locs, how: `member of ${cls.name}`, candidates: [] };
          }
          // The receiver's declaration states its type: `const p: TimeoutProvider = …`
          // in another module, Python `register = template.Library()`, Go `t *testing.T`.
          for (const d of recvLocs) {
            const df = await this.fileFacts(d.path);
            const typeName = df ? assignedType((await this.syntax(d.path, df)).root, d.line, d.col, df.language) : undefined;
            if (!df || !typeName) continue;
            if (df.language === 'go') {
              const locs = await this.goMembersOf(d.path, df, typeName, t.name, depth + 1);
              if (locs.length > 0) return { name: t.name, locs, how: `member of ${typeName}, the type ${r.name} is declared with`, candidates: [] };
              continue;
            }
            for (const c of await this.classByName(d.path, df, typeName, depth + 1)) {
              const locs = await this.membersOf(c.path, c.line, typeName, t.name, depth + 1);
              if (locs.length > 0) return { name: t.name, locs, how: `member of ${typeName}, the type ${r.name} is declared or constructed with`, candidates: [] };
            }
          }
          return none(`the type of ${r.name} is unknown without a language server; matched by name`);
        }
        if (r.kind === 'typed') {
          for (const c of await this.classByName(file, facts, r.typeName, depth)) {
            const locs = await this.membersOf(c.path, c.line, r.typeName, t.name, depth + 1);
            if (locs.length > 0) return { name: t.name, locs, how: `member of ${r.typeName}, the declared type`, candidates: [] };
          }
          return none(`no member ${t.name} found in ${r.typeName}; matched by name`);
        }
        if (r.kind === 'unknown' && /^[\w$]+(\.[\w$]+)+$/.test(r.text)) {
          // `z.iso.datetime()`: a namespace exported by a namespace.
          const [head, ...rest] = r.text.split('.');
          let modules = (await this.moduleOfBinding(file, facts, head!)) ?? [];
          for (const segment of rest) {
            const next: string[] = [];
            for (const m of modules) next.push(...(await this.namespaceExportOf(m, segment, depth + 1)));
            modules = next;
          }
          for (const m of modules) {
            const locs = await this.exportsOf(m, t.name, depth + 1);
            if (locs.length > 0) return { name: t.name, locs, how: `exported by module ${r.text}`, candidates: [] };
          }
        }
        return none('the receiver is an expression whose type is unknown without a language server; matched by name');
      }
    }
  }

  private posOfTarget(t: Exclude<Target, { kind: 'member' | 'free' }>): [number, number] {
    if (t.kind === 'local' || t.kind === 'import') return [t.binding.line, t.binding.col];
    return [t.line, t.col];
  }

  /**
   * Where an import binding leads: by its local name, or (`byExportedName`, the `a` of
   * `import { a as b }` and `export { a } from`) by the name the module exports, in the
   * statement at `atLine` when given (`export { default as ar } from "./ar.js"` and
   * `export { default as mk } from "./mk.js"` both name `default`).
   */
  async followImportBinding(file: string, facts: FileFacts, local: string, depth: number, byExportedName = false, atLine?: number): Promise<Loc[]> {
    const graph = await this.deps.graph();
    const statement = atLine === undefined ? undefined : facts.importSpecs.filter((sp) => sp.line <= atLine).at(-1);
    for (const spec of facts.importSpecs) {
      if (byExportedName) {
        const n = spec.names?.find((x) => x.name === local);
        if (!n || (statement && spec !== statement)) continue;
        for (const t of graph.resolver.resolve(file, facts.language, spec)) {
          const found = n.name === 'default' ? await this.defaultExportOf(t) : await this.exportsOf(t, n.name, depth + 1);
          if (found.length > 0) return found;
        }
        continue;
      }
      if (spec.namespace === local) {
        const targets = await this.moduleOfBinding(file, facts, local);
        return (targets ?? []).slice(0, 1).map((p) => ({ path: p, line: 1, col: 1 }));
      }
      const n = spec.names?.find((x) => x.local === local);
      if (!n) continue;
      const targets = graph.resolver.resolve(file, facts.language, spec);
      for (const t of targets) {
        if (facts.language === 'python' && graph.resolver.pythonModuleOf(t)?.endsWith(`.${n.name}`) && t !== targets[0]) return [{ path: t, line: 1, col: 1 }];
        const found = n.name === 'default' ? await this.defaultExportOf(t) : await this.exportsOf(t, n.name, depth + 1);
        if (found.length > 0) return found;
      }
    }
    return [];
  }

  /** Whether the import statement binding `local` names a module inside the workspace. */
  private async importResolves(file: string, facts: FileFacts, local: string): Promise<boolean> {
    const graph = await this.deps.graph();
    return facts.importSpecs.some(
      (spec) => (spec.namespace === local || spec.names?.some((n) => n.local === local || n.name === local)) && graph.resolver.resolve(file, facts.language, spec).length > 0,
    );
  }

  /** A module's `export default …`: the name of a default class or function, else the statement. */
  private async defaultExportOf(file: string): Promise<Loc[]> {
    const f = await this.fileFacts(file);
    const m = f?.lines.findIndex((l) => /^export\s+default\b/.test(l)) ?? -1;
    if (!f || m < 0) return [];
    const name = /\b(?:class|function)\s+([\w$]+)/.exec(f.lines[m] ?? '')?.[1];
    return [{ path: file, line: m + 1, col: name ? nameCol(f, m + 1, name) : 1 }];
  }

  async freeName(file: string, facts: FileFacts, name: string, depth: number): Promise<Loc[]> {
    const own = facts.symbols.filter((s) => s.name === name && s.container === undefined);
    if (own.length > 0) return own.map((s) => ({ path: file, line: s.startLine, col: nameCol(facts, s.startLine, name) }));
    if (facts.language === 'go') {
      const pkg = await this.findExport(file, name, depth + 1);
      if (pkg.length > 0) return pkg;
    }
    return this.throughStarImports(file, facts, (t) => this.exportsOf(t, name, depth + 1));
  }

  /**
   * Indexed definitions named `name`, likeliest first: in the file itself, then by how many
   * leading directories they share with it (a use in `v4/locales/` finds `v4/core/` before
   * `v3/`); members for member accesses; owners named like the receiver (`subscriber.next`
   * → `Subscriber.next`, `issue.maximum` → a member of `$ZodIssueTooBig`); functions rather
   * than fields for calls; non-test files.
   */
  private nameCandidates(name: string, file: string, use: { member: boolean; receiver: string | undefined; call: boolean }): SymbolRow[] {
    const rows = this.deps.store.findSymbols(name, { limit: 200 }).filter((s) => s.name === name);
    const recv = use.receiver?.replace(/^_+/, '').toLowerCase();
    const owner = (s: SymbolRow) => s.container?.split(/[.:#]/).pop()?.toLowerCase();
    const receiverScore = (s: SymbolRow): number => {
      const o = owner(s);
      if (recv === undefined || o === undefined) return 0;
      if (o.length > 2 && (recv === o || recv.endsWith(o))) return -30;
      return recv.length >= 4 && o.includes(recv) ? -10 : 0;
    };
    const dirs = file.split('/').slice(0, -1);
    const shared = (p: string): number => {
      const d = p.split('/');
      let k = 0;
      while (k < d.length - 1 && k < dirs.length && d[k] === dirs[k]) k++;
      return k;
    };
    const distance = (s: SymbolRow): number => (s.path === file ? 0 : 20 - 3 * Math.min(shared(s.path), 4));
    const score = (s: SymbolRow) =>
      receiverScore(s) +
      distance(s) +
      (use.call && s.kind === 'field' ? 8 : 0) +
      (use.member === (s.container !== undefined) ? 0 : 5) +
      (KIND_RANK[s.kind] ?? 5) +
      (/(^|\/)(tests?|__tests__|testing)\/|_test\.|\.test\.|\.spec\./.test(s.path) ? 8 : 0);
    return rows.sort((a, b) => score(a) - score(b) || (a.path < b.path ? -1 : a.path > b.path ? 1 : a.startLine - b.startLine));
  }
  private ancestorCache = new Map<string, Promise<string[]>>();

  /**
   * `path:line` of the members named `name` in every ancestor (extends and implements,
   * transitively) of the class that declares the member at `file:line`; cached per call.
   */
  ancestorMembers(file: string, line: number, name: string): Promise<string[]> {
    return memo(this.ancestorCache, `${file}:${line}:${name}`, () => this.findAncestorMembers(file, line, name));
  }

  private async findAncestorMembers(file: string, line: number, name: string): Promise<string[]> {
    const facts = await this.fileFacts(file);
    const sym = facts?.symbols.find((s) => s.name === name && s.startLine === line);
    if (!facts || !sym?.container) return [];
    const clsName = sym.container.split('.').pop()!;
    const cls = facts.symbols.find((s) => s.name === clsName && KIND_RANK[s.kind] === 0 && s.startLine <= line && s.endLine >= line);
    if (!cls) return [];
    const out: string[] = [];
    const seen = new Set<string>();
    const walk = async (path: string, clsLine: number, cname: string, depth: number): Promise<void> => {
      if (depth > MAX_DEPTH || seen.has(`${path}:${clsLine}`)) return;
      seen.add(`${path}:${clsLine}`);
      const f = await this.fileFacts(path);
      const node = f ? classAt((await this.syntax(path, f)).root, clsLine, cname) : undefined;
      for (const b of (node && classInfo(node)?.bases) ?? []) {
        for (const d of (await this.resolveAt(path, b.line, b.col, depth + 1)).locs) {
          const df = await this.fileFacts(d.path);
          if (!df?.symbols.some((s) => s.name === b.name && s.startLine === d.line)) continue;
          const base = classAt((await this.syntax(d.path, df)).root, d.line, b.name);
          if (base) for (const m of classMembers(base, name)) out.push(`${d.path}:${m.line}`);
          await walk(d.path, d.line, b.name, depth + 1);
        }
      }
    };
    await walk(file, cls.startLine, clsName, 0);
    return out;
  }
}

/** The package clause's name of a Go file. */
function goPackageName(text: string): string | undefined {
  return /^package\s+(\w+)/m.exec(text)?.[1];
}

/** `export { a as b, c }` clauses (without `from`) at a TS/JS file's top level: exported name → local name. */
function exportClause(root: Node): Map<string, string> {
  const out = new Map<string, string>();
  for (const st of root.namedChildren) {
    if (st?.type !== 'export_statement' || st.childForFieldName('source')) continue;
    for (const c of st.namedChildren) {
      if (c?.type !== 'export_clause') continue;
      for (const spec of c.namedChildren) {
        const local = spec?.type === 'export_specifier' ? spec.childForFieldName('name')?.text : undefined;
        if (local) out.set(spec!.childForFieldName('alias')?.text ?? local, local);
      }
    }
  }
  return out;
}

/** The name of a top-level TS/JS declaration (`const x`, `function x`, `class x`), exported or not. */
function topLevelDeclaration(root: Node, name: string): { line: number; col: number } | undefined {
  for (const top of root.namedChildren) {
    const st = top?.type === 'export_statement' ? top.childForFieldName('declaration') : top;
    if (!st) continue;
    const decls = st.type === 'lexical_declaration' || st.type === 'variable_declaration' ? st.namedChildren : [st];
    for (const d of decls) {
      const n = d?.childForFieldName('name');
      if (n?.text === name) return { line: n.startPosition.row + 1, col: n.startPosition.column + 1 };
    }
  }
  return undefined;
}

/**
 * Assignments to `name` at a Python module's top level, also inside top-level `if`/`else` and
 * `try`/`except` blocks, in file order.
 */
function moduleAssignments(root: Node, name: string): Array<{ line: number; col: number }> {
  const out: Array<{ line: number; col: number }> = [];
  const visit = (block: Node, depth: number): void => {
    for (const st of block.namedChildren) {
      if (!st) continue;
      if (st.type === 'expression_statement') {
        const a = st.namedChildren[0];
        const left = a?.type === 'assignment' ? a.childForFieldName('left') : undefined;
        if (left?.type === 'identifier' && left.text === name) out.push({ line: left.startPosition.row + 1, col: left.startPosition.column + 1 });
      } else if (depth < 4 && /^(if_statement|else_clause|elif_clause|try_statement|except_clause|finally_clause|block)$/.test(st.type)) {
        visit(st, depth + 1);
      }
    }
  };
  visit(root, 0);
  return out;
}

/** Whether the name at a position is the attribute of an assignment target (`self.x = …`). */
function isAttributeTarget(root: Node, p: { line: number; col: number }): boolean {
  const n = root.descendantForPosition({ row: p.line - 1, column: p.col - 1 });
  return n?.parent?.type === 'attribute';
}

/** Whether the name at a position is a Python method decorated `@property` or `@x.setter`. */
function isPythonProperty(root: Node, p: { line: number; col: number }): boolean {
  const fn = root.descendantForPosition({ row: p.line - 1, column: p.col - 1 })?.parent;
  const decorated = fn?.type === 'function_definition' ? fn.parent : undefined;
  if (decorated?.type !== 'decorated_definition') return false;
  return decorated.namedChildren.some((d) => d?.type === 'decorator' && /^@\s*(property|[\w.]+\.(setter|getter|deleter))\s*$/.test(d.text));
}
