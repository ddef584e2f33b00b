/**
 * Test mapping: which test files exercise which code, by which framework, and how many tests
 * they hold. A test file is mapped to source files by what it imports first, then by its name
 * (`test_auth.py`, `auth_test.go`, `auth.test.ts`, `AuthTest.java` → `auth`), and when neither
 * finds a file, to the folder it tests by directory proximity (`tests/auth/test_login.py` → the
 * `auth` folder).
 */
import { isTestPath } from '../oracle/paths';
import type { FileRow } from '../store/store';
import type { ArchitectureGraph } from './architecture-graph';
import { moduleOf, type ArchNode, type Coverage, type TestInfo } from './model';

/** Frameworks by what a test file imports (the first match wins), and the language default. */
const FRAMEWORK_BY_IMPORT: ReadonlyArray<[RegExp, string]> = [
  [/^vitest$/, 'vitest'],
  [/^(@jest\/globals|jest)$/, 'jest'],
  [/^node:test$/, 'node:test'],
  [/^(pytest|_pytest)/, 'pytest'],
  [/^unittest$/, 'unittest'],
  [/^org\.junit|^junit/, 'junit'],
  [/^XCTest$/, 'xctest'],
  [/^testing$/, 'go test'],
];
const DEFAULT_FRAMEWORK: Readonly<Record<string, string>> = {
  python: 'pytest',
  typescript: 'jest',
  tsx: 'jest',
  javascript: 'jest',
  go: 'go test',
  java: 'junit',
  kotlin: 'junit',
  swift: 'xctest',
  rust: 'cargo test',
};

/** A Python test function (pytest and unittest name them alike). */
const PY_TEST = /^\s*(?:async\s+)?def\s+test\w*\s*\(/gm;
/** A jest or vitest test: `it(` or `test(`, with their modifiers (`.only`, `.skip`, `.todo`, `.concurrent`, `.each(…)`). */
const JS_TEST = /(?:^|[^\w.])(?:it|test)(?:\.(?:only|skip|todo|concurrent|each\([^)]*\)))*\s*\(/gm;

/** What one test looks like, per framework, to count them. */
const TEST_PATTERN: Readonly<Record<string, RegExp>> = {
  pytest: PY_TEST,
  unittest: PY_TEST,
  jest: JS_TEST,
  vitest: JS_TEST,
  // node:test has `it`/`test` with `.only`, `.skip` and `.todo` (its API's names for those modifiers).
  'node:test': /(?:^|[^\w.])(?:it|test)(?:\.(?:only|skip|todo))*\s*\(/gm,
  'go test': /^func\s+(?:Test|Fuzz)\w*\s*\(/gm,
  junit: /@Test\b/g,
  xctest: /\bfunc\s+test\w*\s*\(/g,
  'cargo test': /#\[test\]/g,
};

/** More test files than this for one thing: well tested. */
const HIGH_COVERAGE_FILES = 3;

/** The name a test file's conventions give to what it tests: `test_auth.py` → `auth`. */
export function testedName(path: string): string | undefined {
  const base = path.slice(path.lastIndexOf('/') + 1);
  const m =
    /^test_(.+)\.py$/.exec(base) ??
    /^(.+)_test\.(?:py|go|rb|exs?)$/.exec(base) ??
    /^(.+)\.(?:test|spec)\.[cm]?[jt]sx?$/.exec(base) ??
    /^(.+?)(?:Tests?|Spec)\.(?:java|kt|swift|cs|php)$/.exec(base);
  return m?.[1];
}

function stem(path: string): string {
  const base = path.slice(path.lastIndexOf('/') + 1);
  return base.replace(/\.[^.]+$/, '');
}

export class TestMap {
  /** Source file → the test files mapped to it by import or name. */
  private readonly bySource = new Map<string, Set<string>>();
  /** Folder → test files mapped to it by directory proximity. */
  private readonly byFolder = new Map<string, Set<string>>();
  private readonly frameworks = new Map<string, string>();
  private readonly counts = new Map<string, number>();
  readonly testFiles: FileRow[] = [];

  private constructor(private readonly graph: ArchitectureGraph) {}

  /** The map of the graph's index state (built once per graph). */
  static of(graph: ArchitectureGraph): TestMap {
    let m = maps.get(graph);
    if (!m) {
      m = new TestMap(graph);
      m.build();
      maps.set(graph, m);
    }
    return m;
  }

  private build(): void {
    const files = this.graph.filesOf({ ref_id: '.', kind: 'module', summary: '' }).filter((f) => f.language !== 'markdown');
    const sources = files.filter((f) => !isTestPath(f.path));
    const byStem = new Map<string, FileRow[]>();
    for (const s of sources) {
      const k = stem(s.path).toLowerCase();
      let list = byStem.get(k);
      if (!list) byStem.set(k, (list = []));
      list.push(s);
    }
    const folders = new Set(sources.map((s) => moduleOf(s.path)));
    /** A test folder's path without its test part → the source folder it mirrors (null: none). */
    const mirrors = new Map<string, string | null>();
    for (const t of files) {
      if (!isTestPath(t.path)) continue;
      this.testFiles.push(t);
      this.frameworks.set(t.path, frameworkOf(t));
      let mapped = false;
      // 1. What it imports.
      for (const e of this.graph.code.imports(t.id)) {
        for (const id of e.targets) {
          const target = this.graph.fileById(id);
          if (!target || isTestPath(target.path) || target.language === 'markdown') continue;
          this.link(this.bySource, target.path, t.path);
          mapped = true;
        }
      }
      // 2. Its name: the same stem, nearest folder first.
      const name = testedName(t.path);
      if (name) {
        const candidates = byStem.get(name.toLowerCase()) ?? [];
        const best = nearest(t.path, candidates);
        if (best) {
          this.link(this.bySource, best.path, t.path);
          mapped = true;
        }
      }
      // 3. Its folder: the source folder its own folder mirrors (`tests/auth` → `…/auth`), or the one it sits in.
      if (!mapped) {
        const dir = moduleOf(t.path);
        const rel = dir.replace(/(^|\/)(tests?|__tests__|specs?)(\/|$)/, '$1').replace(/\/$/, '');
        let mirrored = mirrors.get(rel);
        if (mirrored === undefined) mirrors.set(rel, (mirrored = [...folders].filter((f) => rel && (f === rel || f.endsWith(`/${rel}`))).sort((a, b) => a.length - b.length)[0] ?? null));
        const folder = folders.has(dir) ? dir : (mirrored ?? (folders.has(moduleOf(dir)) ? moduleOf(dir) : undefined));
        if (folder) this.link(this.byFolder, folder, t.path);
      }
    }
  }

  private link(map: Map<string, Set<string>>, key: string, test: string): void {
    let set = map.get(key);
    if (!set) map.set(key, (set = new Set()));
    set.add(test);
  }

  /** The tests of a node: of its files, of the folders it covers, and for a symbol only the test files that use its name. */
  testsOf(node: ArchNode): TestInfo {
    const files = this.graph.filesOf(node).filter((f) => f.language !== 'markdown');
    const tests = new Set<string>();
    const own = files.filter((f) => isTestPath(f.path));
    for (const f of own) tests.add(f.path);
    for (const f of files) for (const t of this.bySource.get(f.path) ?? []) tests.add(t);
    if (node.kind === 'module' || node.kind === 'component') {
      const dirs = new Set(files.map((f) => moduleOf(f.path)));
      for (const d of dirs) for (const t of this.byFolder.get(d) ?? []) tests.add(t);
    } else if (node.kind === 'file' && tests.size === 0 && node.path) {
      for (const t of this.byFolder.get(moduleOf(node.path)) ?? []) tests.add(t);
    }
    let list = [...tests];
    if (node.kind === 'symbol') {
      const name = node.ref_id.slice((node.path?.length ?? node.ref_id.lastIndexOf('#')) + 1).split('.').pop()!;
      const using = new Set(this.graph.engine.store.filesReferencing(name).map((f) => f.path));
      list = list.filter((t) => using.has(t));
    }
    list.sort();
    const langs = new Set(files.map((f) => f.language));
    const fw = list.map((t) => this.frameworks.get(t)).find((x) => x) ?? this.detected(langs);
    const count = list.reduce((n, t) => n + this.countTests(t), 0);
    const coverage: Coverage = list.length > HIGH_COVERAGE_FILES ? 'high' : list.length > 0 ? 'medium' : fw ? 'low' : 'none';
    return { framework: fw ?? null, test_files: list, test_count: count, coverage_estimate: coverage };
  }

  /** The framework the workspace's tests of these languages use, if it has any. */
  private detected(langs: Set<string>): string | undefined {
    for (const t of this.testFiles) if (langs.has(t.language)) return this.frameworks.get(t.path);
    return undefined;
  }

  /** How many tests a test file holds, by its framework's pattern (read once). */
  countTests(path: string): number {
    const cached = this.counts.get(path);
    if (cached !== undefined) return cached;
    const f = this.graph.file(path);
    const re = TEST_PATTERN[this.frameworks.get(path) ?? ''];
    const n = f && re ? [...this.graph.textOf(f.id).matchAll(re)].length : 0;
    this.counts.set(path, n);
    return n;
  }

  frameworkOf(path: string): string | undefined {
    return this.frameworks.get(path);
  }
}

const maps = new WeakMap<ArchitectureGraph, TestMap>();

function frameworkOf(f: FileRow): string {
  for (const imp of f.imports) for (const [re, fw] of FRAMEWORK_BY_IMPORT) if (re.test(imp)) return fw;
  return DEFAULT_FRAMEWORK[f.language] ?? 'unknown';
}

/** The candidate sharing the longest folder path with `from` (`tests/auth/x` ~ `src/auth/x`), then the shortest path. */
function nearest(from: string, candidates: readonly FileRow[]): FileRow | undefined {
  const parts = moduleOf(from).split('/').filter((p) => !/^(tests?|__tests__|specs?)$/.test(p));
  const score = (c: FileRow) => {
    const cp = moduleOf(c.path).split('/');
    let s = 0;
    for (const p of parts) if (cp.includes(p)) s++;
    return s;
  };
  return [...candidates].sort((a, b) => score(b) - score(a) || a.path.length - b.path.length || a.path.localeCompare(b.path))[0];
}
