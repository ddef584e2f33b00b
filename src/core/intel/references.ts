/**
 * Every use of one definition, gathered without a language server: the files that can see it,
 * each use of its name in them resolved by the index and kept when it leads back to the
 * definition (or to the family of members it belongs to).
 */
import { VltError } from '../errors';
import { isTsFamily } from '../parse/languages';
import type { IndexStore } from '../store/store';
import type { LanguageId } from '../types';
import type { CodeGraph } from './graph';
import type { NavLocation } from './navigate';
import { KIND_RANK } from './names';
import type { IndexResolver } from './resolution';
import type { SourceFiles } from './sources';
import { identifiersNamed } from './syntax';

export interface ReferenceContext {
  deps: { store: IndexStore; graph(): Promise<CodeGraph> };
  files: SourceFiles;
  resolver: IndexResolver;
}

/**
 * Every use of the definition at `target`: the files that can see it (its own file, its
 * importers through re-exports, its package, files whose indexed references mention the
 * name), each use resolved and kept when it resolves to `target` (high confidence) or when
 * it cannot be resolved but the name has no other definition (medium).
 */
export async function gatherReferences(
ctx: ReferenceContext,
  name: string,
  target: NavLocation,
  limit: number,
  signal?: AbortSignal,
  deadline?: number,
): Promise<{ locs: NavLocation[]; truncated: boolean; budget?: { searched: number; files: number } }> {
  const graph = await ctx.deps.graph();
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
  for (const f of ctx.deps.store.filesReferencing(name)) files.add(f.path);
  // The symbol is all its declarations: overloads and the implementation, both halves of a
  // merged `interface X` + `const X`. A use of any of them is a use of it.
  const defFacts = await ctx.files.fileFacts(target.path);
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
  if (hierarchical) for (const k of await ctx.resolver.ancestorMembers(target.path, target.line, name)) family.add(k);
  const related = async (l: { path: string; line: number }): Promise<boolean> => {
    if (family.has(`${l.path}:${l.line}`)) return true;
    if (!hierarchical) return false;
    for (const k of await ctx.resolver.ancestorMembers(l.path, l.line, name)) if (family.has(k)) return true;
    return false;
  };
  const others = ctx.deps.store.findSymbols(name, { limit: 50 }).filter((s) => s.name === name && !family.has(`${s.path}:${s.startLine}`));
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
    const facts = await ctx.files.fileFacts(file);
    if (!facts || facts.language !== (defFile?.language ?? facts.language) && !sameFamily(facts.language, defFile?.language)) continue;
    const { root } = await ctx.files.syntax(file, facts);
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
      if (out.length >= limit) {
        truncated = true;
        return { locs: byPath(out), truncated };
      }
    }
  }
  return { locs: byPath(out), truncated };
}

function sameFamily(a: LanguageId, b: LanguageId | undefined): boolean {
  if (!b) return true;
  const fam = (l: LanguageId) => (l === 'tsx' || l === 'typescript' || l === 'javascript' ? 'js' : l === 'c' || l === 'cpp' ? 'c' : l);
  return fam(a) === fam(b);
}
