/**
 * Every use of one definition, gathered without a language server: the files that can see it,
 * each use of its name in them resolved by the index and kept when it leads back to the
 * definition (or to the family of members it belongs to).
 */
import { VltError } from '../errors';
import { isTsFamily } from '../parse/languages';
import type { IndexStore } from '../store/store';
import type { ImportSpec, LanguageId } from '../types';
import type { CodeGraph } from './code-graph';
import type { NavLocation } from './location';
import { isTestFile, KIND_RANK } from './names';
import type { IndexResolver } from './resolution';
import { memo, type SourceFiles } from './sources';
import { identifiersNamed } from './syntax';

export interface ReferenceContext {
  deps: { store: IndexStore; graph(): Promise<CodeGraph> };
  files: SourceFiles;
  resolver: IndexResolver;
}

/** What a reference search found, and how complete it is. */
export interface GatheredReferences {
  /** Every use found, ranked: non-test files first, then by directory distance to the definition. */
  locs: NavLocation[];
  /** Every candidate file was searched: `locs.length` is the exact total. */
  complete: boolean;
  /** Why the search stopped early, when it did. */
  stopped?: { by: 'budget' | 'limit'; searched: number; files: number };
  /** Files that could hold a use (chosen from the index), and how many of them were parsed. */
  files: { candidates: number; parsed: number };
}

/**
 * Every use of the definition at `target`, in two stages:
 *
 * 1. Candidate files, from what the index knows at commit time: the files whose indexed
 *    references name it, the definition's package, and the files that import the definer
 *    (through re-exports). A Go package-level name is used outside its package only as
 *    `pkg.Name`, always an indexed reference, and a Go method through a value of its type: in
 *    Go, only the files that both import the package and name it are candidates outside it.
 * 2. Each use resolved back to the definition. A Go `pkg.Name` use outside the package is
 *    settled from the indexed reference, the line's qualifier and the file's imports, without
 *    a syntax tree; every other use is resolved by the index's resolver over the file's tree,
 *    and kept when it resolves to `target` (high confidence), or when it cannot be resolved but
 *    the name has no other definition (medium) or this one is its nearest candidate (low).
 *
 * Files nearest the definition are resolved first, so that a budget keeps the likeliest uses.
 * The resolution on trees stops after `limit` uses; the cheap one always counts every use.
 */
// eslint-disable-next-line max-lines-per-function -- one pass over the candidate files, nearest the definition first, with the budget, the cheap count and the tree resolution interleaved per file
export async function gatherReferences(
  ctx: ReferenceContext,
  name: string,
  target: NavLocation,
  opts: { limit: number; signal?: AbortSignal; deadline?: number },
): Promise<GatheredReferences> {
  const graph = await ctx.deps.graph();
  const defFile = graph.file(target.path);
  const defFacts = await ctx.files.fileFacts(target.path);
  const targetSym = defFacts?.symbols.find((s) => s.name === name && s.startLine === target.line);
  const dir = dirOf(target.path);
  const goPackageLevel = defFile?.language === 'go' && targetSym !== undefined && targetSym.container === undefined;
  const packageFiles = new Set<string>(defFile?.language === 'go' ? graph.resolver.filesIn(dir).filter((f) => f.endsWith('.go')) : []);
  const visible = new Set<string>();
  if (defFile) {
    for (const id of graph.visibleFrom(defFile.id)) {
      const f = graph.file(id);
      if (f) visible.add(f.path);
    }
  }
  const mentioning = ctx.deps.store.filesReferencing(name).map((f) => f.path);
  // `quick`: files whose uses the indexed references settle; `full`: files resolved on their tree.
  const quick: string[] = [];
  const full = new Set<string>([target.path, ...packageFiles]);
  if (goPackageLevel) {
    for (const f of mentioning) if (!full.has(f) && visible.has(f)) quick.push(f);
  } else if (defFile?.language === 'go') {
    // A Go method or field is reached through a value of its type, which a file outside the
    // package almost always names by importing the package: those files, and the package's own.
    // (A value passed on by a third package is missed; a language server finds those.)
    for (const f of mentioning) if (visible.has(f)) full.add(f);
  } else {
    for (const f of visible) full.add(f);
    for (const f of mentioning) full.add(f);
  }
  // The symbol is all its declarations: overloads and the implementation, both halves of a
  // merged `interface X` + `const X`. A use of any of them is a use of it.
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
  if (hierarchical) for (const k of await ctx.resolver.ancestorMembers(target.path, target.line, name)) family.add(k);
  const related = async (l: { path: string; line: number }): Promise<boolean> => {
    if (family.has(`${l.path}:${l.line}`)) return true;
    if (!hierarchical) return false;
    for (const k of await ctx.resolver.ancestorMembers(l.path, l.line, name)) if (family.has(k)) return true;
    return false;
  };
  const others = ctx.deps.store.findSymbols(name, { limit: 50 }).filter((s) => s.name === name && !family.has(`${s.path}:${s.startLine}`));
  const out: NavLocation[] = [];
  const candidates = quick.length + full.size;
  let searched = 0;
  let parsed = 0;
  const result = (stopped?: GatheredReferences['stopped']): GatheredReferences => ({
    locs: rankReferences(out, target.path),
    complete: stopped === undefined,
    ...(stopped ? { stopped } : {}),
    files: { candidates, parsed },
  });
  const overBudget = () => opts.deadline !== undefined && performance.now() > opts.deadline;

  // Stage 2a: the uses the index settles alone (cheap, so always counted in full). Files are
  // read a batch at a time: reads overlap, the rest is synchronous.
  const goImports = new Map<string, boolean>();
  for (let i = 0; i < quick.length; i += READ_BATCH) await Promise.all(quick.slice(i, i + READ_BATCH).map((f) => ctx.files.text(f)));
  for (const file of quick) {
    if (opts.signal?.aborted) throw new VltError('CANCELLED', 'the call was cancelled');
    if (overBudget() && searched > 0) return result({ by: 'budget', searched, files: candidates });
    searched++;
    const uses = await quickGoUses(ctx, graph, goImports, file, name, target.path);
    if (uses === undefined) full.add(file);
    else out.push(...uses);
  }

  // Stage 2b: the uses resolved on the file's syntax tree, nearest the definition first. The
  // limit bounds this stage's (costly) finds only.
  const settled = out.length;
  const rank = (p: string) => (p === target.path ? 0 : dirOf(p) === dir ? 1 : 2);
  const ordered = [...full].sort((a, b) => rank(a) - rank(b));
  for (const file of ordered) {
    if (opts.signal?.aborted) throw new VltError('CANCELLED', 'the call was cancelled');
    if (overBudget() && searched > 0) return result({ by: 'budget', searched, files: candidates });
    searched++;
    // Every use names the definition, or imports it under an alias, so a file whose text lacks
    // the name is not parsed.
    const read = await ctx.files.text(file);
    if (!read || !read.text.includes(name)) continue;
    const facts = await ctx.files.fileFacts(file);
    if (!facts || facts.language !== (defFile?.language ?? facts.language) && !sameFamily(facts.language, defFile?.language)) continue;
    parsed++;
    const { root } = await ctx.files.syntax(file, facts);
    const uses = identifiersNamed(root, facts.text, name);
    // Uses under a local alias: `import { helper as double }`.
    for (const spec of facts.importSpecs) {
      for (const n of spec.names ?? []) if (n.name === name && n.local !== name) uses.push(...identifiersNamed(root, facts.text, n.local));
    }
    for (const u of uses) {
      if (overBudget()) return result({ by: 'budget', searched, files: candidates });
      if (u.line === target.line && u.col === target.col && file === target.path) continue;
      if (u.inDocLink) {
        // A doc link names whatever the name means at the file's top level.
        const own = facts.symbols.some((s) => s.name === name && s.container === undefined && s.startLine === target.line && file === target.path);
        const locs = own ? [target] : await ctx.resolver.followImportBinding(file, facts, name, 0).then((l) => (l.length > 0 ? l : ctx.resolver.freeName(file, facts, name, 0)));
        if (locs.some((l) => l.path === target.path && l.line === target.line)) {
          out.push({ path: file, line: u.line, col: u.col, provenance: 'graph', exact: false, confidence: 'high', how: 'doc comment link' });
        }
        continue;
      }
      const r = await ctx.resolver.resolveAt(file, u.line, u.col);
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
      if (out.length - settled >= opts.limit) return result({ by: 'limit', searched, files: candidates });
    }
  }
  return result();
}

/**
 * The uses of a Go package-level `name` in a file outside its package, settled without a
 * syntax tree: each indexed reference to `name` is a use when the identifier before its dot
 * is the file's name for the definer's package (`fmt.Sprintf`, `f "fmt"` → `f.Sprintf`), or
 * when it is unqualified and the file dot-imports the package. Anything else named `name`
 * there (`p.Sprintf`, a method of some value) is another symbol. Undefined when the index's
 * references do not describe the file as it is now (it changed since it was indexed).
 */
async function quickGoUses(
  ctx: ReferenceContext,
  graph: CodeGraph,
  reached: Map<string, boolean>,
  file: string,
  name: string,
  defPath: string,
): Promise<NavLocation[] | undefined> {
  const row = ctx.deps.store.getFile(file);
  const read = await ctx.files.text(file);
  if (!row || !read || row.hash !== read.hash) return undefined;
  const packages = new Map<string, boolean>();
  // A Go import path resolves the same from every file (test files may also see test files).
  const reaches = (spec: ImportSpec): boolean =>
    memo(reached, `${spec.source}\0${file.endsWith('_test.go')}`, () => graph.resolver.resolve(file, 'go', spec).includes(defPath));
  const specs = ctx.deps.store.importSpecsOf(row.id);
  for (const spec of specs) if (spec.namespace !== undefined && !packages.has(spec.namespace)) packages.set(spec.namespace, reaches(spec));
  const dotImported = specs.some((spec) => spec.star === true && reaches(spec));
  const lines = read.text.split('\n');
  const out: NavLocation[] = [];
  for (const ref of ctx.deps.store.getRefs(row.id, name)) {
    const qualifier = qualifierBefore(lines, ref.line, ref.col);
    if (qualifier === undefined ? dotImported : packages.get(qualifier) === true) {
      out.push({ path: file, line: ref.line, col: ref.col, provenance: 'graph', exact: false, confidence: 'high', how: qualifier === undefined ? 'dot-imported package' : `exported by module ${qualifier}` });
    }
  }
  return out;
}

/** The identifier before the dot in front of a 1-based position (`fmt` of `fmt.Sprintf`, also across a line break). */
function qualifierBefore(lines: readonly string[], line: number, col: number): string | undefined {
  let before = (lines[line - 1] ?? '').slice(0, col - 1);
  if (/^\s*$/.test(before) && line > 1) before = lines[line - 2] ?? '';
  return /([A-Za-z_][\w]*)\s*\.\s*$/.exec(before)?.[1];
}

/** Files read at once while choosing uses from the index. */
const READ_BATCH = 32;

const dirOf = (p: string) => (p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '');

/** How many folders apart two files are: up from one to their common folder, then down to the other. */
function dirDistance(a: string, b: string): number {
  const x = dirOf(a).split('/').filter(Boolean);
  const y = dirOf(b).split('/').filter(Boolean);
  let k = 0;
  while (k < x.length && k < y.length && x[k] === y[k]) k++;
  return x.length - k + (y.length - k);
}

/**
 * References in reading order for a person or a model with a page to fill: uses in non-test
 * files first, then those nearest the definition (its file, its folder, then folders further
 * up and across), then by path and position.
 */
export function rankReferences(locs: NavLocation[], defPath: string): NavLocation[] {
  const key = new Map<NavLocation, [number, number]>();
  for (const l of locs) key.set(l, [isTestFile(l.path) ? 1 : 0, l.path === defPath ? -1 : dirDistance(l.path, defPath)]);
  return locs.sort((a, b) => {
    const [ta, da] = key.get(a)!;
    const [tb, db] = key.get(b)!;
    return ta - tb || da - db || (a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line || a.col - b.col);
  });
}

function sameFamily(a: LanguageId, b: LanguageId | undefined): boolean {
  if (!b) return true;
  const fam = (l: LanguageId) => (l === 'tsx' || l === 'typescript' || l === 'javascript' ? 'js' : l === 'c' || l === 'cpp' ? 'c' : l);
  return fam(a) === fam(b);
}
