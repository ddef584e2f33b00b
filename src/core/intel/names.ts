/**
 * Definitions by name: how kinds rank, the names close to one that does not exist, and names
 * qualified by their package or module.
 */
import { distance } from 'fastest-levenshtein';
import type { IndexStore, SymbolRow } from '../store/store';

/** Types first, then functions, methods, constants and variables: what a reader most likely means by a name. */
export const KIND_RANK: Record<string, number> = { class: 0, interface: 0, struct: 0, trait: 0, enum: 0, type: 1, function: 1, method: 2, module: 2, constant: 3, field: 3, variable: 4, heading: 9 };

/**
 * Test code by the conventions of the indexed languages: Go `_test.go`, Python `test_x.py` and
 * `x_test.py`, JS/TS `.test.`/`.spec.`, and folders named test, tests, __tests__ or testdata.
 */
export function isTestFile(p: string): boolean {
  return /(^|\/)(tests?|__tests__|testdata)\/|_test\.go$|(^|\/)test_[^/]*\.py$|_test\.py$|\.(test|spec)\.[cm]?[jt]sx?$/.test(p);
}

/** Up to five existing names like `name`: prefix matches, then small edit distances. */
export function suggestNames(store: IndexStore, allNames: readonly string[], name: string): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const s of store.findSymbols(name, { prefix: true, limit: 20 })) {
    if (!seen.has(s.name)) {
      seen.add(s.name);
      out.push(s.name);
    }
  }
  if (out.length < 5) {
    const max = name.length <= 4 ? 1 : 2;
    const want = name.toLowerCase();
    const scored: Array<[number, string]> = [];
    for (const s of allNames) {
      if (seen.has(s)) continue;
      const lower = s.toLowerCase();
      // Lengths further apart than the cut-off cannot be within it; skipping them spares the
      // distance over most names in the index.
      if (Math.abs(lower.length - want.length) > max) continue;
      const d = distance(want, lower);
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

/**
 * `http.Error`, `os.path.join`, `utils.parse`: a top-level definition qualified by its package
 * or module (a Go package directory, a Python module, a TS/JS file stem) rather than by a type.
 */
export function packageQualified(store: IndexStore, name: string): SymbolRow[] {
  const parts = name.split(/[.:#]+/).filter(Boolean);
  const last = parts.pop();
  const pkg = parts.pop();
  if (!last || !pkg) return [];
  return store.findSymbols(last, { limit: 200 }).filter((s) => {
    if (s.name !== last || s.container) return false;
    const dir = s.path.includes('/') ? s.path.slice(0, s.path.lastIndexOf('/')) : '';
    const stem = s.path.slice(s.path.lastIndexOf('/') + 1).replace(/\.[^.]+$/, '');
    return dir === pkg || dir.endsWith(`/${pkg}`) || stem === pkg;
  });
}

/** A qualified name split at `.`, `::` and `#`: the qualifiers, then the name itself. */
export interface QualifiedName {
  quals: string[];
  name: string;
}

/** `pkg.Type.Method` → quals [pkg, Type], name Method; undefined for a bare name. */
export function splitQualified(q: string): QualifiedName | undefined {
  const parts = q.split(/::|[.#]/).filter(Boolean);
  const name = parts.pop();
  return name && parts.length > 0 && parts.every((p) => /^[\p{L}\p{N}_$]+$/u.test(p)) && /^[\p{L}\p{N}_$]+$/u.test(name) ? { quals: parts, name } : undefined;
}

/** Stems that name their folder's module rather than one of their own. */
const FOLDER_MODULES = new Set(['__init__', 'index', 'mod', 'lib', 'main']);

/**
 * The module path a definition lives under, as a qualified name writes it: a Go package is its
 * folder (`net/http` → net, http); elsewhere the file is a module too (`django/db/models.py` →
 * django, db, models; `src/util/index.ts` → src, util).
 */
function modulePath(p: string): string[] {
  const parts = p.split('/');
  const file = parts.pop() ?? '';
  if (file.endsWith('.go')) return parts;
  const stem = file.replace(/\.[^.]+$/, '');
  return FOLDER_MODULES.has(stem) ? parts : [...parts, stem];
}

/**
 * Whether `quals` name the owner of `row`: they end with its container (`Server` for the method
 * `Serve` of `Server`; all of it or its last parts for a nested class), and whatever precedes
 * the container is the end of its module path. A top-level definition has no container, so
 * its qualifiers are all module path: `Server.Serve` never means a package-level `func Serve`.
 */
export function qualifies(row: SymbolRow, quals: readonly string[]): boolean {
  const container = row.container ? row.container.split(/::|[.#]/).filter(Boolean) : [];
  const shared = Math.min(quals.length, container.length);
  for (let i = 1; i <= shared; i++) if (quals[quals.length - i] !== container[container.length - i]) return false;
  if (quals.length <= container.length) return container.length > 0 || quals.length === 0;
  const rest = quals.slice(0, quals.length - container.length);
  const mod = modulePath(row.path);
  if (rest.length > mod.length) return false;
  return rest.every((q, i) => q === mod[mod.length - rest.length + i]);
}

/** Definitions by name, most likely first: types and functions before variables, non-test files first, shorter paths first. */
export function rankDefinitions(rows: SymbolRow[]): SymbolRow[] {
  return rows.sort(
    (a, b) =>
      (KIND_RANK[a.kind] ?? 5) - (KIND_RANK[b.kind] ?? 5) ||
      Number(/_test\.|\.test\.|\.spec\.|(^|\/)tests?\//.test(a.path)) - Number(/_test\.|\.test\.|\.spec\.|(^|\/)tests?\//.test(b.path)) ||
      a.path.length - b.path.length ||
      (a.path < b.path ? -1 : 1),
  );
}
