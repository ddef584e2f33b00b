/**
 * Definitions and references through a provider chain, each answer carrying its provenance:
 *
 * 1. `lsp`: a language server (exact, type-aware), when one runs for the file's language and
 *    answers within the timeout;
 * 2. `ctags`: Universal Ctags' tags for the name, when installed: name matches only, so they
 *    are candidates that the next step confirms or overrides;
 * 3. `graph`: the index's own resolution: the syntax tree of the file (locals scopes, member
 *    receivers), imports resolved to files, re-exports followed, class members and base
 *    classes searched; then, for names no scope binds, every indexed definition of the name;
 * 4. `search`: the hybrid search, when nothing above knows the name.
 *
 * Only LSP answers are `exact`. A fallback answer says how it was resolved (`how`) and how
 * sure it is (`confidence`); an ambiguous name lists every candidate, ranked, and is never
 * silently narrowed to one.
 */
import * as path from 'node:path';
import { VltError } from '../errors';
import type { Logger, WorkspaceFs } from '../ports';
import type { CodeParser } from '../parse/parser';
import { isTsFamily, languageForPath } from '../parse/languages';
import type { IndexStore, SymbolRow } from '../store/store';
import type { ImportSpec, LanguageId, SymbolDef } from '../types';
import type { Node } from 'web-tree-sitter';
import type { CodeGraph } from './graph';
import type { LanguageServers, SourceRange } from './lsp';
import { analyzePosition, arityAt, assignedType, classAt, classInfo, classMembers, identifiersNamed, LocalScopes, type CallShape, type ClassInfo, type Target } from './syntax';

export type Provenance = 'lsp' | 'ctags' | 'graph' | 'search';

export interface NavLocation {
  path: string;
  line: number;
  col: number;
  /** The definition's kind and signature, when the index knows them. */
  kind?: string;
  signature?: string;
  provenance: Provenance;
  exact: boolean;
  confidence: 'high' | 'medium' | 'low';
  /** How this location was found, in a few words. */
  how: string;
}

export interface ProviderRun {
  provider: Provenance;
  status: 'answered' | 'empty' | 'skipped' | 'failed';
  reason?: string;
  ms: number;
}

export interface NavAnswer {
  query: string;
  /** The identifier asked about. */
  symbol: string;
  /** Definitions, or references for `references`, best first. */
  locations: NavLocation[];
  /** Several candidates and nothing to choose between them: all are listed. */
  ambiguous: boolean;
  /** Names that exist, when the asked one does not (prefix and edit-distance matches). */
  suggestions?: string[];
  /** What the caller should know: a server not ready, a fallback that answered, truncation. */
  notes: string[];
  providers: ProviderRun[];
  /** For references: the definition they were gathered for. */
  definition?: NavLocation;
  truncated?: boolean;
}

/** A Universal Ctags tag, as the ctags port returns it. */
export interface Tag {
  name: string;
  path: string;
  line: number;
  kind: string;
  scope?: string;
}

/** Universal Ctags, reached by the host (it spawns the program). */
export interface TagsProvider {
  /** Why ctags cannot answer, or undefined when it can. */
  unavailable(): Promise<string | undefined>;
  lookup(name: string): Promise<Tag[]>;
}

export interface NavigatorDeps {
  root: string;
  fs: WorkspaceFs;
  store: IndexStore;
  graph(): Promise<CodeGraph>;
  parser(): Promise<CodeParser>;
  logger: Logger;
  lsp?: LanguageServers;
  tags?: TagsProvider;
  /** Every distinct definition name, when the host keeps them (spares a table scan per navigator). */
  symbolNames?(): readonly string[];
  /** Top search hits for a name: `path` and 1-based `line`. */
  search?(query: string): Promise<Array<{ path: string; line: number; symbol: string | null }>>;
}

export interface NavOptions {
  /** Skip the language server (the fallback chain alone, as `--no-lsp` and the benchmark do). */
  noLsp?: boolean;
  /** Upper bound for the LSP step. */
  lspTimeoutMs?: number;
  /** For references: the most locations returned. */
  limit?: number;
  /**
   * For references resolved by the index: stop after this long and answer with what was found,
   * saying that the list is partial (files nearest the definition are resolved first).
   */
  budgetMs?: number;
  signal?: AbortSignal;
}

interface Loc {
  path: string;
  line: number;
  col: number;
}

type Query = { kind: 'position'; path: string; line: number; col: number } | { kind: 'name'; name: string };

/** `file:line:col` (also `file:line:col` with a Windows drive letter) or a symbol name. */
export function parseNavQuery(q: string): Query {
  const trimmed = q.trim();
  if (trimmed.length === 0) throw new VltError('USAGE', 'give a symbol name or FILE:LINE:COL');
  const m = /^(.+):(\d+):(\d+)$/.exec(trimmed);
  if (m?.[1] && m[2] && m[3]) return { kind: 'position', path: m[1], line: Number(m[2]), col: Number(m[3]) };
  if (/^(.+\.[\w]+):(\d+)$/.test(trimmed)) throw new VltError('USAGE', `"${trimmed}" has a line but no column; give FILE:LINE:COL`);
  return { kind: 'name', name: trimmed };
}

const MAX_DEPTH = 6;
/** Syntax trees kept open during one call; a reference search over a big package stays bounded. */
const MAX_OPEN_TREES = 128;

interface Resolution {
  name: string | undefined;
  locs: Loc[];
  how: string;
  candidates: SymbolRow[];
}

function levenshtein(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      cur.push(v);
      if (v < best) best = v;
    }
    if (best > max) return max + 1;
    prev = cur;
  }
  return prev[b.length]!;
}

const KIND_RANK: Record<string, number> = { class: 0, interface: 0, struct: 0, trait: 0, enum: 0, type: 1, function: 1, method: 2, module: 2, constant: 3, field: 3, variable: 4, heading: 9 };

interface FileFacts {
  text: string;
  language: LanguageId;
  symbols: SymbolDef[];
  importSpecs: ImportSpec[];
  lines: string[];
}

export class Navigator {
  /** Per-call caches: parsed facts and export lookups of the files a resolution touches. */
  private facts = new Map<string, Promise<FileFacts | undefined>>();
  private exportsCache = new Map<string, Promise<Loc[]>>();
  /** Export lookups in progress, by key: a lookup that reaches its own key is a cycle. */
  private readonly exportsPending = new Set<string>();

  constructor(private readonly deps: NavigatorDeps) {}

  // ---- file access -------------------------------------------------------------------------

  /** Workspace-relative POSIX path of a user-given path; refuses paths outside the workspace. */
  relPath(p: string): string {
    const abs = path.resolve(this.deps.root, p);
    const rel = path.relative(this.deps.root, abs);
    if (rel.startsWith('..') || path.isAbsolute(rel)) throw new VltError('PATH_OUTSIDE_WORKSPACE', `${p} is outside the workspace ${this.deps.root}`);
    return rel.split(path.sep).join('/');
  }

  private fileFacts(rel: string): Promise<FileFacts | undefined> {
    return memo(this.facts, rel, () => this.loadFacts(rel));
  }

  private async loadFacts(rel: string): Promise<FileFacts | undefined> {
    const language = languageForPath(rel);
    if (!language || language === 'markdown') return undefined;
    let bytes: Uint8Array;
    try {
      bytes = await this.deps.fs.readFile(path.join(this.deps.root, rel));
    } catch {
      return undefined;
    }
    const text = new TextDecoder().decode(bytes);
    const parser = await this.deps.parser();
    let parsed;
    try {
      parsed = parser.parse(rel, language, text);
    } catch {
      return undefined;
    }
    return { text, language, symbols: parsed.symbols, importSpecs: parsed.importSpecs, lines: text.split('\n') };
  }

  /** The column of `name` on a 1-based line, or 1. */
  private nameCol(facts: FileFacts, line: number, name: string): number {
    const text = facts.lines[line - 1] ?? '';
    const re = new RegExp(`(?<![\\w$])${name.replace(/[$]/g, '\\$')}(?![\\w$])`);
    const m = re.exec(text);
    return m ? m.index + 1 : 1;
  }

  /**
   * Syntax trees and scope tables of the files a call touches, kept for the call (a reference
   * search resolves many uses per file) and freed at its end, or when too many are open.
   */
  private trees = new Map<string, { root: Node; scopes: LocalScopes | undefined; dispose(): void }>();

  private async syntax(rel: string, facts: FileFacts): Promise<{ root: Node; scopes: LocalScopes | undefined }> {
    const hit = this.trees.get(rel);
    if (hit) return hit;
    const parser = await this.deps.parser();
    const t = parser.openTree(facts.language, facts.text);
    const entry = { root: t.root, scopes: t.locals ? new LocalScopes(t.root, t.locals, facts.language) : undefined, dispose: t.dispose };
    if (this.trees.size >= MAX_OPEN_TREES) {
      const [oldest, old] = this.trees.entries().next().value as [string, { dispose(): void }];
      old.dispose();
      this.trees.delete(oldest);
    }
    this.trees.set(rel, entry);
    return entry;
  }

  /** Frees every cached tree and forgets per-call caches. */
  private reset(): void {
    for (const t of this.trees.values()) t.dispose();
    this.trees.clear();
    this.facts.clear();
    this.exportsCache.clear();
    this.resolved.clear();
    this.ancestorCache.clear();
  }

  private async analyze(rel: string, line: number, col: number): Promise<{ target: Target | undefined; line: number; col: number; call?: CallShape; facts: FileFacts } | undefined> {
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
    if (own.length > 0) return own.map((s) => ({ path: file, line: s.startLine, col: this.nameCol(facts, s.startLine, name) }));
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
      const dir = file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '';
      for (const sib of graph.resolver.filesIn(dir)) {
        if (sib === file || !sib.endsWith('.go') || sib.endsWith('_test.go') !== file.endsWith('_test.go')) continue;
        const sf = await this.fileFacts(sib);
        const hit = sf?.symbols.filter((s) => s.name === name && s.container === undefined) ?? [];
        if (sf && hit.length > 0) return hit.map((s) => ({ path: sib, line: s.startLine, col: this.nameCol(sf, s.startLine, name) }));
      }
    }
    return [];
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

  /** A class named `name` visible from `file`: its own, imported, or the only one indexed. */
  private async classByName(file: string, facts: FileFacts, name: string, depth: number): Promise<Loc[]> {
    const own = facts.symbols.filter((s) => s.name === name && s.container === undefined);
    if (own.length > 0) return own.map((s) => ({ path: file, line: s.startLine, col: this.nameCol(facts, s.startLine, name) }));
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
    if (r.call && r.locs.length > 1) r.locs = await this.orderOverloads(r.locs, r.call);
    if (r.locs.length === 0 && r.candidates.length > 1) {
      if (r.candidates.some((c) => c.kind === 'field')) r.candidates = await this.narrowByDiscriminant(file, line, col, r.candidates);
      if (r.call) r.candidates = await this.orderCandidateOverloads(r.candidates, r.call);
    }
    return r;
  }

  /**
   * Discriminated unions, read off the code around a member access: in
   * `switch (issue.code) { case "too_big": … issue.maximum }` and after
   * `if (x.format === "regex")`, candidates whose owner declares the discriminant with that
   * literal (`code: "too_big"`) come first. For the discriminant itself
   * (`switch (issue.code)`), the declarations typed by one of the case labels come first.
   */
  private async narrowByDiscriminant(file: string, line: number, col: number, candidates: SymbolRow[]): Promise<SymbolRow[]> {
    const facts = await this.fileFacts(file);
    if (!facts || (facts.language !== 'typescript' && facts.language !== 'tsx')) return candidates;
    const { root } = await this.syntax(file, facts);
    const access = root.descendantForPosition({ row: line - 1, column: col - 1 })?.parent;
    const receiver = access?.type === 'member_expression' ? access.childForFieldName('object')?.text : undefined;
    if (!access || !receiver) return candidates;
    // The use is the switch subject: `switch (issue.code)`.
    const subject = access.parent?.type === 'parenthesized_expression' ? access.parent.parent : undefined;
    const labels = subject?.type === 'switch_statement' ? caseLabels(subject) : undefined;
    const wanted = labels ? [] : discriminantsAround(access, receiver);
    if (!labels && wanted.length === 0) return candidates;
    const good = new Set<SymbolRow>();
    for (const c of candidates) {
      if (c.kind !== 'field') continue;
      const cf = await this.fileFacts(c.path);
      if (!cf) continue;
      const croot = (await this.syntax(c.path, cf)).root;
      const field = croot.descendantForPosition({ row: c.startLine - 1, column: this.nameCol(cf, c.startLine, c.name) - 1 })?.parent;
      if (field?.type !== 'property_signature') continue;
      if (labels) {
        const type = literalTypeOf(field);
        if (type !== undefined && labels.includes(type)) good.add(c);
      } else if (field.parent && wanted.some((w) => field.parent!.namedChildren.some((f) => f?.type === 'property_signature' && f.childForFieldName('name')?.text === w.field && literalTypeOf(f) === w.literal))) {
        good.add(c);
      }
    }
    if (good.size === 0) return candidates;
    return [...candidates.filter((c) => good.has(c)), ...candidates.filter((c) => !good.has(c))];
  }

  /** The leading candidates that are overloads of one another (same file and owner), by arity. */
  private async orderCandidateOverloads(candidates: SymbolRow[], call: CallShape): Promise<SymbolRow[]> {
    const top = candidates[0]!;
    const group = candidates.filter((c) => c.path === top.path && c.container === top.container);
    if (group.length < 2) return candidates;
    const facts = await this.fileFacts(top.path);
    if (!facts) return candidates;
    const byLine = new Map(group.map((c) => [c.startLine, c]));
    const ordered = await this.orderOverloads(
      group.map((c) => ({ path: c.path, line: c.startLine, col: this.nameCol(facts, c.startLine, c.name) })),
      call,
    );
    const rest = candidates.filter((c) => !group.includes(c));
    return [...ordered.map((l) => byLine.get(l.line)!), ...rest];
  }

  /**
   * Overloads (several declarations of one name in one file): the ones whose arity accepts
   * the call's arguments first, and among those, the ones taking a function where the call
   * passes one. Language servers pick by types; arity settles most real cases, and two
   * plain type facts settle more: a parameter typed as a type guard (`(v) => v is S`) does
   * not take a function known to return a plain boolean, and a parameter typed `undefined`
   * takes nothing but `undefined` (`switchMap(project, resultSelector: undefined)`).
   */
  private async orderOverloads(locs: Loc[], call: CallShape): Promise<Loc[]> {
    const scored: Array<{ loc: Loc; score: number; i: number }> = [];
    for (const [i, loc] of locs.entries()) {
      const facts = await this.fileFacts(loc.path);
      const arity = facts ? arityAt((await this.syntax(loc.path, facts)).root, loc.line, loc.col) : undefined;
      let score = 0;
      if (arity) {
        if (call.args < arity.min || call.args > arity.max) score += 10;
        call.fnArgs.forEach((isFn, k) => {
          if (isFn && arity.fnParams[k] === false) score += 1;
          if (call.predArgs[k] === false && arity.predParams[k] === true) score += 1;
          if (!call.undefArgs[k] && arity.undefParams[k] === true) score += 1;
        });
      }
      scored.push({ loc, score, i });
    }
    return scored.sort((a, b) => a.score - b.score || a.i - b.i).map((x) => x.loc);
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

  private async resolveTarget(file: string, t: Target, a: { line: number; col: number; call?: CallShape }, facts: FileFacts, depth: number): Promise<Resolution> {
    const receiverName = t.kind === 'member' && t.receiver.kind === 'name' ? t.receiver.name : t.kind === 'member' && t.receiver.kind === 'typed' ? t.receiver.typeName : undefined;
    const none = (how: string): Resolution => ({
      name: t.name,
      locs: [],
      how,
      candidates: this.nameCandidates(t.name, file, { member: t.kind === 'member', receiver: receiverName, call: a.call !== undefined }),
    });
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
          // in another module, Python `register = template.Library()`.
          for (const d of recvLocs) {
            const df = await this.fileFacts(d.path);
            const typeName = df ? assignedType((await this.syntax(d.path, df)).root, d.line, d.col, df.language) : undefined;
            if (!df || !typeName) continue;
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
  private async followImportBinding(file: string, facts: FileFacts, local: string, depth: number, byExportedName = false, atLine?: number): Promise<Loc[]> {
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
    return [{ path: file, line: m + 1, col: name ? this.nameCol(f, m + 1, name) : 1 }];
  }

  private async freeName(file: string, facts: FileFacts, name: string, depth: number): Promise<Loc[]> {
    const own = facts.symbols.filter((s) => s.name === name && s.container === undefined);
    if (own.length > 0) return own.map((s) => ({ path: file, line: s.startLine, col: this.nameCol(facts, s.startLine, name) }));
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

  private suggestions(name: string): string[] {
    const seen = new Set<string>();
    const out: string[] = [];
    for (const s of this.deps.store.findSymbols(name, { prefix: true, limit: 20 })) {
      if (!seen.has(s.name)) {
        seen.add(s.name);
        out.push(s.name);
      }
    }
    if (out.length < 5) {
      const max = name.length <= 4 ? 1 : 2;
      const scored: Array<[number, string]> = [];
      for (const s of this.allNames()) {
        if (seen.has(s)) continue;
        const d = levenshtein(name.toLowerCase(), s.toLowerCase(), max);
        if (d <= max) scored.push([d, s]);
      }
      scored.sort((a, b) => a[0] - b[0] || a[1].length - b[1].length || (a[1] < b[1] ? -1 : 1));
      for (const [, s] of scored) {
        if (out.length >= 5) break;
        seen.add(s);
        out.push(s);
      }
    }
    return out.slice(0, 5);
  }

  private namesCache: readonly string[] | undefined;
  private allNames(): readonly string[] {
    this.namesCache ??= this.deps.symbolNames ? this.deps.symbolNames() : [...new Set(this.deps.store.allSymbols().map((s) => s.name))];
    return this.namesCache;
  }

  private describe(loc: Loc, provenance: Provenance, exact: boolean, confidence: NavLocation['confidence'], how: string): NavLocation {
    const out: NavLocation = { path: loc.path, line: loc.line, col: loc.col, provenance, exact, confidence, how };
    const file = this.deps.store.getFile(loc.path);
    const sym = file ? this.deps.store.symbolsOfFile(file.id).find((s) => s.startLine === loc.line) : undefined;
    if (sym) {
      out.kind = sym.kind;
      out.signature = sym.signature;
    }
    return out;
  }

  // ---- the chain --------------------------------------------------------------------------------

  async definition(query: string, opts: NavOptions = {}): Promise<NavAnswer> {
    this.reset();
    try {
      return await this.definitionInner(query, opts);
    } finally {
      if (!this.keep) this.reset();
    }
  }

  /** Set while `references` runs, so that the definition step's trees stay for the uses. */
  private keep = false;

  private async definitionInner(query: string, opts: NavOptions): Promise<NavAnswer> {
    const q = parseNavQuery(query);
    if (q.kind === 'name') return this.definitionByName(query, q.name, opts);
    const file = this.relPath(q.path);
    const facts = await this.fileFacts(file);
    if (!facts) {
      const exists = await this.deps.fs.stat(path.join(this.deps.root, file)).catch(() => undefined);
      if (!exists) throw new VltError('PATH_NOT_FOUND', `${file} does not exist in the workspace`);
      throw new VltError('USAGE', `${file} is not a source file the navigator can read (no parser for its language)`);
    }
    this.checkPosition(file, facts, q.line, q.col);
    const providers: ProviderRun[] = [];
    const notes: string[] = [];
    const answer = (symbol: string, locations: NavLocation[], ambiguous = false): NavAnswer => ({ query, symbol, locations, ambiguous, notes, providers });

    // 1. LSP.
    const lspLocs = await this.lspStep('definition', file, facts.language, q.line, q.col, opts, providers, notes);
    const ident = await this.analyze(file, q.line, q.col);
    const name = ident?.target?.name;
    if (lspLocs && lspLocs.length > 0) {
      return answer(
        name ?? '',
        lspLocs.map((r) => this.describe({ path: r.path, line: r.startLine, col: r.startCol }, 'lsp', true, 'high', 'language server')),
      );
    }
    if (!name) throw new VltError('USAGE', `no identifier at ${file}:${q.line}:${q.col}`);

    // 2. ctags: name matches, kept as candidates for the index to confirm.
    const tags = await this.ctagsStep(name, providers);

    // 3. The index's own resolution.
    const t0 = performance.now();
    const r = await this.resolveAt(file, q.line, q.col);
    if (r.locs.length > 0) {
      providers.push({ provider: 'graph', status: 'answered', reason: r.how, ms: performance.now() - t0 });
      if (lspLocs !== undefined) notes.push('answered by the index after the language server gave no answer');
      return answer(name, r.locs.map((l) => this.describe(l, 'graph', false, 'high', r.how)));
    }
    const candidates = r.candidates;
    providers.push({ provider: 'graph', status: candidates.length > 0 ? 'answered' : 'empty', reason: r.how, ms: performance.now() - t0 });
    if (candidates.length > 0 || (tags && tags.length > 0)) {
      const merged = this.mergeCandidates(candidates, tags ?? []);
      const unique = merged.length === 1;
      if (!unique) notes.push(`${merged.length} definitions are named ${name}; none could be chosen without types, so all are listed, nearest first`);
      return answer(
        name,
        merged.map((c) => ({ ...c, confidence: unique ? 'medium' : 'low', how: unique ? `the only definition named ${name}` : r.how })),
        !unique,
      );
    }
    // 4. Search.
    const hits = await this.searchStep(name, providers);
    if (hits.length > 0) {
      notes.push(`no definition of ${name} is indexed; these are search hits`);
      return answer(name, hits);
    }
    return { ...answer(name, []), suggestions: this.suggestions(name) };
  }

  private mergeCandidates(rows: readonly SymbolRow[], tags: readonly Tag[]): NavLocation[] {
    const out: NavLocation[] = rows.slice(0, 50).map((s) => ({
      path: s.path,
      line: s.startLine,
      col: 1,
      kind: s.kind,
      signature: s.signature,
      provenance: 'graph' as const,
      exact: false,
      confidence: 'low' as const,
      how: '',
    }));
    for (const t of tags) {
      if (out.some((o) => o.path === t.path && o.line === t.line)) continue;
      out.push({ path: t.path, line: t.line, col: 1, kind: t.kind, provenance: 'ctags', exact: false, confidence: 'low', how: 'ctags tag' });
    }
    return out;
  }

  private checkPosition(file: string, facts: FileFacts, line: number, col: number): void {
    if (line < 1 || line > facts.lines.length) throw new VltError('USAGE', `line ${line} is outside ${file}, which has ${facts.lines.length} lines`);
    const width = (facts.lines[line - 1] ?? '').length;
    if (col < 1 || col > width + 1) throw new VltError('USAGE', `column ${col} is outside line ${line} of ${file}, which has ${width} characters`);
  }

  private async lspStep(
    what: 'definition' | 'references',
    file: string,
    language: LanguageId,
    line: number,
    col: number,
    opts: NavOptions,
    providers: ProviderRun[],
    notes: string[],
  ): Promise<SourceRange[] | undefined> {
    const lsp = this.deps.lsp;
    if (opts.noLsp) {
      providers.push({ provider: 'lsp', status: 'skipped', reason: 'disabled (--no-lsp)', ms: 0 });
      return undefined;
    }
    const server = lsp?.serverFor(language);
    if (!lsp || !server) {
      providers.push({ provider: 'lsp', status: 'skipped', reason: `no language server for ${language}`, ms: 0 });
      return undefined;
    }
    if (server.state === 'not-installed') {
      providers.push({ provider: 'lsp', status: 'skipped', reason: `${server.name} is not installed (${server.detail})`, ms: 0 });
      return undefined;
    }
    const timeoutMs = opts.lspTimeoutMs ?? 10_000;
    const pos = { path: file, line, col };
    const a =
      what === 'definition'
        ? await lsp.definition(pos, { timeoutMs, ...(opts.signal ? { signal: opts.signal } : {}) })
        : await lsp.references(pos, { timeoutMs, includeDeclaration: false, ...(opts.signal ? { signal: opts.signal } : {}) });
    if (!a.ok) {
      providers.push({ provider: 'lsp', status: 'failed', reason: `${a.server ?? server.name}: ${a.failure} (${a.reason})`, ms: a.ms });
      notes.push(`the language server did not answer (${a.failure}: ${a.reason}); the fallback chain answered`);
      return [];
    }
    providers.push({ provider: 'lsp', status: a.value.length > 0 ? 'answered' : 'empty', reason: a.server, ms: a.ms });
    return a.value;
  }

  private async ctagsStep(name: string, providers: ProviderRun[]): Promise<Tag[] | undefined> {
    const tags = this.deps.tags;
    if (!tags) {
      providers.push({ provider: 'ctags', status: 'skipped', reason: 'no ctags provider in this host', ms: 0 });
      return undefined;
    }
    const t0 = performance.now();
    const why = await tags.unavailable();
    if (why) {
      providers.push({ provider: 'ctags', status: 'skipped', reason: why, ms: performance.now() - t0 });
      return undefined;
    }
    try {
      const found = await tags.lookup(name);
      providers.push({ provider: 'ctags', status: found.length > 0 ? 'answered' : 'empty', reason: `${found.length} tags named ${name} (candidates for the index to confirm)`, ms: performance.now() - t0 });
      return found;
    } catch (e) {
      providers.push({ provider: 'ctags', status: 'failed', reason: String(e), ms: performance.now() - t0 });
      return undefined;
    }
  }

  /**
   * `http.Error`, `os.path.join`, `utils.parse`: a top-level definition qualified by its package
   * or module (a Go package directory, a Python module, a TS/JS file stem) rather than by a type.
   */
  private packageQualified(name: string): SymbolRow[] {
    const parts = name.split(/[.:#]+/).filter(Boolean);
    const last = parts.pop();
    const pkg = parts.pop();
    if (!last || !pkg) return [];
    return this.deps.store.findSymbols(last, { limit: 200 }).filter((s) => {
      if (s.name !== last || s.container) return false;
      const dir = s.path.includes('/') ? s.path.slice(0, s.path.lastIndexOf('/')) : '';
      const stem = s.path.slice(s.path.lastIndexOf('/') + 1).replace(/\.[^.]+$/, '');
      return dir === pkg || dir.endsWith(`/${pkg}`) || stem === pkg;
    });
  }

  private async searchStep(name: string, providers: ProviderRun[]): Promise<NavLocation[]> {
    if (!this.deps.search) {
      providers.push({ provider: 'search', status: 'skipped', reason: 'no search in this host', ms: 0 });
      return [];
    }
    const t0 = performance.now();
    const hits = await this.deps.search(name);
    providers.push({ provider: 'search', status: hits.length > 0 ? 'answered' : 'empty', ms: performance.now() - t0 });
    return hits.slice(0, 10).map((h) => ({ path: h.path, line: h.line, col: 1, provenance: 'search', exact: false, confidence: 'low', how: 'search hit' }));
  }

  private async definitionByName(query: string, name: string, opts: NavOptions): Promise<NavAnswer> {
    void opts;
    const providers: ProviderRun[] = [{ provider: 'lsp', status: 'skipped', reason: 'a language server needs a position; give FILE:LINE:COL for an exact answer', ms: 0 }];
    const notes: string[] = [];
    const tags = await this.ctagsStep(name.split(/[.:#]/).pop() ?? name, providers);
    const t0 = performance.now();
    let rows = this.deps.store.findSymbols(name, { limit: 200 });
    // A qualified name (`Writer.Close`) matches by suffix in the store; a bare name exactly.
    if (!/[.:#]/.test(name)) rows = rows.filter((s) => s.name === name);
    else if (rows.length === 0) rows = this.packageQualified(name);
    const ranked = rows.sort(
      (a, b) =>
        (KIND_RANK[a.kind] ?? 5) - (KIND_RANK[b.kind] ?? 5) ||
        Number(/_test\.|\.test\.|\.spec\.|(^|\/)tests?\//.test(a.path)) - Number(/_test\.|\.test\.|\.spec\.|(^|\/)tests?\//.test(b.path)) ||
        a.path.length - b.path.length ||
        (a.path < b.path ? -1 : 1),
    );
    providers.push({ provider: 'graph', status: ranked.length > 0 ? 'answered' : 'empty', reason: `${ranked.length} indexed definitions`, ms: performance.now() - t0 });
    const merged = this.mergeCandidates(ranked, tags ?? []);
    if (merged.length > 0) {
      const unique = merged.length === 1;
      if (!unique) notes.push(`${merged.length} definitions are named ${name}; all are listed, most likely first (types and functions before variables, non-test files first)`);
      return {
        query,
        symbol: name,
        locations: merged.map((c) => ({ ...c, col: c.col, confidence: unique ? 'medium' : 'low', how: unique ? `the only definition named ${name}` : 'one of several definitions with this name' })),
        ambiguous: !unique,
        notes,
        providers,
      };
    }
    const hits = await this.searchStep(name, providers);
    const out: NavAnswer = { query, symbol: name, locations: hits, ambiguous: false, notes, providers, suggestions: this.suggestions(name) };
    if (hits.length > 0) notes.push(`no definition named ${name} is indexed; these are search hits`);
    else notes.push(`no definition named ${name} is indexed`);
    return out;
  }

  async references(query: string, opts: NavOptions = {}): Promise<NavAnswer> {
    this.reset();
    this.keep = true;
    try {
      return await this.referencesInner(query, opts);
    } finally {
      this.keep = false;
      this.reset();
    }
  }

  private async referencesInner(query: string, opts: NavOptions): Promise<NavAnswer> {
    const limit = opts.limit ?? 500;
    const def = await this.definition(query, opts);
    const providers = [...def.providers];
    const notes = [...def.notes];
    const q = parseNavQuery(query);
    const base = { query, symbol: def.symbol, ambiguous: def.ambiguous, notes, providers };
    if (q.kind === 'position') {
      const file = this.relPath(q.path);
      const facts = await this.fileFacts(file);
      if (facts && def.locations[0]?.provenance === 'lsp') {
        const refs = await this.lspStep('references', file, facts.language, q.line, q.col, opts, providers, notes);
        if (refs && refs.length > 0) {
          const locs = refs.slice(0, limit).map((r) => this.describe({ path: r.path, line: r.startLine, col: r.startCol }, 'lsp', true, 'high', 'language server'));
          if (isTsFamily(facts.language) && !(await this.hasTsProject(file))) {
            notes.push(
              `no tsconfig.json or jsconfig.json covers ${file}: the language server's project holds only the files it opened and what they import, so uses in other files can be missing (add a tsconfig.json, or ask with --no-lsp for the index's answer)`,
            );
          }
          return { ...base, locations: locs, definition: def.locations[0], truncated: refs.length > limit };
        }
      }
    }
    const target = def.locations[0];
    if (!target || def.locations.every((l) => l.provenance === 'search')) {
      return { ...base, locations: [], ...(def.suggestions ? { suggestions: def.suggestions } : {}) };
    }
    if (def.ambiguous) notes.push(`references are gathered for the first candidate, ${target.path}:${target.line}`);
    const t0 = performance.now();
    const deadline = opts.budgetMs !== undefined ? performance.now() + opts.budgetMs : undefined;
    // Uses are identifiers: `strings.TrimSpace`, `Server.Serve` and `Type::method` are used as
    // `TrimSpace`, `Serve` and `method`, resolved back to the definition one by one.
    const bare = def.symbol.split(/[.:#]+/).filter(Boolean).pop() ?? def.symbol;
    const { locs, truncated, budget } = await this.gatherReferences(bare, target, limit, opts.signal, deadline);
    providers.push({ provider: 'graph', status: locs.length > 0 ? 'answered' : 'empty', reason: 'uses in the files that can see the definition, each resolved', ms: performance.now() - t0 });
    if (budget) {
      notes.push(
        `partial: the index resolved the uses in ${budget.searched} of ${budget.files} files that mention ${def.symbol} (nearest to the definition first) before its ${((opts.budgetMs ?? 0) / 1000).toFixed(1)} s budget ran out; a language server for this language answers in full`,
      );
    }
    return { ...base, locations: locs, definition: target, truncated };
  }

  /** Whether a `tsconfig.json` or `jsconfig.json` sits in the file's directory or one above it, up to the root. */
  private async hasTsProject(file: string): Promise<boolean> {
    const parts = file.split('/').slice(0, -1);
    for (let n = parts.length; n >= 0; n--) {
      for (const name of ['tsconfig.json', 'jsconfig.json']) {
        const found = await this.deps.fs.stat(path.join(this.deps.root, ...parts.slice(0, n), name)).then(
          () => true,
          () => false,
        );
        if (found) return true;
      }
    }
    return false;
  }

  private ancestorCache = new Map<string, Promise<string[]>>();

  /**
   * `path:line` of the members named `name` in every ancestor (extends and implements,
   * transitively) of the class that declares the member at `file:line`; cached per call.
   */
  private ancestorMembers(file: string, line: number, name: string): Promise<string[]> {
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

  /**
   * Every use of the definition at `target`: the files that can see it (its own file, its
   * importers through re-exports, its package, files whose indexed references mention the
   * name), each use resolved and kept when it resolves to `target` (high confidence) or when
   * it cannot be resolved but the name has no other definition (medium).
   */
  private async gatherReferences(
    name: string,
    target: NavLocation,
    limit: number,
    signal?: AbortSignal,
    deadline?: number,
  ): Promise<{ locs: NavLocation[]; truncated: boolean; budget?: { searched: number; files: number } }> {
    const graph = await this.deps.graph();
    const defFile = graph.file(target.path);
    const files = new Set<string>([target.path]);
    if (defFile) {
      for (const id of graph.visibleFrom(defFile.id)) {
        const f = graph.file(id);
        if (f) files.add(f.path);
      }
      if (defFile.language === 'go') {
        const dir = target.path.includes('/') ? target.path.slice(0, target.path.lastIndexOf('/')) : '';
        for (const f of graph.resolver.filesIn(dir)) if (f.endsWith('.go')) files.add(f);
      }
    }
    for (const f of this.deps.store.filesReferencing(name)) files.add(f.path);
    // The symbol is all its declarations: overloads and the implementation, both halves of a
    // merged `interface X` + `const X`. A use of any of them is a use of it.
    const defFacts = await this.fileFacts(target.path);
    const targetSym = defFacts?.symbols.find((s) => s.name === name && s.startLine === target.line);
    const own = new Set<string>([`${target.path}:${target.line}`]);
    for (const s of defFacts?.symbols ?? []) {
      if (s.name === name && s.container === targetSym?.container && (targetSym?.container !== undefined || KIND_RANK[s.kind] !== 2)) own.add(`${target.path}:${s.startLine}`);
    }
    // TypeScript also counts the uses of the members a class member overrides or implements
    // (`super.next()`, a call through the base type), and of the members that override those:
    // a use belongs when it, or a member it overrides, meets the target's family. Python's
    // servers do not, so the family is TypeScript's and JavaScript's only.
    const family = new Set(own);
    const hierarchical = targetSym?.container !== undefined && defFacts !== undefined && isTsFamily(defFacts.language);
    if (hierarchical) for (const k of await this.ancestorMembers(target.path, target.line, name)) family.add(k);
    const related = async (l: { path: string; line: number }): Promise<boolean> => {
      if (family.has(`${l.path}:${l.line}`)) return true;
      if (!hierarchical) return false;
      for (const k of await this.ancestorMembers(l.path, l.line, name)) if (family.has(k)) return true;
      return false;
    };
    const others = this.deps.store.findSymbols(name, { limit: 50 }).filter((s) => s.name === name && !family.has(`${s.path}:${s.startLine}`));
    const out: NavLocation[] = [];
    let truncated = false;
    // Nearest first, so that a budget keeps the likeliest uses: the definition's file, its
    // folder, the files that can see it; then the others that mention the name.
    const dirOf = (p: string) => (p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '');
    const rank = (p: string) => (p === target.path ? 0 : dirOf(p) === dirOf(target.path) ? 1 : 2);
    const ordered = [...files].sort((a, b) => rank(a) - rank(b));
    // Answers list files in path order whatever order they were resolved in.
    const byPath = (locs: NavLocation[]) => locs.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    let searched = 0;
    for (const file of ordered) {
      if (signal?.aborted) throw new VltError('CANCELLED', 'the call was cancelled');
      if (deadline !== undefined && performance.now() > deadline && searched > 0) return { locs: byPath(out), truncated: true, budget: { searched, files: ordered.length } };
      searched++;
      const facts = await this.fileFacts(file);
      if (!facts || facts.language !== (defFile?.language ?? facts.language) && !sameFamily(facts.language, defFile?.language)) continue;
      const { root } = await this.syntax(file, facts);
      const uses = identifiersNamed(root, facts.text, name);
      // Uses under a local alias: `import { helper as double }`.
      for (const spec of facts.importSpecs) {
        for (const n of spec.names ?? []) if (n.name === name && n.local !== name) uses.push(...identifiersNamed(root, facts.text, n.local));
      }
      for (const u of uses) {
        if (deadline !== undefined && performance.now() > deadline) return { locs: byPath(out), truncated: true, budget: { searched, files: ordered.length } };
        if (u.line === target.line && u.col === target.col && file === target.path) continue;
        if (u.inDocLink) {
          // A doc link names whatever the name means at the file's top level.
          const own = facts.symbols.some((s) => s.name === name && s.container === undefined && s.startLine === target.line && file === target.path);
          const locs = own ? [target] : await this.followImportBinding(file, facts, name, 0).then((l) => (l.length > 0 ? l : this.freeName(file, facts, name, 0)));
          if (locs.some((l) => l.path === target.path && l.line === target.line)) {
            out.push({ path: file, line: u.line, col: u.col, provenance: 'graph', exact: false, confidence: 'high', how: 'doc comment link' });
          }
          continue;
        }
        const r = await this.resolveAt(file, u.line, u.col);
        let hit = false;
        for (const l of r.locs) if ((hit = await related(l))) break;
        if (hit) {
          // The symbol's own declarations are not uses of it; an overriding declaration is.
          if (r.how === 'the position is the declaration' && r.locs.some((l) => own.has(`${l.path}:${l.line}`))) continue;
          out.push({ path: file, line: u.line, col: u.col, provenance: 'graph', exact: false, confidence: 'high', how: r.how });
        } else if (r.locs.length === 0 && others.length === 0) {
          out.push({ path: file, line: u.line, col: u.col, provenance: 'graph', exact: false, confidence: 'medium', how: `unresolved use of ${name}, the only definition with this name` });
        } else if (r.locs.length === 0 && r.candidates[0] && (await related({ path: r.candidates[0].path, line: r.candidates[0].startLine }))) {
          out.push({ path: file, line: u.line, col: u.col, provenance: 'graph', exact: false, confidence: 'low', how: `unresolved use of ${name}; this definition is the nearest candidate` });
        }
        if (out.length >= limit) {
          truncated = true;
          return { locs: byPath(out), truncated };
        }
      }
    }
    return { locs: byPath(out), truncated };
  }
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

/** The cached value for `key`, made (and cached) on first use: the per-call caches of a navigation. */
function memo<V>(cache: Map<string, V>, key: string, make: () => V): V {
  let v = cache.get(key);
  if (v === undefined) {
    v = make();
    cache.set(key, v);
  }
  return v;
}

/** The value of a string literal node, without its quotes. */
function stringValue(n: Node | null | undefined): string | undefined {
  return n?.type === 'string' ? n.text.slice(1, -1) : undefined;
}

/** The string labels of a switch statement's cases. */
function caseLabels(sw: Node): string[] {
  return (sw.childForFieldName('body')?.namedChildren ?? []).flatMap((c) => {
    const v = c?.type === 'switch_case' ? stringValue(c.childForFieldName('value')) : undefined;
    return v === undefined ? [] : [v];
  });
}

/**
 * The discriminants the code around a member access fixes for its receiver: an enclosing
 * `case "a":` of `switch (recv.kind)`, and `recv.kind === "a"` in the condition of an enclosing
 * `if` or `?:`, up to the enclosing function.
 */
function discriminantsAround(access: Node, receiver: string): Array<{ field: string; literal: string }> {
  const out: Array<{ field: string; literal: string }> = [];
  const onReceiver = (n: Node | null | undefined): string | undefined =>
    n?.type === 'member_expression' && n.childForFieldName('object')?.text === receiver ? n.childForFieldName('property')?.text : undefined;
  const comparisons = (n: Node): void => {
    if (n.type === 'binary_expression' && /^={2,3}$/.test(n.childForFieldName('operator')?.text ?? '')) {
      const [l, r] = [n.childForFieldName('left'), n.childForFieldName('right')];
      const field = onReceiver(l) ?? onReceiver(r);
      const literal = stringValue(r) ?? stringValue(l);
      if (field && literal !== undefined) out.push({ field, literal });
    }
    for (const c of n.namedChildren) if (c) comparisons(c);
  };
  for (let cur = access.parent; cur; cur = cur.parent) {
    if (cur.type === 'switch_case') {
      const literal = stringValue(cur.childForFieldName('value'));
      const field = onReceiver(cur.parent?.parent?.childForFieldName('value')?.namedChildren[0]);
      if (field && literal !== undefined) out.push({ field, literal });
    } else if (cur.type === 'if_statement' || cur.type === 'ternary_expression') {
      const condition = cur.childForFieldName('condition');
      if (condition) comparisons(condition);
    }
    if (cur.type === 'function_declaration' || cur.type === 'arrow_function' || cur.type === 'method_definition' || cur.type === 'function_expression') break;
  }
  return out;
}

/** The string literal type of a property signature (`code: "too_big"`), without quotes. */
function literalTypeOf(field: Node): string | undefined {
  const t = field.childForFieldName('type')?.namedChildren[0];
  return t?.type === 'literal_type' ? stringValue(t.namedChildren[0]) : undefined;
}

function sameFamily(a: LanguageId, b: LanguageId | undefined): boolean {
  if (!b) return true;
  const fam = (l: LanguageId) => (l === 'tsx' || l === 'typescript' || l === 'javascript' ? 'js' : l === 'c' || l === 'cpp' ? 'c' : l);
  return fam(a) === fam(b);
}

