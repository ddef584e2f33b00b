/**
 * Module resolution: from an {@link ImportSpec} in one file to the workspace files it names.
 *
 * Each language's rule is the language's own, reduced to what can be decided from the set of
 * indexed paths plus a few configuration files read once (`tsconfig.json`/`jsconfig.json`
 * `paths`, `go.mod`'s module path):
 * - TS/JS: relative specifiers with extension and `index` probing (a `.js` specifier also
 *   finds its `.ts` source, as TypeScript's ESM resolution does), `paths` mappings with
 *   `baseUrl`; bare package names are outside the workspace and stay unresolved.
 * - Python: dotted modules by package structure (directories with `__init__.py`, the
 *   workspace root included when it is a package itself), relative imports by dots.
 * - Go: the import path under the module path from `go.mod`, or as a directory of the
 *   workspace (GOROOT's `src` layout); a package is every non-test `.go` file of its directory.
 * - Rust: `crate::`, `self::`, `super::` paths and `mod x;` declarations to `x.rs`/`x/mod.rs`.
 * - C/C++: quoted includes relative to the including file, then by path suffix anywhere.
 * - Java/Kotlin/C#/others: the dotted name as a path suffix (`a/b/C.java`), star imports as
 *   the package directory.
 *
 * Resolution never reads source files; it is pure over the path set, so the code graph can
 * run it for every import of a large workspace in one pass.
 */
import * as path from 'node:path';
import type { ImportSpec, LanguageId } from '../types';

export interface TsPathConfig {
  /** Workspace-relative directory of the config file. */
  dir: string;
  /** Workspace-relative `baseUrl`, if set. */
  baseUrl?: string;
  /** `compilerOptions.paths`, patterns to workspace-relative targets. */
  paths: Array<{ pattern: string; targets: string[] }>;
}

export interface ResolverConfig {
  /** The workspace directory's own name (a Python package root is imported by it). */
  rootName: string;
  /** Whether the workspace root has `__init__.py`: then `rootName.x` names `x`. */
  rootIsPythonPackage: boolean;
  /** `module` line of the root `go.mod`. */
  goModule?: string;
  tsConfigs: TsPathConfig[];
}

const TS_EXTENSIONS = ['.ts', '.tsx', '.d.ts', '.js', '.jsx', '.mjs', '.cjs', '.mts', '.cts'];
const JS_TO_TS: Record<string, string[]> = {
  '.js': ['.ts', '.tsx', '.d.ts'],
  '.jsx': ['.tsx'],
  '.mjs': ['.mts'],
  '.cjs': ['.cts'],
};

function dirOf(p: string): string {
  const i = p.lastIndexOf('/');
  return i < 0 ? '' : p.slice(0, i);
}

function joinPosix(...parts: string[]): string {
  const joined = path.posix.normalize(parts.filter((p) => p.length > 0).join('/'));
  return joined === '.' ? '' : joined.replace(/\/$/, '');
}

export class ModuleResolver {
  private readonly files: Set<string>;
  private readonly dirFiles = new Map<string, string[]>();
  /** File name → paths, for include and dotted-name suffix lookups. */
  private readonly byBase = new Map<string, string[]>();
  /** Dotted Python module → file. */
  private readonly pyModules = new Map<string, string>();

  constructor(
    paths: readonly string[],
    private readonly config: ResolverConfig,
  ) {
    this.files = new Set(paths);
    for (const p of paths) {
      const d = dirOf(p);
      let list = this.dirFiles.get(d);
      if (!list) this.dirFiles.set(d, (list = []));
      list.push(p);
      const base = p.slice(p.lastIndexOf('/') + 1);
      let same = this.byBase.get(base);
      if (!same) this.byBase.set(base, (same = []));
      same.push(p);
    }
    for (const p of paths) if (p.endsWith('.py') || p.endsWith('.pyi')) this.addPythonModule(p);
  }

  /** Whether a path is an indexed file. */
  has(p: string): boolean {
    return this.files.has(p);
  }

  /** Indexed files directly in a directory. */
  filesIn(dir: string): readonly string[] {
    return this.dirFiles.get(dir) ?? [];
  }

  /** The Python module a file defines (`a.b` for `a/b.py` and `a/b/__init__.py`). */
  pythonModuleOf(p: string): string | undefined {
    return this.pythonName(p);
  }

  /**
   * The dotted name Python imports a file by: from the topmost package directory above it
   * (a directory with `__init__.py`), prefixed by the workspace's own name when the
   * workspace root is itself a package (a checkout of `django/`).
   */
  private pythonName(p: string): string | undefined {
    const parts = p.replace(/\.pyi?$/, '').split('/');
    if (parts[parts.length - 1] === '__init__') parts.pop();
    if (parts.length === 0) return this.config.rootIsPythonPackage ? this.config.rootName : undefined;
    let first = parts.length - 1;
    while (first > 0 && this.files.has(`${parts.slice(0, first).join('/')}/__init__.py`)) first--;
    const name = parts.slice(first).join('.');
    return first === 0 && this.config.rootIsPythonPackage ? `${this.config.rootName}.${name}` : name;
  }

  private addPythonModule(p: string): void {
    const name = this.pythonName(p);
    // A `.py` file wins over a `.pyi` stub of the same module: definitions live in the source.
    if (name !== undefined && (!this.pyModules.has(name) || p.endsWith('.py'))) this.pyModules.set(name, p);
  }

  /** The file of a dotted Python module, if it is in the workspace. */
  pythonModule(dotted: string): string | undefined {
    return this.pyModules.get(dotted);
  }

  /**
   * Files an import names, most specific first; empty when it names nothing in the workspace
   * (a third-party package, the standard library of another language, a typo).
   */
  resolve(fromPath: string, language: LanguageId, spec: ImportSpec): string[] {
    switch (language) {
      case 'typescript':
      case 'tsx':
      case 'javascript':
        return this.resolveTs(fromPath, spec.source);
      case 'python':
        return this.resolvePython(fromPath, spec);
      case 'go':
        return this.resolveGo(spec.source, fromPath.endsWith('_test.go'));
      case 'rust':
        return this.resolveRust(fromPath, spec.source);
      case 'c':
      case 'cpp':
        return this.resolveInclude(fromPath, spec);
      case 'markdown':
        return [];
      default:
        return this.resolveDotted(spec, language);
    }
  }

  // ---- TypeScript / JavaScript ------------------------------------------------------------

  private probeTs(base: string): string | undefined {
    if (this.files.has(base)) return base;
    const ext = path.posix.extname(base);
    const swaps = JS_TO_TS[ext];
    if (swaps) {
      const stem = base.slice(0, -ext.length);
      for (const e of swaps) if (this.files.has(stem + e)) return stem + e;
    }
    for (const e of TS_EXTENSIONS) if (this.files.has(base + e)) return base + e;
    for (const e of TS_EXTENSIONS) if (this.files.has(`${base}/index${e}`)) return `${base}/index${e}`;
    return undefined;
  }

  private resolveTs(fromPath: string, source: string): string[] {
    if (source.startsWith('.')) {
      const hit = this.probeTs(joinPosix(dirOf(fromPath), source));
      return hit ? [hit] : [];
    }
    // `paths` of the nearest config above the importing file.
    const cfg = this.config.tsConfigs
      .filter((c) => c.dir === '' || fromPath.startsWith(`${c.dir}/`))
      .sort((a, b) => b.dir.length - a.dir.length)[0];
    if (cfg) {
      for (const { pattern, targets } of cfg.paths) {
        const star = pattern.indexOf('*');
        let captured: string | undefined;
        if (star < 0) captured = pattern === source ? '' : undefined;
        else {
          const pre = pattern.slice(0, star);
          const post = pattern.slice(star + 1);
          if (source.startsWith(pre) && source.endsWith(post) && source.length >= pre.length + post.length) {
            captured = source.slice(pre.length, source.length - post.length);
          }
        }
        if (captured === undefined) continue;
        for (const t of targets) {
          const hit = this.probeTs(joinPosix(cfg.baseUrl ?? cfg.dir, t.replace('*', captured)));
          if (hit) return [hit];
        }
      }
      if (cfg.baseUrl !== undefined) {
        const hit = this.probeTs(joinPosix(cfg.baseUrl, source));
        if (hit) return [hit];
      }
    }
    return [];
  }

  // ---- Python -----------------------------------------------------------------------------

  private resolvePython(fromPath: string, spec: ImportSpec): string[] {
    let module = spec.source;
    if (module.startsWith('.')) {
      const dots = /^\.+/.exec(module)?.[0].length ?? 0;
      const rest = module.slice(dots);
      // One dot is the importing file's package; each further dot goes one package up.
      let pkgDir = dirOf(fromPath);
      for (let i = 1; i < dots; i++) pkgDir = dirOf(pkgDir);
      const base = joinPosix(pkgDir, rest.replace(/\./g, '/'));
      const file = this.probePython(base) ?? (rest === '' ? this.probePython(pkgDir) : undefined);
      if (!file) return [];
      module = '';
      return this.withSubmodules(file, base, spec);
    }
    const file = this.pyModules.get(module);
    if (!file) return [];
    return this.withSubmodules(file, file.replace(/(\/__init__)?\.pyi?$/, ''), spec);
  }

  private probePython(base: string): string | undefined {
    for (const c of [`${base}.py`, `${base}/__init__.py`, `${base}.pyi`, `${base}/__init__.pyi`]) if (this.files.has(c)) return c;
    return undefined;
  }

  /** `from pkg import sub`: `sub` may be a submodule rather than a name in `pkg/__init__.py`. */
  private withSubmodules(file: string, base: string, spec: ImportSpec): string[] {
    const out = [file];
    for (const n of spec.names ?? []) {
      const sub = this.probePython(`${base}/${n.name}`);
      if (sub && !out.includes(sub)) out.push(sub);
    }
    return out;
  }

  // ---- Go ---------------------------------------------------------------------------------

  /** The workspace directory of a Go import path, if any. */
  goPackageDir(importPath: string): string | undefined {
    const mod = this.config.goModule;
    const candidates: string[] = [];
    if (mod && (importPath === mod || importPath.startsWith(`${mod}/`))) candidates.push(importPath.slice(mod.length + 1));
    candidates.push(importPath, `vendor/${importPath}`);
    for (const c of candidates) if (this.dirFiles.get(c)?.some((f) => f.endsWith('.go'))) return c;
    return undefined;
  }

  private resolveGo(importPath: string, fromTest: boolean): string[] {
    const dir = this.goPackageDir(importPath);
    if (dir === undefined) return [];
    return (this.dirFiles.get(dir) ?? []).filter((f) => f.endsWith('.go') && (fromTest || !f.endsWith('_test.go')));
  }

  // ---- Rust -------------------------------------------------------------------------------

  private crateRoot(fromPath: string): string {
    // The nearest ancestor directory holding lib.rs or main.rs is the crate's `src`.
    let d = dirOf(fromPath);
    for (;;) {
      if (this.files.has(joinPosix(d, 'lib.rs')) || this.files.has(joinPosix(d, 'main.rs'))) return d;
      if (d === '') return dirOf(fromPath);
      d = dirOf(d);
    }
  }

  /** The directory where a module file's child modules live. */
  private rustModuleDir(file: string): string {
    const base = file.slice(file.lastIndexOf('/') + 1);
    if (base === 'mod.rs' || base === 'lib.rs' || base === 'main.rs') return dirOf(file);
    return file.replace(/\.rs$/, '');
  }

  private probeRust(dir: string, segments: readonly string[]): string | undefined {
    // The longest module prefix that names a file: the rest are items inside it.
    for (let n = segments.length; n >= 1; n--) {
      const base = joinPosix(dir, ...segments.slice(0, n));
      for (const c of [`${base}.rs`, `${base}/mod.rs`]) if (this.files.has(c)) return c;
    }
    return undefined;
  }

  private resolveRust(fromPath: string, source: string): string[] {
    if (source.startsWith('mod ')) {
      const name = source.slice(4);
      const dir = this.rustModuleDir(fromPath);
      for (const c of [`${dir}/${name}.rs`, `${dir}/${name}/mod.rs`]) if (this.files.has(c)) return [c];
      return [];
    }
    const segs = source.split('::').filter((s) => s.length > 0);
    const head = segs[0];
    let dir: string;
    let rest: string[];
    if (head === 'crate') {
      dir = this.crateRoot(fromPath);
      rest = segs.slice(1);
    } else if (head === 'self' || head === 'super') {
      dir = this.rustModuleDir(fromPath);
      rest = segs;
      while (rest[0] === 'self' || rest[0] === 'super') {
        if (rest[0] === 'super') dir = dirOf(dir);
        rest = rest.slice(1);
      }
    } else return [];
    if (rest.length === 0) {
      const file = ['lib.rs', 'main.rs', 'mod.rs'].map((f) => joinPosix(dir, f)).find((f) => this.files.has(f));
      return file ? [file] : [];
    }
    const hit = this.probeRust(dir, rest);
    return hit ? [hit] : [];
  }

  // ---- C / C++ ----------------------------------------------------------------------------

  private resolveInclude(fromPath: string, spec: ImportSpec): string[] {
    const rel = joinPosix(dirOf(fromPath), spec.source);
    if (!spec.system && this.files.has(rel)) return [rel];
    const base = spec.source.slice(spec.source.lastIndexOf('/') + 1);
    const suffix = `/${spec.source}`;
    const same = (this.byBase.get(base) ?? []).filter((p) => p === spec.source || p.endsWith(suffix));
    // Nearest to the including file first: the longest shared directory prefix.
    const shared = (p: string) => {
      let i = 0;
      while (i < p.length && i < fromPath.length && p[i] === fromPath[i]) i++;
      return i;
    };
    return same.sort((a, b) => shared(b) - shared(a) || a.length - b.length || (a < b ? -1 : 1)).slice(0, 1);
  }

  // ---- Dotted names (Java, Kotlin, C#, Swift, PHP, Ruby) ------------------------------------

  private resolveDotted(spec: ImportSpec, language: LanguageId): string[] {
    const ext: Partial<Record<LanguageId, string>> = { java: '.java', kotlin: '.kt', csharp: '.cs', swift: '.swift', php: '.php', ruby: '.rb' };
    const e = ext[language];
    if (!e) return [];
    const segs = spec.source.replace(/^\/+/, '').split(/[./\\]/).filter((s) => s.length > 0 && s !== 'php' && s !== 'rb');
    const out: string[] = [];
    const tryFile = (parts: string[]) => {
      const last = parts[parts.length - 1];
      if (!last) return;
      const suffix = `/${parts.join('/')}${e}`;
      for (const p of this.byBase.get(`${last}${e}`) ?? []) if (`/${p}`.endsWith(suffix) && !out.includes(p)) out.push(p);
    };
    for (const n of spec.names ?? []) tryFile([...segs, n.name]);
    if (spec.star || !spec.names) {
      tryFile(segs);
      if (out.length === 0 && spec.star) {
        // A package: the files of the directory that ends with its path.
        const suffix = segs.join('/');
        for (const [dir, files] of this.dirFiles) if (dir === suffix || dir.endsWith(`/${suffix}`)) out.push(...files.filter((f) => f.endsWith(e)));
      }
    }
    return out;
  }
}

/**
 * Strips `//` and `/* *\/` comments and trailing commas from JSONC (tsconfig files), leaving
 * string contents alone (`"@app/*"` holds a `/*`).
 */
export function parseJsonc(text: string): unknown {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
    } else {
      out += c;
      i++;
    }
  }
  return JSON.parse(out.replace(/,(\s*[}\]])/g, '$1')) as unknown;
}

/** `compilerOptions.paths`/`baseUrl` of one config file, made workspace-relative. */
export function tsPathConfigOf(dir: string, json: unknown): TsPathConfig | undefined {
  const opts = (json as { compilerOptions?: { baseUrl?: unknown; paths?: unknown } } | null)?.compilerOptions;
  if (!opts) return undefined;
  const cfg: TsPathConfig = { dir, paths: [] };
  if (typeof opts.baseUrl === 'string') cfg.baseUrl = joinPosix(dir, opts.baseUrl);
  if (opts.paths && typeof opts.paths === 'object') {
    for (const [pattern, targets] of Object.entries(opts.paths as Record<string, unknown>)) {
      if (Array.isArray(targets)) cfg.paths.push({ pattern, targets: targets.filter((t): t is string => typeof t === 'string') });
    }
  }
  return cfg.baseUrl !== undefined || cfg.paths.length > 0 ? cfg : undefined;
}
