/**
 * The registry of language servers the Node hosts know how to run, and how each one is found
 * on this machine. The npm servers (typescript-language-server, pyright) are dependencies of
 * this package and are located next to the running code, never on PATH only: a user who
 * installed `vlt` globally has them even when their shell does not. gopls and clangd are
 * system tools and come from PATH when present.
 *
 * Workspace trust. A repository can ship programs where a server would look for them (its own
 * `node_modules/typescript/lib/tsserver.js`, `node_modules/pyright`, a `gopls` in a folder on a
 * relative PATH). Until the user trusts the workspace none of them runs: npm servers come from
 * vlt's own folders only, typescript-language-server is pinned to the bundled tsserver (`path`,
 * which it prefers over the workspace's copy), and PATH entries inside the workspace or
 * relative to it are skipped. A trusted workspace keeps its own TypeScript (`fallbackPath`:
 * the workspace's version first, as its code expects) and may provide what vlt lacks.
 */
import { accessSync, constants, existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import * as path from 'node:path';
import type { LanguageId } from '../../core/types';

/** How to run one language server, and what it answers for. */
export interface ServerSpec {
  /** Stable name used in provenance and status: `typescript-language-server`, `pyright`... */
  name: string;
  languages: LanguageId[];
  /** The executable: an absolute path, or a bare name looked up on PATH when spawned. */
  command: string;
  args: string[];
  /** Extra environment variables for the server process (added to ours). */
  env?: Record<string, string>;
  /**
   * Why this server cannot run on this machine (for example "gopls not found on PATH"). When
   * set, nothing is spawned and every call answers `unavailable` with this reason.
   */
  missing?: string;
  /** Sent as `initializationOptions` in `initialize`. */
  initializationOptions?: unknown;
  /**
   * Answers to `workspace/configuration`, as one nested object: the section `python.analysis`
   * is read from `settings.python.analysis`. Sections not present are answered with null,
   * which servers take as "use your defaults".
   */
  settings?: Record<string, unknown>;
}

export interface ServerSearchOptions {
  /**
   * vlt's own directories, from which npm packages are resolved, nearest first. Defaults to the
   * folder of this code (the bundle's `dist/` or `src/node/lsp/`) and the running script's folder.
   */
  searchFrom?: string[];
  /** Environment whose PATH is searched for system servers; defaults to process.env. */
  env?: NodeJS.ProcessEnv;
  /** The workspace root, when known: some settings depend on its layout. */
  root?: string;
  /** The user trusts the workspace: programs it provides may run (see the module comment). */
  trusted?: boolean;
}

/** The LSP `languageId` of a file for `textDocument/didOpen`. */
export function lspLanguageId(language: LanguageId, filePath: string): string {
  switch (language) {
    case 'tsx':
      return 'typescriptreact';
    case 'javascript':
      return filePath.toLowerCase().endsWith('.jsx') ? 'javascriptreact' : 'javascript';
    default:
      return language;
  }
}

/**
 * The servers this host knows, in order of preference, each resolved on this machine: a server
 * that cannot be found is still listed, with `missing` saying why, so that status can show it.
 */
export function defaultServerSpecs(opts: ServerSearchOptions = {}): ServerSpec[] {
  const trusted = opts.trusted === true;
  const root = opts.root === undefined ? undefined : path.resolve(opts.root);
  const own = opts.searchFrom ?? defaultSearchDirs();
  // A trusted workspace may provide a server vlt lacks; vlt's own copy still comes first.
  const from = trusted && root ? [...own, root] : own;
  const env = trusted || !root ? (opts.env ?? process.env) : withoutWorkspacePath(opts.env ?? process.env, root);
  const specs = [typescriptServer(from, own, trusted), pyrightServer(from, root), goplsServer(env), clangdServer(env)];
  // The servers' own children (go, python3, tsserver) are looked up on the same reduced PATH.
  if (!trusted && root && process.platform !== 'win32') for (const s of specs) s.env = { ...s.env, PATH: env.PATH ?? '' };
  return specs;
}

/**
 * The environment with PATH reduced to absolute folders outside the workspace: a relative
 * entry (`.`, `node_modules/.bin`) would find programs in whatever folder the server runs from.
 */
function withoutWorkspacePath(env: NodeJS.ProcessEnv, root: string): NodeJS.ProcessEnv {
  const real = realpathOr(root);
  const keep = pathDirs(env).filter((d) => path.isAbsolute(d) && !within(path.resolve(d), root) && !within(realpathOr(d), real));
  const { Path: _windowsPath, ...rest } = env;
  return { ...rest, PATH: keep.join(path.delimiter) };
}

function within(dir: string, root: string): boolean {
  const rel = path.relative(root, dir);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

function realpathOr(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

function typescriptServer(from: string[], own: string[], trusted: boolean): ServerSpec {
  const base: ServerSpec = {
    name: 'typescript-language-server',
    languages: ['typescript', 'tsx', 'javascript'],
    command: process.execPath,
    args: [],
  };
  const script = packageBin('typescript-language-server', 'typescript-language-server', from);
  if (!script) return { ...base, missing: 'the typescript-language-server package is not installed next to vlt' };
  const tsserver = packageFile('typescript', 'lib/tsserver.js', trusted ? from : own);
  // Untrusted, `path` pins our own TypeScript: the server prefers it over the workspace's copy.
  // Without one of ours the server would fall back to the workspace's, so it does not start.
  if (!trusted && !tsserver) return { ...base, missing: 'the typescript package is not installed next to vlt (a workspace\'s own TypeScript runs only in a trusted workspace: `vlt trust`)' };
  return {
    ...base,
    args: [script, '--stdio'],
    // Trusted: `fallbackPath`, not `path`: a workspace that ships its own TypeScript keeps it
    // (its version matches its code); one without TypeScript gets ours instead of failing.
    initializationOptions: {
      hostInfo: 'vlt-oracle',
      tsserver: {
        ...(tsserver ? (trusted ? { fallbackPath: tsserver } : { path: tsserver }) : {}),
        // While a project loads, the default "auto" answers from a syntax-only server: a
        // definition lands on the import line instead of the declaration. One semantic server
        // makes early requests wait for the project, and our readiness bound decides how long.
        useSyntaxServer: 'never',
      },
      // Automatic type acquisition runs npm install into a global cache: network access and
      // writes that a read-only question must not cause.
      disableAutomaticTypingAcquisition: true,
      preferences: { includeCompletionsForModuleExports: false },
    },
    env: nodeScriptEnv(),
  };
}

function pyrightServer(from: string[], root: string | undefined): ServerSpec {
  const base: ServerSpec = { name: 'pyright', languages: ['python'], command: process.execPath, args: [] };
  const script = packageBin('pyright', 'pyright-langserver', from);
  if (!script) return { ...base, missing: 'the pyright package is not installed next to vlt' };
  return {
    ...base,
    args: [script, '--stdio'],
    env: nodeScriptEnv(),
    settings: {
      python: {
        analysis: {
          // Only files we open are checked: a headless client asks about a few files, and a
          // whole-workspace analysis of a large tree would keep the server busy for minutes.
          diagnosticMode: 'openFilesOnly',
          autoSearchPaths: true,
          useLibraryCodeForTypes: true,
          // A workspace that is itself a package (django/ holding __init__.py) imports itself
          // by its own name (`from django.db import ...`), which resolves only from its parent.
          ...(root && existsSync(path.join(root, '__init__.py')) ? { extraPaths: [path.dirname(path.resolve(root))] } : {}),
        },
      },
    },
  };
}

function goplsServer(env: NodeJS.ProcessEnv): ServerSpec {
  const goBins = [env.GOBIN, env.GOPATH ? path.join(env.GOPATH, 'bin') : undefined, path.join(homedir(), 'go', 'bin')];
  const found = findExecutable('gopls', env, goBins.filter((d): d is string => !!d));
  return found
    ? { name: 'gopls', languages: ['go'], command: found, args: ['serve'] }
    : { name: 'gopls', languages: ['go'], command: 'gopls', args: ['serve'], missing: 'gopls not found on PATH (or in $GOBIN, $GOPATH/bin, ~/go/bin)' };
}

function clangdServer(env: NodeJS.ProcessEnv): ServerSpec {
  const found = findExecutable('clangd', env) ?? findVersionedClangd(env);
  // The background index (on by default) is what lets clangd find references outside the
  // open file; its progress keeps the server "not ready" until it is built or the readiness
  // bound passes. clangd logs every request at its default level; errors are enough.
  const args = ['--log=error'];
  return found
    ? { name: 'clangd', languages: ['c', 'cpp'], command: found, args }
    : { name: 'clangd', languages: ['c', 'cpp'], command: 'clangd', args, missing: 'clangd not found on PATH' };
}

/**
 * When an npm server script is run with our own Node binary, an Electron host (VS Code) must
 * be told to behave as plain Node; plain Node ignores the variable.
 */
function nodeScriptEnv(): Record<string, string> {
  return { ELECTRON_RUN_AS_NODE: '1' };
}

/** vlt's own folders; never the current directory, which is usually the workspace. */
function defaultSearchDirs(): string[] {
  const dirs: string[] = [];
  // In the esbuild bundle `__dirname` is dist/; under vitest it is src/node/lsp.
  if (typeof __dirname === 'string') dirs.push(__dirname);
  if (process.argv[1]) dirs.push(path.dirname(path.resolve(process.argv[1])));
  return [...new Set(dirs)];
}

/** The directory of an installed npm package, resolved like `require` would from `from`. */
export function packageDir(pkg: string, from: string[]): string | undefined {
  for (const dir of from) {
    try {
      const req = createRequire(path.join(dir, 'noop.js'));
      return path.dirname(req.resolve(`${pkg}/package.json`));
    } catch {
      // A package whose `exports` hides package.json cannot be resolved that way; walk the
      // node_modules folders up from `dir` as Node's resolver would.
      for (let d = dir; ; d = path.dirname(d)) {
        const candidate = path.join(d, 'node_modules', pkg);
        if (existsSync(path.join(candidate, 'package.json'))) return candidate;
        if (path.dirname(d) === d) break;
      }
    }
  }
  return undefined;
}

function packageFile(pkg: string, rel: string, from: string[]): string | undefined {
  const dir = packageDir(pkg, from);
  const file = dir && path.join(dir, rel);
  return file && existsSync(file) ? file : undefined;
}

/** The script behind one of a package's `bin` entries, as an absolute path. */
function packageBin(pkg: string, bin: string, from: string[]): string | undefined {
  const dir = packageDir(pkg, from);
  if (!dir) return undefined;
  try {
    const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { bin?: string | Record<string, string> };
    const rel = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin?.[bin];
    const file = rel && path.join(dir, rel);
    return file && existsSync(file) ? file : undefined;
  } catch {
    return undefined;
  }
}

/** The first executable called `name` on PATH (then in `extraDirs`), like `which`. */
export function findExecutable(name: string, env: NodeJS.ProcessEnv = process.env, extraDirs: string[] = []): string | undefined {
  const exts = process.platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';') : [''];
  for (const dir of [...pathDirs(env), ...extraDirs]) {
    for (const ext of exts) {
      const file = path.join(dir, name + ext);
      if (isExecutable(file)) return file;
    }
  }
  return undefined;
}

/** Debian installs versioned binaries (`clangd-16`) when the unversioned alternative is absent. */
function findVersionedClangd(env: NodeJS.ProcessEnv): string | undefined {
  let best: { file: string; version: number } | undefined;
  for (const dir of pathDirs(env)) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const n of names) {
      const m = /^clangd-(\d+)$/.exec(n);
      const file = path.join(dir, n);
      if (m && Number(m[1]) > (best?.version ?? -1) && isExecutable(file)) best = { file, version: Number(m[1]) };
    }
  }
  return best?.file;
}

function pathDirs(env: NodeJS.ProcessEnv): string[] {
  return (env.PATH ?? env.Path ?? '').split(path.delimiter).filter(Boolean);
}

function isExecutable(file: string): boolean {
  try {
    // access(X_OK) also accepts directories, hence the isFile check.
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
