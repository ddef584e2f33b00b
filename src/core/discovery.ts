/**
 * Finds the files of a workspace that are worth indexing.
 *
 * The work is split in two on purpose:
 *
 * 1. {@link discoverFiles} is *stat-only*. It walks directories and decides from names,
 *    ignore rules, configuration and `stat` sizes alone, so that listing a workspace of
 *    thousands of files stays far below the cost of reading them (and so that an
 *    incremental re-index can compare `size`/`mtimeMs` without any reads). The only file
 *    contents it reads are `.gitignore` files and `.git/info/exclude`.
 * 2. {@link classifyContent} (or {@link readDiscoveredFile}, which reads and classifies)
 *    decides from the bytes: binary, invalid UTF-8 and minified files are rejected, generated
 *    files are marked (the indexer applies `[index] generated` to them). The
 *    indexer calls it when it reads each file anyway, and gets the decoded text back, so
 *    no file is read twice. Files rejected there should be recorded by the indexer as
 *    {@link SkippedFile}s with the returned reason, alongside those of discovery.
 *
 * Per-file problems (permissions, files vanishing mid-scan, broken or looping symlinks)
 * never throw: they become skip reasons. Only a root that is missing, not a directory or
 * unreadable throws, as a VltError.
 */
import { join, relative, resolve, sep } from 'node:path';
import ignore, { type Ignore } from 'ignore';
import picomatch from 'picomatch';
import type { VltConfig } from './config';
import { VltError, errorMessage } from './errors';
import { isAmbiguousPath, languageForPath, languageFromContent, languageFromFirstLine } from './parse/languages';
import type { EntryKind, FileStat, Logger, ProgressSink, WorkspaceFs } from './ports';
import type { LanguageId } from './types';
import { classifyContent, MINIFIED_NAME, type ContentClass, type SkipReason } from './content';

export { classifyContent, type ContentClass, type ClassifyOptions, type SkipReason } from './content';

export interface DiscoveredFile {
  /** Workspace-relative path with forward slashes. */
  path: string;
  /** Absolute path under the workspace root as given (symlinks are not resolved). */
  absPath: string;
  language: LanguageId;
  size: number;
  mtimeMs: number;
  /** In a Go module's vendor directory: indexed for navigation only (see {@link DiscoveryResult.goVendorDirs}). */
  vendored?: true;
}

export interface SkippedFile {
  path: string;
  reason: SkipReason;
  detail?: string;
}

export interface SkippedDir {
  path: string;
  reason: SkipReason;
  detail?: string;
}

export interface DiscoveryResult {
  /** Files to index, sorted by path. */
  files: DiscoveredFile[];
  /** Files that have a supported language but are not indexed, sorted by path. */
  skipped: SkippedFile[];
  /** Directories not descended into, sorted by path. VCS directories are not listed. */
  skippedDirs: SkippedDir[];
  /**
   * Number of files with no supported language (.json, .txt, images...). They are
   * counted rather than listed because a repository has many of them.
   */
  unsupportedCount: number;
  /** The same files counted by extension (`.txt`, or the whole name when it has none: `Makefile`). */
  unsupportedByExt: Record<string, number>;
  /**
   * Files with no supported language that {@link DiscoveryOptions.alsoList} asked for (schema
   * files such as `.proto` or `.graphql`), sorted by path, under the same ignore, exclude and
   * deny rules as indexed files. Empty unless asked for.
   */
  listed: string[];
  /**
   * Vendor directories of Go modules (`vendor/` with its `modules.txt`, beside a `go.mod` above
   * it), walked because the go tool compiles them: their Go files are indexed for navigation
   * only, so that a definition in a vendored package resolves and its uses count, while search
   * and the oracle never show them. Other vendor directories are skipped as before.
   */
  goVendorDirs: string[];
}

export interface DiscoveryOptions {
  /** File names to list in {@link DiscoveryResult.listed} although no language indexes them. */
  alsoList?: RegExp;
  logger?: Logger;
  signal?: AbortSignal;
  /** Receives `discover` events; `total` is 0 while unknown and equals `done` at the end. */
  onProgress?: ProgressSink;
}

/** Directories never entered and never reported: version-control and Vlt's own state. */
export const ALWAYS_SKIPPED_DIRS: ReadonlySet<string> = new Set(['.git', '.vlt', '.hg', '.svn']);

export interface VendoredDirRule {
  /** Exact directory name. */
  name: string;
  /**
   * When set, the directory only counts as vendored if a file of this name sits beside
   * it; names such as `build` or `target` are too common to skip unconditionally.
   */
  besideFile?: string;
  /** Why the directory holds no first-party source. */
  why: string;
}

/**
 * Dependency, virtual-environment, cache and build-output directories, skipped with
 * reason `vendored`. A directory is still walked when an `[index] include` glob names it
 * literally (e.g. `vendor/mylib/**`), since that is an explicit request.
 */
export const VENDORED_DIRS: readonly VendoredDirRule[] = [
  { name: 'node_modules', why: 'npm/yarn/pnpm dependencies' },
  { name: 'bower_components', why: 'Bower dependencies' },
  { name: 'vendor', why: 'vendored dependencies (Go modules, PHP Composer, Ruby bundler)' },
  { name: 'third_party', why: 'vendored third-party code' },
  { name: '.venv', why: 'Python virtual environment' },
  { name: 'venv', why: 'Python virtual environment' },
  { name: '__pycache__', why: 'Python bytecode cache' },
  { name: '.tox', why: 'tox virtual environments' },
  { name: '.mypy_cache', why: 'mypy cache' },
  { name: '.pytest_cache', why: 'pytest cache' },
  { name: 'target', besideFile: 'Cargo.toml', why: 'Rust (Cargo) build output' },
  { name: 'dist', besideFile: 'package.json', why: 'JavaScript build output' },
  { name: 'build', besideFile: 'package.json', why: 'JavaScript build output' },
  { name: 'out', besideFile: 'package.json', why: 'JavaScript build output' },
];

/**
 * Go's `testdata` directories hold fixtures, often deliberately broken source, and the go
 * tool ignores them. They are skipped (reason `testdata`) inside a Go module (a `go.mod`
 * in the directory or an ancestor within the workspace) or beside `.go` files, so a
 * `testdata` directory in a non-Go project is still indexed.
 */
export const GO_TESTDATA_DIR = 'testdata';

/** How many file-system calls may be in flight at once; enough to keep libuv's pool busy. */
const FS_CONCURRENCY = 64;

/** Emit a progress event each time this many more files have been found. */
const PROGRESS_EVERY = 250;

// Git itself is case-insensitive about ignore rules on these platforms (core.ignorecase).
const IGNORE_CASE = process.platform === 'darwin' || process.platform === 'win32';

interface IgnoreLevel {
  /** Workspace-relative directory the rules belong to; '' for the root. */
  base: string;
  ig: Ignore;
}

interface DirContext {
  abs: string;
  rel: string;
  /** Real paths of this directory and all its ancestors in the walk, for loop detection. */
  realChain: readonly string[];
  ignores: readonly IgnoreLevel[];
  inGoModule: boolean;
  /** Inside a Go module's vendor directory (see DiscoveryResult.goVendorDirs). */
  goVendor?: boolean;
}

interface PatternSet {
  /** Normalised patterns as written (anchored, no leading `./` or `/`, no trailing `/`). */
  patterns: string[];
  /** Matches a workspace-relative path (file or directory). */
  match: (rel: string) => boolean;
  /** Literal leading directories of each pattern variant; '' when it can match anywhere. */
  bases: string[];
}

/**
 * Compiles include/exclude globs with gitignore-like conveniences: a pattern without a
 * slash matches a name at any depth (`*.ts`, `fixtures`), a leading `/` anchors it at the
 * root, and a pattern naming a directory also covers everything below it.
 */
function compilePatterns(globs: readonly string[]): PatternSet {
  const patterns: string[] = [];
  const variants: string[] = [];
  const basenameVariants: string[] = [];
  for (const g of globs) {
    let p = g.trim().replace(/^\.\//, '');
    const anchored = p.startsWith('/');
    p = p.replace(/^\/+/, '').replace(/\/+$/, '');
    if (p === '') continue;
    if (!anchored && !p.includes('/')) {
      patterns.push(`**/${p}`);
      basenameVariants.push(p);
      variants.push(`**/${p}/**`);
    } else {
      patterns.push(p);
      variants.push(p);
      if (!p.endsWith('/**')) variants.push(`${p}/**`);
    }
  }
  const opts = { dot: true, nocase: IGNORE_CASE };
  const matchers = [
    ...variants.map((v) => picomatch(v, opts)),
    ...basenameVariants.map((v) => picomatch(v, { ...opts, basename: true })),
  ];
  return {
    patterns,
    match: (rel) => matchers.some((m) => m(rel)),
    bases: [...variants, ...basenameVariants].map((v) => (v.startsWith('**') ? '' : picomatch.scan(v).base)),
  };
}

/** Whether some file below directory `rel` could match one of the include patterns. */
function couldContainIncluded(include: PatternSet, rel: string): boolean {
  return include.bases.some((b) => b === '' || b === rel || rel.startsWith(`${b}/`) || b.startsWith(`${rel}/`));
}

/** Whether an include pattern names directory `name` literally at the position of `rel`. */
function explicitlyIncluded(include: PatternSet, rel: string, name: string): boolean {
  for (const p of include.patterns) {
    const segs = p.split('/');
    for (let i = 0; i < segs.length; i++) {
      if (segs[i] !== name) continue;
      if (picomatch(segs.slice(0, i + 1).join('/'), { dot: true, nocase: IGNORE_CASE })(rel)) return true;
    }
  }
  return false;
}

function isIgnored(levels: readonly IgnoreLevel[], rel: string, isDir: boolean): boolean {
  // Later (deeper) levels override earlier ones, as in git: the last matching rule wins.
  let ignored = false;
  for (const { base, ig } of levels) {
    const sub = base === '' ? rel : rel.slice(base.length + 1);
    let r: { ignored: boolean; unignored: boolean };
    try {
      r = ig.test(isDir ? `${sub}/` : sub);
    } catch {
      // `ignore` rejects path shapes it cannot evaluate; an odd name must not stop the walk.
      continue;
    }
    if (r.ignored) ignored = true;
    else if (r.unignored) ignored = false;
  }
  return ignored;
}

function errnoCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Maps a per-entry file-system error to a skip reason. */
function problemFor(e: unknown): { reason: SkipReason; detail: string } {
  const code = errnoCode(e);
  if (code === 'ENOENT' || code === 'ENOTDIR') return { reason: 'unreadable', detail: 'deleted during scan' };
  if (code === 'ELOOP') return { reason: 'symlink-loop', detail: 'symlink chain loops' };
  if (code === 'EACCES' || code === 'EPERM') return { reason: 'unreadable', detail: `permission denied (${code})` };
  return { reason: 'unreadable', detail: code ?? errorMessage(e) };
}

/** Runs at most `n` of the given async operations at a time. */
function createLimiter(n: number): <T>(fn: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: Array<() => void> = [];
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    if (active >= n) {
      // The releasing task hands its slot over directly, so `active` never overshoots.
      await new Promise<void>((r) => waiting.push(r));
    } else {
      active++;
    }
    try {
      return await fn();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active--;
    }
  };
}

function joinRel(dir: string, name: string): string {
  return dir === '' ? name : `${dir}/${name}`;
}

/** Extensionless files larger than this are not read to find their language. */
const SNIFF_MAX_BYTES = 1024 * 1024;

/** `bash_completion`, `deploy`: no dot after the first character. Hidden files are not sniffed. */
function isExtensionless(name: string): boolean {
  return !name.startsWith('.') && !name.includes('.');
}

function isInside(realRoot: string, target: string): boolean {
  return target === realRoot || target.startsWith(realRoot.endsWith(sep) ? realRoot : realRoot + sep);
}

/** Sort by path with plain code-unit order, which does not depend on the locale. */
function byPath<T extends { path: string }>(a: T, b: T): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

/**
 * Lists the indexable files under `root`, stat-only (see the module comment). Throws
 * VltError PATH_NOT_FOUND / NOT_A_DIRECTORY / IO for a bad root and CANCELLED when
 * `opts.signal` aborts; every per-file problem becomes an entry of `skipped` or
 * `skippedDirs` instead.
 */
export async function discoverFiles(root: string, config: VltConfig, fs: WorkspaceFs, opts: DiscoveryOptions = {}): Promise<DiscoveryResult> {
  const started = Date.now();
  const rootAbs = resolve(root);
  const realRoot = await openRoot(rootAbs, fs);
  const walker = new Walker(realRoot, config, fs, opts);
  const rootIgnores: IgnoreLevel[] = [];
  const infoExclude = await walker.readRules(join(rootAbs, '.git', 'info', 'exclude'));
  // .git/info/exclude has lower precedence than any .gitignore, so it comes first.
  if (infoExclude) rootIgnores.push({ base: '', ig: infoExclude });
  await walker.walkDir({ abs: rootAbs, rel: '', realChain: [realRoot], ignores: rootIgnores, inGoModule: false });
  const r = walker.result();
  opts.onProgress?.({ phase: 'discover', done: r.files.length, total: r.files.length });
  opts.logger?.debug(`discovery: ${r.files.length} files, ${r.skipped.length} skipped, ${r.skippedDirs.length} dirs skipped, ${r.unsupportedCount} unsupported in ${Date.now() - started} ms`);
  return r;
}

/** The workspace root's real path; PATH_NOT_FOUND, NOT_A_DIRECTORY or IO when it cannot be walked. */
async function openRoot(rootAbs: string, fs: WorkspaceFs): Promise<string> {
  let rootStat: FileStat;
  try {
    rootStat = await fs.stat(rootAbs);
  } catch (e) {
    const code = errnoCode(e);
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new VltError('PATH_NOT_FOUND', `workspace not found: ${rootAbs}`, { path: rootAbs }, { cause: e });
    throw new VltError('IO', `cannot access workspace ${rootAbs}: ${code ?? String(e)}`, { path: rootAbs }, { cause: e });
  }
  if (rootStat.kind !== 'dir') throw new VltError('NOT_A_DIRECTORY', `workspace is not a directory: ${rootAbs}`, { path: rootAbs });
  try {
    return await fs.realpath(rootAbs);
  } catch (e) {
    throw new VltError('IO', `cannot resolve workspace ${rootAbs}: ${errnoCode(e) ?? String(e)}`, { path: rootAbs }, { cause: e });
  }
}

/**
 * One walk of a workspace: the configuration it applies, and what it has found so far. Each
 * directory is read once; its entries are considered concurrently (at most FS_CONCURRENCY file
 * system calls at a time), and the lists are sorted by path at the end.
 */
class Walker {
  private readonly limit = createLimiter(FS_CONCURRENCY);
  private readonly include: PatternSet;
  private readonly exclude: PatternSet;
  private readonly hasInclude: boolean;
  private readonly enabledLanguages: ReadonlySet<LanguageId>;
  private readonly maxBytes: number;

  private readonly files: DiscoveredFile[] = [];
  private readonly skipped: SkippedFile[] = [];
  private readonly skippedDirs: SkippedDir[] = [];
  private unsupportedCount = 0;
  private readonly unsupportedByExt: Record<string, number> = {};
  private readonly listed: string[] = [];
  private readonly goVendorDirs: string[] = [];
  private nextProgress = PROGRESS_EVERY;

  constructor(
    private readonly realRoot: string,
    private readonly config: VltConfig,
    private readonly fs: WorkspaceFs,
    private readonly opts: DiscoveryOptions,
  ) {
    this.include = compilePatterns(config.index.include);
    this.exclude = compilePatterns(config.index.exclude);
    this.hasInclude = this.include.patterns.length > 0;
    this.enabledLanguages = new Set<LanguageId>(config.index.languages);
    this.maxBytes = config.index.maxFileBytes;
  }

  /** What was found, each list sorted by path. */
  result(): DiscoveryResult {
    this.files.sort(byPath);
    this.skipped.sort(byPath);
    this.skippedDirs.sort(byPath);
    this.listed.sort();
    this.goVendorDirs.sort();
    const { files, skipped, skippedDirs, unsupportedCount, unsupportedByExt, listed, goVendorDirs } = this;
    return { files, skipped, skippedDirs, unsupportedCount, unsupportedByExt, listed, goVendorDirs };
  }

  private checkAbort(): void {
    if (this.opts.signal?.aborted) throw new VltError('CANCELLED', 'discovery cancelled');
  }

  private skipFile(path: string, reason: SkipReason, detail?: string): void {
    this.skipped.push(detail === undefined ? { path, reason } : { path, reason, detail });
  }

  private skipDir(path: string, reason: SkipReason, detail?: string): void {
    this.opts.logger?.debug(`discovery: skip dir ${path} (${reason}${detail ? `: ${detail}` : ''})`);
    this.skippedDirs.push(detail === undefined ? { path, reason } : { path, reason, detail });
  }

  /** A file in no supported language, counted by its extension (or its name, without one). */
  private unsupported(name: string): void {
    this.unsupportedCount++;
    const slash = Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\'));
    const base = name.slice(slash + 1);
    const dot = base.lastIndexOf('.');
    const key = dot > 0 ? base.slice(dot).toLowerCase() : base;
    this.unsupportedByExt[key] = (this.unsupportedByExt[key] ?? 0) + 1;
  }

  /** Reads a rules file, treating any failure as "no rules": ignore files are optional. */
  async readRules(abs: string): Promise<Ignore | undefined> {
    try {
      const bytes = await this.limit(() => this.fs.readFile(abs));
      return ignore({ ignorecase: IGNORE_CASE }).add(new TextDecoder().decode(bytes));
    } catch (e) {
      const code = errnoCode(e);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') this.opts.logger?.warn(`discovery: cannot read ${abs}: ${code ?? String(e)}`);
      return undefined;
    }
  }

  /**
   * Resolves a symlink to its real path and target kind, or records why it cannot be
   * followed. A dangling or self-looping link is listed only when its name looks like
   * source, since we cannot tell whether it meant a file or a directory.
   */
  private async resolveLink(rel: string, abs: string): Promise<{ real: string; stat: FileStat } | undefined> {
    try {
      const real = await this.limit(() => this.fs.realpath(abs));
      const st = await this.limit(() => this.fs.stat(abs));
      return { real, stat: st };
    } catch (e) {
      if (languageForPath(rel) === undefined) {
        this.unsupported(rel);
        return undefined;
      }
      if (errnoCode(e) === 'ENOENT') this.skipFile(rel, 'unreadable', 'broken symlink');
      else {
        const p = problemFor(e);
        this.skipFile(rel, p.reason, p.detail);
      }
      return undefined;
    }
  }

  /**
   * The language of a file with no extension, from its first line (a `#!` interpreter, an Emacs
   * mode line); only small regular files are read, and only their first bytes are looked at.
   */
  private async sniffLanguage(abs: string, known?: FileStat): Promise<LanguageId | undefined> {
    try {
      const st = known ?? (await this.limit(() => this.fs.stat(abs)));
      if (st.kind !== 'file' || st.size === 0 || st.size > Math.min(this.maxBytes, SNIFF_MAX_BYTES)) return undefined;
      const bytes = await this.limit(() => this.fs.readFile(abs));
      return languageFromFirstLine(new TextDecoder('utf-8', { fatal: false }).decode(bytes.subarray(0, 300)));
    } catch {
      return undefined;
    }
  }

  /** A file whose extension two languages share (`.pl`): its first bytes decide. */
  private async sniffAmbiguous(name: string, abs: string, known?: FileStat): Promise<LanguageId | undefined> {
    try {
      const st = known ?? (await this.limit(() => this.fs.stat(abs)));
      if (st.kind !== 'file' || st.size > this.maxBytes) return languageForPath(name);
      const bytes = await this.limit(() => this.fs.readFile(abs));
      return languageFromContent(name, new TextDecoder('utf-8', { fatal: false }).decode(bytes.subarray(0, 4096)));
    } catch {
      return languageForPath(name);
    }
  }

  private denied(rel: string, link?: { target?: string }): string | undefined {
    const deny = this.config.security.deny;
    return deniedBy(rel, deny) ?? (link?.target !== undefined ? deniedBy(link.target, deny) : undefined);
  }

  /**
   * Considers one file. `link` is set for a symlinked file: its target was already
   * stat'ed, `outside` says whether it leads out of the workspace, and `target` is its real
   * path relative to the workspace root when it stays inside: a link is denied when either its
   * own path or its target's matches the deny list (`notes/cert.md` → `prod.pem`).
   */
  private async visitFile(rel: string, abs: string, name: string, ignores: readonly IgnoreLevel[], link?: { stat: FileStat; outside: boolean; target?: string }, goVendor = false): Promise<void> {
    const { exclude, include, opts } = this;
    const language = isAmbiguousPath(name) ? await this.sniffAmbiguous(name, abs, link?.stat) : (languageForPath(name) ?? (isExtensionless(name) ? await this.sniffLanguage(abs, link?.stat) : undefined));
    if (language === undefined) {
      this.unsupported(name);
      if (opts.alsoList?.test(name) && !link?.outside && !isIgnored(ignores, rel, false) && !exclude.match(rel) && !this.denied(rel, link)) this.listed.push(rel);
      return;
    }
    if (isIgnored(ignores, rel, false)) return this.skipFile(rel, 'gitignored');
    if (exclude.match(rel)) return this.skipFile(rel, 'excluded');
    const secret = this.denied(rel, link);
    if (secret) return this.skipFile(rel, 'denied', secret);
    if (this.hasInclude && !include.match(rel)) return this.skipFile(rel, 'excluded', 'not included');
    if (link?.outside) return this.skipFile(rel, 'excluded', 'outside workspace');
    if (!this.enabledLanguages.has(language)) return this.skipFile(rel, 'language-disabled', language);
    if (goVendor && language !== 'go') return this.skipFile(rel, 'vendored', 'a Go vendor directory: only its Go files are indexed (for navigation)');
    if (MINIFIED_NAME.test(name)) return this.skipFile(rel, 'minified', 'file name');
    let st = link?.stat;
    if (st === undefined) {
      this.checkAbort();
      try {
        st = await this.limit(() => this.fs.stat(abs));
      } catch (e) {
        const p = problemFor(e);
        return this.skipFile(rel, p.reason, p.detail);
      }
    }
    if (st.kind !== 'file') return this.skipFile(rel, 'unreadable', 'not a regular file');
    if (st.size > this.maxBytes) return this.skipFile(rel, 'too-large', `${st.size} bytes > max_file_bytes ${this.maxBytes}`);
    this.files.push({ path: rel, absPath: abs, language, size: st.size, mtimeMs: st.mtimeMs, ...(goVendor ? { vendored: true as const } : {}) });
    // A schema file that is also read as text (`.proto`) is listed as well.
    if (opts.alsoList?.test(name)) this.listed.push(rel);
    if (opts.onProgress && this.files.length >= this.nextProgress) {
      this.nextProgress += PROGRESS_EVERY;
      opts.onProgress({ phase: 'discover', done: this.files.length, total: 0, message: rel });
    }
  }

  /** Decides whether to enter a child directory; returns a reason when it is skipped. */
  private dirSkipReason(parent: DirContext, rel: string, name: string, siblings: ReadonlySet<string>, hasGoSibling: boolean): { reason: SkipReason | 'go-vendor'; detail?: string } | undefined {
    const { include, hasInclude } = this;
    if (isIgnored(parent.ignores, rel, true)) return { reason: 'gitignored' };
    if (this.exclude.match(rel)) return { reason: 'excluded' };
    if (hasInclude && !couldContainIncluded(include, rel)) return { reason: 'excluded', detail: 'not included' };
    const rule = VENDORED_DIRS.find((r) => r.name === name && (r.besideFile === undefined || siblings.has(r.besideFile)));
    if (rule && !(hasInclude && explicitlyIncluded(include, rel, name))) {
      // A Go module's vendor directory is decided on entry: walked when it has its modules.txt.
      if (name === 'vendor' && parent.inGoModule && !parent.goVendor) return { reason: 'go-vendor', detail: rule.why };
      return { reason: 'vendored', detail: rule.why };
    }
    if (name === GO_TESTDATA_DIR && (parent.inGoModule || hasGoSibling) && !(hasInclude && explicitlyIncluded(include, rel, name))) return { reason: 'testdata' };
    return undefined;
  }

  /** Reads one directory (its .gitignore first) and considers its entries concurrently. */
  async walkDir(ctx: DirContext): Promise<void> {
    this.checkAbort();
    let entries: { name: string; kind: EntryKind }[];
    try {
      entries = await this.limit(() => this.fs.readDir(ctx.abs));
    } catch (e) {
      if (ctx.rel === '') throw new VltError('IO', `cannot read workspace ${ctx.abs}: ${errnoCode(e) ?? String(e)}`, { path: ctx.abs }, { cause: e });
      const p = problemFor(e);
      this.skipDir(ctx.rel, p.reason, p.detail);
      return;
    }
    this.checkAbort();
    const names = new Set(entries.map((e) => e.name));
    let ignores = ctx.ignores;
    if (names.has('.gitignore')) {
      const ig = await this.readRules(join(ctx.abs, '.gitignore'));
      if (ig) ignores = [...ignores, { base: ctx.rel, ig }];
    }
    const dir: DirContext = { ...ctx, ignores, inGoModule: ctx.inGoModule || names.has('go.mod') };
    const listing: DirListing = { dir, names, hasGoSibling: entries.some((e) => e.name.endsWith('.go')), real: dir.realChain[dir.realChain.length - 1] ?? this.realRoot };
    await Promise.all(entries.map((entry) => this.visitEntry(listing, entry)));
  }

  /** One entry of a directory being walked: a file, a directory to enter, a symlink to follow, or something to skip. */
  private async visitEntry(l: DirListing, entry: { name: string; kind: EntryKind }): Promise<void> {
    const { dir } = l;
    const rel = joinRel(dir.rel, entry.name);
    const abs = join(dir.abs, entry.name);
    const goVendor = dir.goVendor === true;
    if (entry.kind === 'dir') {
      // A plain directory's real path follows from its parent's, so no realpath call.
      return this.enterDir(l, entry.name, rel, abs, join(l.real, entry.name));
    }
    if (entry.kind === 'file') return this.visitFile(rel, abs, entry.name, dir.ignores, undefined, goVendor);
    if (entry.kind === 'symlink') {
      if (ALWAYS_SKIPPED_DIRS.has(entry.name)) return;
      this.checkAbort();
      const target = await this.resolveLink(rel, abs);
      if (!target) return;
      if (target.stat.kind === 'dir') return this.enterDir(l, entry.name, rel, abs, target.real);
      const outside = !isInside(this.realRoot, target.real);
      const to = outside ? undefined : relative(this.realRoot, target.real).split(sep).join('/');
      return this.visitFile(rel, abs, entry.name, dir.ignores, { stat: target.stat, outside, ...(to ? { target: to } : {}) }, goVendor);
    }
    // A FIFO or socket with a source-like name would block a reader forever.
    if (languageForPath(entry.name) !== undefined) this.skipFile(rel, 'unreadable', 'not a regular file');
    else this.unsupported(entry.name);
  }

  /** Enters a child directory unless a rule skips it, it leads out of the workspace, or it loops back. */
  private async enterDir(l: DirListing, name: string, rel: string, abs: string, real: string): Promise<void> {
    if (ALWAYS_SKIPPED_DIRS.has(name)) return;
    const here = l.dir;
    const why = this.dirSkipReason(here, rel, name, l.names, l.hasGoSibling);
    let goVendor = here.goVendor === true;
    if (why?.reason === 'go-vendor') {
      const modules = await this.limit(() => this.fs.stat(join(abs, 'modules.txt'))).catch(() => undefined);
      if (modules?.kind !== 'file') return this.skipDir(rel, 'vendored', why.detail);
      goVendor = true;
      this.goVendorDirs.push(rel);
    } else if (why) return this.skipDir(rel, why.reason, why.detail);

    if (!isInside(this.realRoot, real)) return this.skipDir(rel, 'excluded', 'outside workspace');
    // Entering a directory that contains (or is) one we are already inside would revisit it
    // forever, whichever way it was reached; checking real-path prefixes also catches a link
    // to an ancestor reached through an alias.
    const within = real.endsWith(sep) ? real : real + sep;
    if (here.realChain.some((c) => c === real || c.startsWith(within))) return this.skipDir(rel, 'symlink-loop', `links back to ${real}`);
    await this.walkDir({ abs, rel, realChain: [...here.realChain, real], ignores: here.ignores, inGoModule: here.inGoModule, goVendor });
  }
}

/** A directory being walked, as its entries see it. */
interface DirListing {
  dir: DirContext;
  /** The names of its entries (a vendored folder is decided by what lies beside it). */
  names: ReadonlySet<string>;
  hasGoSibling: boolean;
  /** Its real path. */
  real: string;
}

/** The deny list compiled once per list: one matcher per pattern, to name the one that matched. */
const denyMatchers = new WeakMap<readonly string[], Array<{ pattern: string; ig: Ignore }>>();

/**
 * The `[security] deny` pattern (gitignore syntax, case-insensitive: `.ENV` is as secret as
 * `.env`) that `rel` matches, if any. Such files are never indexed nor read by a tool.
 */
export function deniedBy(rel: string, deny: readonly string[]): string | undefined {
  let m = denyMatchers.get(deny);
  if (!m) {
    m = deny.map((pattern) => ({ pattern, ig: ignore({ ignorecase: true }).add(pattern) }));
    denyMatchers.set(deny, m);
  }
  for (const { pattern, ig } of m) {
    try {
      if (ig.ignores(rel)) return pattern;
    } catch {
      // `ignore` rejects path shapes it cannot evaluate (absolute, `..`); callers refuse those.
    }
  }
  return undefined;
}

/**
 * Whether the walk would skip `rel` (a workspace-relative file path, `/`-separated) as
 * `gitignored`: the rules of `.git/info/exclude` and of every `.gitignore` from the root down
 * to the file's folder, where a folder ignored on the way covers everything below it, as in
 * {@link discoverFiles}. Reads only those rule files.
 */
export async function isGitignored(root: string, rel: string, fs: WorkspaceFs): Promise<boolean> {
  const rootAbs = resolve(root);
  const rules = async (abs: string): Promise<Ignore | undefined> => {
    try {
      return ignore({ ignorecase: IGNORE_CASE }).add(new TextDecoder().decode(await fs.readFile(abs)));
    } catch {
      return undefined;
    }
  };
  const levels: IgnoreLevel[] = [];
  const info = await rules(join(rootAbs, '.git', 'info', 'exclude'));
  if (info) levels.push({ base: '', ig: info });
  const segs = rel.split('/').filter((s) => s !== '' && s !== '.');
  for (let i = 0; i < segs.length; i++) {
    const dir = segs.slice(0, i).join('/');
    const ig = await rules(join(rootAbs, ...segs.slice(0, i), '.gitignore'));
    if (ig) levels.push({ base: dir, ig });
    if (isIgnored(levels, segs.slice(0, i + 1).join('/'), i < segs.length - 1)) return true;
  }
  return false;
}

/**
 * Reads a discovered file through the port and classifies it, turning read errors into
 * `unreadable` (a file deleted since discovery reads as 'deleted during scan').
 */
export async function readDiscoveredFile(
  fs: WorkspaceFs,
  file: Pick<DiscoveredFile, 'path' | 'absPath' | 'language'>,
  opts: { maxFileBytes?: number } = {},
): Promise<ContentClass> {
  let bytes: Uint8Array;
  try {
    bytes = await fs.readFile(file.absPath);
  } catch (e) {
    const p = problemFor(e);
    return { ok: false, reason: p.reason, detail: p.detail };
  }
  return classifyContent(file.path, bytes, { language: file.language, ...opts });
}
