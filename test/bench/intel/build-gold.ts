/**
 * Builds the code-intelligence gold: definitions and references as real language servers
 * report them on real code nobody here wrote.
 *
 * - rxjs 7.8.2 `src/` (npm): the TypeScript LanguageService over the corpus's own
 *   `src/tsconfig.base.json` (it compiles with one lib.dom diagnostic), `types: []`.
 * - zod 4 `src/` (npm): the TypeScript LanguageService; zod ships no tsconfig in the package, so
 *   the options are ESNext + `moduleResolution: bundler` + `customConditions: ["@zod/source"]`,
 *   which is zod's own way of resolving `zod/v4` etc. to `src/` (its tests import the package
 *   by name). It compiles except for 12 imports of packages that are not installed.
 * - Django (Debian python3-django, /usr/lib/python3/dist-packages/django): pyright's language
 *   server over LSP, rootUri = dist-packages so `import django...` resolves, analysis limited to
 *   `django/` by the `python.analysis.include` setting.
 * - Go standard library (Debian golang-1.19-src, /usr/share/go-1.19/src, the `std` module):
 *   Debian's gopls over LSP, run in place with one build configuration (GO_ENV); use sites
 *   and kinds from go/types through go-scan.go. See README.md for the recipe.
 *
 * Regenerate (from the repository root; needs python3 for the Django use-site scan):
 *   npx esbuild test/bench/intel/build-gold.ts --bundle --platform=node --format=cjs \
 *     --outfile=.bench/build-gold.js --external:typescript && node .bench/build-gold.js all
 * (`rxjs`, `zod`, `django` or `go` instead of `all` for one corpus). Output is deterministic for the
 * same corpus, tool versions and SEED; only `generator.date` changes.
 *
 * What was decided:
 * - Use sites come from the syntax tree (TypeScript's own for TS, Python's `ast` for Django),
 *   never from the server, so every identifier use is a candidate and each gets a kind:
 *   `call` (plain `f()` / `new C()`), `property` (`obj.m`, `this.x`, `self.x`, `ns.f`, called
 *   or not), `type` (type references, annotations), `superclass` (`extends X`, class bases),
 *   `decorator`, `import` (the name in `import { x }` / `from m import x`), `identifier`
 *   (any other read). Declaration names are never use sites.
 * - Sampling (seeded PRNG, SEED below): candidates are shuffled, then drawn round-robin over
 *   kinds with a quota per kind (KIND_WEIGHTS), at most PER_FILE_DEFS cases per file,
 *   PER_NAME_DEFS per name, DIR_SHARE of the cases per directory (zod's 64 near-identical
 *   locale files would otherwise fill a third of the set), one case per (file, name), test
 *   files at most TEST_SHARE of the cases; kinds that run dry are topped up from the others. Cases are kept only when the server answers, every answer lies inside
 *   the corpus (lib.d.ts, typeshed, other packages drop the case), no answer is a module/file
 *   (namespace imports, `import pkg.sub`), the use is not its own answer, and, unless the use is
 *   a member access, the answer is not local to a function (parameters, locals, type
 *   parameters: scope lookup an agent rarely asks for, and trivially right for any tool).
 * - Gold positions are the declaration NAME as the server gives it, 1-based line and UTF-16
 *   column. Several answers (overloads, declaration merging, conditional definitions) are all
 *   kept; any one counts.
 * - References: candidates are top-level public functions, classes, types (TS), exported
 *   consts (TS) and public methods of those classes/interfaces; a word-count prefilter keeps
 *   names seen 3..1500 times in the corpus (below 3 cannot have 2 references; above 1500 the
 *   server query gets slow and the count is almost surely over 200); then the server's
 *   references, inside the corpus and minus every declaration of the symbol, must number
 *   2..200. Quotas per kind (REF_WEIGHTS), at most PER_FILE_REFS per file, one per name,
 *   REF_DIR_SHARE per directory.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import ts from 'typescript';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';
import {
  corpusFiles,
  parseIntelGold,
  type DefinitionKind,
  type GoldDefinitionCase,
  type GoldLocation,
  type GoldReferenceCase,
  type IntelGold,
  type ReferenceKind,
} from './ctags-baseline';

const SEED = 20260514;
const DEFINITION_TARGET = 300;
const REFERENCE_TARGET = 40;
const PER_FILE_DEFS = 3;
const PER_FILE_REFS = 2;
const PER_NAME_DEFS = 3;
const DIR_SHARE = 0.2;
const REF_DIR_SHARE = 0.3;
const TEST_SHARE = 0.25;
const MIN_REFS = 2;
const MAX_REFS = 200;
const MAX_WORD_COUNT = 1500;
const SCRIPT = 'test/bench/intel/build-gold.ts';
const OUT_DIR = 'test/bench/intel';

// Member accesses are the hard cases without types, so they get the biggest share; `import`
// and `superclass` are rarer in code but are what agents ask about when reading a file.
const KIND_WEIGHTS: Record<'typescript' | 'python', Partial<Record<DefinitionKind, number>>> = {
  typescript: { property: 0.28, call: 0.22, type: 0.18, import: 0.12, superclass: 0.08, identifier: 0.12 },
  // Django 3.2 has no type annotations, so Python has no `type` cases.
  python: { property: 0.3, call: 0.25, import: 0.14, superclass: 0.1, decorator: 0.07, identifier: 0.14 },
};
const REF_WEIGHTS: Record<'typescript' | 'python', Partial<Record<ReferenceKind, number>>> = {
  typescript: { function: 0.25, class: 0.2, type: 0.2, method: 0.2, const: 0.15 },
  python: { function: 0.3, class: 0.35, method: 0.35 },
};

interface Site {
  /** Corpus-relative POSIX path. */
  path: string;
  line: number;
  col: number;
  name: string;
}
interface UseSite extends Site {
  kind: DefinitionKind;
}
interface DeclSite extends Site {
  kind: ReferenceKind;
  /** Go: `fmt.Sprintf`, `http.Server.Serve`. */
  qualified?: string;
}

// ---------------------------------------------------------------------------------------------
// Deterministic sampling

/** mulberry32: tiny, seedable, good enough to shuffle. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffle<T>(xs: readonly T[], rand: () => number): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

interface DrawOptions<K extends string> {
  target: number;
  weights: Partial<Record<K, number>>;
  perFileCap: number;
  /** At most this many cases of one name (across files). */
  perNameCap: number;
  /** At most this share of the target from one directory. */
  dirShare: number;
  isTest?: (p: string) => boolean;
  testShare?: number;
}

/**
 * Draws accepted cases round-robin over kinds, each kind up to its quota, then tops up from
 * whatever kinds still have candidates. `resolve` asks the server and returns null to reject.
 */
async function draw<K extends string, S extends Site & { kind: K }, R>(
  candidates: readonly S[],
  opts: DrawOptions<K>,
  rand: () => number,
  resolve: (s: S) => Promise<R | null>,
): Promise<Array<{ site: S; result: R }>> {
  const kinds = Object.keys(opts.weights) as K[];
  const queues = new Map<K, S[]>(kinds.map((k) => [k, []]));
  for (const s of shuffle(candidates, rand)) queues.get(s.kind)?.push(s);
  const quota = new Map(kinds.map((k) => [k, Math.round((opts.weights[k] ?? 0) * opts.target)]));
  const taken = new Map<K, number>(kinds.map((k) => [k, 0]));
  const perFile = new Map<string, number>();
  const perName = new Map<string, number>();
  const perDir = new Map<string, number>();
  const maxPerDir = Math.ceil(opts.dirShare * opts.target);
  const seen = new Set<string>();
  const maxTests = Math.floor((opts.testShare ?? 1) * opts.target);
  let tests = 0;
  const bump = (m: Map<string, number>, k: string): void => void m.set(k, (m.get(k) ?? 0) + 1);
  const out: Array<{ site: S; result: R }> = [];

  const next = async (k: K): Promise<boolean> => {
    const q = queues.get(k)!;
    for (let s = q.shift(); s; s = q.shift()) {
      const isTest = opts.isTest?.(s.path) ?? false;
      const dir = path.posix.dirname(s.path);
      if (
        (perFile.get(s.path) ?? 0) >= opts.perFileCap ||
        (perName.get(s.name) ?? 0) >= opts.perNameCap ||
        (perDir.get(dir) ?? 0) >= maxPerDir ||
        seen.has(`${s.path}\0${s.name}`) ||
        (isTest && tests >= maxTests)
      )
        continue;
      const result = await resolve(s);
      if (result === null) continue;
      seen.add(`${s.path}\0${s.name}`);
      bump(perFile, s.path);
      bump(perName, s.name);
      bump(perDir, dir);
      if (isTest) tests++;
      taken.set(k, taken.get(k)! + 1);
      out.push({ site: s, result });
      return true;
    }
    return false;
  };

  for (const respectQuota of [true, false]) {
    let progress = true;
    while (progress && out.length < opts.target) {
      progress = false;
      for (const k of kinds) {
        if (out.length >= opts.target) break;
        if (respectQuota && taken.get(k)! >= quota.get(k)!) continue;
        if (await next(k)) progress = true;
      }
    }
  }
  return out;
}

const byPosition = (a: Site | GoldLocation, b: Site | GoldLocation): number =>
  a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line || a.col - b.col;
const key = (l: GoldLocation): string => `${l.path}:${l.line}:${l.col}`;
function uniqueSorted(locs: GoldLocation[]): GoldLocation[] {
  const m = new Map(locs.map((l) => [key(l), l]));
  return [...m.values()].sort(byPosition);
}

function progress(msg: string): void {
  process.stderr.write(`${msg}\n`);
}

// ---------------------------------------------------------------------------------------------
// TypeScript: the LanguageService over the corpus

interface TsCorpus {
  name: 'rxjs' | 'zod';
  root: string;
  rootRel: string;
  options: () => { options: ts.CompilerOptions; files: string[] };
  isTest: (p: string) => boolean;
}

const TS_CORPORA = (repo: string): TsCorpus[] => [
  {
    name: 'rxjs',
    root: path.join(repo, 'node_modules/rxjs/src'),
    rootRel: 'node_modules/rxjs/src',
    options: () => {
      const cfg = path.join(repo, 'node_modules/rxjs/src/tsconfig.base.json');
      const host: ts.ParseConfigFileHost = {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: (d) => {
          throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
        },
      };
      const parsed = ts.getParsedCommandLineOfConfigFile(cfg, {}, host);
      if (!parsed) throw new Error(`cannot read ${cfg}`);
      // No ambient @types: the repository's own (node, vscode) are not rxjs's environment.
      return { options: { ...parsed.options, types: [], noEmit: true, incremental: false }, files: parsed.fileNames };
    },
    isTest: () => false,
  },
  {
    name: 'zod',
    root: path.join(repo, 'node_modules/zod/src'),
    rootRel: 'node_modules/zod/src',
    options: () => {
      const root = path.join(repo, 'node_modules/zod/src');
      return {
        options: {
          target: ts.ScriptTarget.ESNext,
          module: ts.ModuleKind.ESNext,
          moduleResolution: ts.ModuleResolutionKind.Bundler,
          customConditions: ['@zod/source'],
          strict: true,
          lib: ['lib.esnext.d.ts', 'lib.dom.d.ts'],
          types: ['node'],
          typeRoots: [path.join(repo, 'node_modules/@types')],
          skipLibCheck: true,
          noEmit: true,
        },
        files: corpusFiles(root, 'typescript').map((f) => path.join(root, f)),
      };
    },
    isTest: (p) => /(^|\/)tests\//.test(p) || /\.test\.ts$/.test(p),
  },
];

function createService(root: string, options: ts.CompilerOptions, files: string[]): ts.LanguageService {
  const host: ts.LanguageServiceHost = {
    getScriptFileNames: () => files,
    getScriptVersion: () => '1',
    getScriptSnapshot: (f) => {
      const text = ts.sys.readFile(f);
      return text === undefined ? undefined : ts.ScriptSnapshot.fromString(text);
    },
    getCurrentDirectory: () => root,
    getCompilationSettings: () => options,
    getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
    fileExists: (f) => ts.sys.fileExists(f),
    readFile: (f, enc) => ts.sys.readFile(f, enc),
    readDirectory: (...a) => ts.sys.readDirectory(...a),
    directoryExists: (d) => ts.sys.directoryExists(d),
    getDirectories: (d) => ts.sys.getDirectories(d),
  };
  return ts.createLanguageService(host, ts.createDocumentRegistry());
}

/** The kind of a use of `id`, or undefined when `id` is not a use (a declaration name, a label...). */
function classifyTsIdentifier(id: ts.Identifier): DefinitionKind | undefined {
  const p = id.parent;
  if (ts.isImportSpecifier(p)) return (p.propertyName ?? p.name) === id ? 'import' : undefined;
  if (ts.isExportSpecifier(p)) return (p.propertyName ?? p.name) === id && p.parent.parent.moduleSpecifier ? 'import' : undefined;
  if (ts.isImportClause(p)) return 'import';
  // The node whose role decides the kind: `a.b` as a whole when id is its `b`.
  const e: ts.Node = ts.isPropertyAccessExpression(p) && p.name === id ? p : id;
  if (e === id && (p as { name?: ts.Node }).name === id) return undefined; // declaration names
  if (ts.isExpressionWithTypeArguments(e.parent) && e.parent.expression === e) {
    const h = e.parent.parent;
    if (ts.isHeritageClause(h)) return h.token === ts.SyntaxKind.ExtendsKeyword ? 'superclass' : 'type';
    return 'type';
  }
  if (ts.isDecorator(e.parent) || (ts.isCallExpression(e.parent) && e.parent.expression === e && ts.isDecorator(e.parent.parent))) return 'decorator';
  if (e !== id) return 'property';
  if (ts.isPropertyAccessExpression(p)) return 'identifier'; // the object of `id.b`
  if ((ts.isCallExpression(p) || ts.isNewExpression(p)) && p.expression === id) return 'call';
  if (ts.isTypeReferenceNode(p) || (ts.isQualifiedName(p) && p.right === id)) return 'type';
  if (ts.isQualifiedName(p)) return 'identifier';
  if (
    ts.isShorthandPropertyAssignment(p) ||
    ts.isLabeledStatement(p) ||
    ts.isBreakOrContinueStatement(p) ||
    ts.isMetaProperty(p) ||
    ts.isNamespaceImport(p) ||
    ts.isNamespaceExport(p) ||
    (ts.isBindingElement(p) && p.propertyName === id) ||
    ts.isJsxAttribute(p)
  )
    return undefined;
  return 'identifier';
}

function tsLoc(sf: ts.SourceFile, pos: number, root: string): GoldLocation {
  const lc = sf.getLineAndCharacterOfPosition(pos);
  return { path: path.relative(root, sf.fileName).split(path.sep).join('/'), line: lc.line + 1, col: lc.character + 1 };
}

function tsUseSites(sf: ts.SourceFile, root: string): Array<UseSite & { offset: number }> {
  const out: Array<UseSite & { offset: number }> = [];
  const visit = (n: ts.Node): void => {
    if (ts.isIdentifier(n)) {
      const kind = classifyTsIdentifier(n);
      if (kind) {
        const offset = n.getStart(sf);
        out.push({ ...tsLoc(sf, offset, root), name: n.text, kind, offset });
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

function identifierAt(sf: ts.SourceFile, pos: number): ts.Identifier | undefined {
  let found: ts.Identifier | undefined;
  const visit = (n: ts.Node): void => {
    if (found || pos < n.pos || pos >= n.end) return;
    if (ts.isIdentifier(n) && n.getStart(sf) === pos) found = n;
    else ts.forEachChild(n, visit);
  };
  visit(sf);
  return found;
}

/**
 * The declaration a definition answer points into: the outermost node starting at `pos`, or
 * the declaration that an identifier at `pos` names. Answers are usually a name, but a
 * signature (`new () => T`) or an anonymous default export starts at its first token.
 */
function declarationAt(sf: ts.SourceFile, pos: number): ts.Node | undefined {
  let found: ts.Node | undefined;
  const visit = (n: ts.Node): void => {
    if (found || pos < n.pos || pos >= n.end) return;
    if (n.getStart(sf) === pos) found = n;
    else ts.forEachChild(n, visit);
  };
  ts.forEachChild(sf, visit);
  return found && ts.isIdentifier(found) ? found.parent : found;
}

/** Whether a declaration lives inside a function: parameters, locals, type parameters. */
function isLocalTsDeclaration(decl: ts.Node): boolean {
  if (ts.isParameter(decl) || ts.isTypeParameterDeclaration(decl)) return true;
  for (let n: ts.Node | undefined = decl.parent; n && !ts.isSourceFile(n); n = n.parent)
    if (ts.isFunctionLike(n) || ts.isParameter(n)) return true;
  return false;
}

function hasExport(n: ts.Node): boolean {
  return ts.canHaveModifiers(n) && (ts.getModifiers(n)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) ?? false);
}

function tsDeclSites(sf: ts.SourceFile, root: string): Array<DeclSite & { offset: number }> {
  const out: Array<DeclSite & { offset: number }> = [];
  const seen = new Set<string>();
  const add = (name: ts.Node | undefined, kind: ReferenceKind): void => {
    if (!name || !ts.isIdentifier(name) || name.text.startsWith('#')) return;
    const offset = name.getStart(sf);
    const k = `${kind}:${name.text}`;
    if (seen.has(k)) return; // overloads: the first signature stands for all
    seen.add(k);
    out.push({ ...tsLoc(sf, offset, root), name: name.text, kind, offset });
  };
  const isPrivate = (m: ts.Node): boolean =>
    ts.canHaveModifiers(m) && (ts.getModifiers(m)?.some((x) => x.kind === ts.SyntaxKind.PrivateKeyword) ?? false);
  for (const s of sf.statements) {
    if (!hasExport(s)) continue;
    if (ts.isFunctionDeclaration(s)) add(s.name, 'function');
    else if (ts.isClassDeclaration(s) || ts.isInterfaceDeclaration(s)) {
      add(s.name, ts.isClassDeclaration(s) ? 'class' : 'type');
      for (const m of s.members)
        if ((ts.isMethodDeclaration(m) || ts.isMethodSignature(m)) && !isPrivate(m)) add(m.name, 'method');
    } else if (ts.isTypeAliasDeclaration(s) || ts.isEnumDeclaration(s)) add(s.name, 'type');
    else if (ts.isVariableStatement(s)) for (const d of s.declarationList.declarations) add(d.name, 'const');
  }
  return out;
}

/** Counts word occurrences of every identifier-like token across the corpus (the prefilter). */
function wordCounts(root: string, files: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const f of files) {
    const text = readFileSync(path.join(root, f), 'utf8');
    for (const m of text.matchAll(/[\p{ID_Start}_$][\p{ID_Continue}$]*/gu)) counts.set(m[0], (counts.get(m[0]) ?? 0) + 1);
  }
  return counts;
}

async function buildTsGold(repo: string, c: TsCorpus): Promise<IntelGold> {
  const { options, files } = c.options();
  const ls = createService(c.root, options, files);
  const t0 = performance.now();
  const program = ls.getProgram();
  if (!program) throw new Error('no program');
  const inCorpus = (f: string): boolean => f.startsWith(c.root + path.sep) && !f.includes(`${path.sep}node_modules${path.sep}`, c.root.length);
  const sources = program.getSourceFiles().filter((sf) => inCorpus(sf.fileName) && !sf.isDeclarationFile);
  progress(`${c.name}: ${sources.length} files, program in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const rand = prng(SEED);

  const uses = sources.flatMap((sf) => tsUseSites(sf, c.root));
  const offsets = new Map(uses.map((u) => [key(u), u.offset]));
  progress(`${c.name}: ${uses.length} use sites`);
  const resolveDefinition = (u: UseSite): Promise<GoldLocation[] | null> => {
    const file = path.join(c.root, u.path);
    const defs = ls.getDefinitionAtPosition(file, offsets.get(key(u))!) ?? [];
    if (defs.length === 0) return Promise.resolve(null);
    const gold: GoldLocation[] = [];
    for (const d of defs) {
      if (!inCorpus(d.fileName) || d.kind === ts.ScriptElementKind.moduleElement || d.kind === ts.ScriptElementKind.scriptElement) return Promise.resolve(null);
      const sf = program.getSourceFile(d.fileName);
      if (!sf) return Promise.resolve(null);
      const decl = declarationAt(sf, d.textSpan.start);
      // `import * as ns` names a module, as `import x = require()` does: not a symbol's definition.
      if (decl && (ts.isNamespaceImport(decl) || ts.isImportEqualsDeclaration(decl))) return Promise.resolve(null);
      if (u.kind !== 'property' && decl && isLocalTsDeclaration(decl)) return Promise.resolve(null);
      gold.push(tsLoc(sf, d.textSpan.start, c.root));
    }
    if (gold.some((g) => key(g) === key(u))) return Promise.resolve(null);
    return Promise.resolve(uniqueSorted(gold));
  };
  const defs = await draw(
    uses,
    { target: DEFINITION_TARGET, weights: KIND_WEIGHTS.typescript, perFileCap: PER_FILE_DEFS, perNameCap: PER_NAME_DEFS, dirShare: DIR_SHARE, isTest: c.isTest, testShare: TEST_SHARE },
    rand,
    resolveDefinition,
  );
  progress(`${c.name}: ${defs.length} definition cases`);

  const checker = program.getTypeChecker();
  const decls = sources.flatMap((sf) => tsDeclSites(sf, c.root));
  const declOffsets = new Map(decls.map((d) => [key(d), d.offset]));
  const counts = wordCounts(c.root, sources.map((sf) => path.relative(c.root, sf.fileName)));
  const resolveReferences = (d: DeclSite): Promise<GoldLocation[] | null> => {
    const n = counts.get(d.name) ?? 0;
    if (n < MIN_REFS + 1 || n > MAX_WORD_COUNT) return Promise.resolve(null);
    const file = path.join(c.root, d.path);
    const offset = declOffsets.get(key(d))!;
    const sf = program.getSourceFile(file)!;
    const id = identifierAt(sf, offset);
    const symbol = id && checker.getSymbolAtLocation(id);
    // Every declaration of the symbol (overloads, interface + const merging) is not a reference.
    const declarations = new Set<string>();
    for (const decl of symbol?.declarations ?? []) {
      const name = ts.getNameOfDeclaration(decl);
      if (name) declarations.add(key(tsLoc(decl.getSourceFile(), name.getStart(decl.getSourceFile()), c.root)));
    }
    declarations.add(key(d));
    const refs: GoldLocation[] = [];
    for (const group of ls.findReferences(file, offset) ?? []) {
      for (const r of group.references) {
        if (!inCorpus(r.fileName)) continue;
        const rsf = program.getSourceFile(r.fileName);
        if (!rsf) continue;
        const loc = tsLoc(rsf, r.textSpan.start, c.root);
        if (!declarations.has(key(loc))) refs.push(loc);
      }
    }
    const gold = uniqueSorted(refs);
    return Promise.resolve(gold.length >= MIN_REFS && gold.length <= MAX_REFS ? gold : null);
  };
  const refs = await draw(decls, { target: REFERENCE_TARGET, weights: REF_WEIGHTS.typescript, perFileCap: PER_FILE_REFS, perNameCap: 1, dirShare: REF_DIR_SHARE }, rand, resolveReferences);
  progress(`${c.name}: ${refs.length} reference cases`);

  const pkg = JSON.parse(readFileSync(path.join(c.root, '..', 'package.json'), 'utf8')) as { version: string };
  return assemble({
    corpus: c.name,
    root: c.rootRel,
    language: 'typescript',
    corpusVersion: pkg.version,
    tool: 'typescript LanguageService',
    toolVersion: ts.version,
    notes: [
      c.name === 'rxjs'
        ? 'compiler options: src/tsconfig.base.json (rxjs own), types: []'
        : 'compiler options: ESNext, moduleResolution bundler, customConditions ["@zod/source"] (zod resolves its own package name to src/ this way), lib esnext+dom, types node',
    ],
    defs,
    refs,
  });
}

// ---------------------------------------------------------------------------------------------
// Python: pyright over LSP, use sites from Python's own ast

const DJANGO_ROOT = '/usr/lib/python3/dist-packages/django';

// Run by python3: one JSON line per file path read from stdin. Columns are converted from the
// ast's UTF-8 byte offsets to 1-based UTF-16 columns, the unit of the gold (and of LSP).
const PY_SCAN = String.raw`
import ast, json, re, sys

def scan(path):
    src = open(path, 'rb').read()
    tree = ast.parse(src, filename=path)
    lines = src.split(b'\n')
    def pos(line, byte_col):
        return [line, len(lines[line - 1][:byte_col].decode('utf-8', 'replace').encode('utf-16-le')) // 2 + 1]
    def name_pos(node, keyword):
        m = re.compile(rb'\b' + keyword + rb'\s+(' + re.escape(node.name.encode()) + rb')\b').search(lines[node.lineno - 1], node.col_offset)
        return pos(node.lineno, m.start(1)) if m else None
    uses, functions, decls = [], [], []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith('_'):
            decls.append({'pos': name_pos(node, rb'def'), 'name': node.name, 'kind': 'function'})
        elif isinstance(node, ast.ClassDef) and not node.name.startswith('_'):
            decls.append({'pos': name_pos(node, rb'class'), 'name': node.name, 'kind': 'class'})
            for m in node.body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and not m.name.startswith('_'):
                    decls.append({'pos': name_pos(m, rb'def'), 'name': m.name, 'kind': 'method'})
    def visit(node, ctx):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            functions.append({'start': pos(node.lineno, node.col_offset), 'end': pos(node.end_lineno, node.end_col_offset),
                              'name': None if isinstance(node, ast.Lambda) else name_pos(node, rb'def')})
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            uses.append({'pos': pos(node.lineno, node.col_offset), 'name': node.id,
                         'kind': ctx if ctx in ('call', 'superclass', 'decorator', 'type') else 'identifier'})
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            # The attribute name ends the node; the ast gives no position of its own for it.
            start = node.end_col_offset - len(node.attr.encode('utf-8'))
            if lines[node.end_lineno - 1][start:node.end_col_offset] == node.attr.encode('utf-8'):
                uses.append({'pos': pos(node.end_lineno, start), 'name': node.attr,
                             'kind': ctx if ctx in ('superclass', 'decorator', 'type') else 'property'})
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                if a.name != '*':
                    uses.append({'pos': pos(a.lineno, a.col_offset), 'name': a.name, 'kind': 'import'})
            return
        for field, value in ast.iter_fields(node):
            for child in (value if isinstance(value, list) else [value]):
                if not isinstance(child, ast.AST):
                    continue
                if ctx == 'type':
                    c = 'type'
                elif isinstance(node, ast.ClassDef) and field == 'bases':
                    c = 'superclass'
                elif field == 'decorator_list':
                    c = 'decorator'
                elif field in ('annotation', 'returns'):
                    c = 'type'
                elif isinstance(node, ast.Call) and field == 'func':
                    c = 'decorator' if ctx == 'decorator' else 'call'
                else:
                    c = None
                visit(child, c)
    visit(tree, None)
    return {'uses': uses, 'functions': functions, 'decls': [d for d in decls if d['pos']]}

for line in sys.stdin:
    p = line.strip()
    if not p:
        continue
    try:
        out = scan(p)
    except (SyntaxError, ValueError) as e:
        out = {'error': str(e)}
    out['path'] = p
    print(json.dumps(out))
`;

interface PyScan {
  path: string;
  error?: string;
  uses: Array<{ pos: [number, number]; name: string; kind: DefinitionKind }>;
  functions: Array<{ start: [number, number]; end: [number, number]; name: [number, number] | null }>;
  decls: Array<{ pos: [number, number]; name: string; kind: ReferenceKind }>;
}

function scanPython(root: string, files: string[]): Map<string, PyScan> {
  const r = spawnSync('python3', ['-c', PY_SCAN], {
    input: files.map((f) => path.join(root, f)).join('\n'),
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  if (r.status !== 0) throw new Error(`python3 ast scan failed: ${r.error?.message ?? r.stderr}`);
  const out = new Map<string, PyScan>();
  for (const line of r.stdout.split('\n')) {
    if (!line) continue;
    const s = JSON.parse(line) as PyScan;
    const rel = path.relative(root, s.path).split(path.sep).join('/');
    if (s.error) progress(`django: skip ${rel}: ${s.error}`);
    else out.set(rel, s);
  }
  return out;
}

const before = (a: readonly [number, number], b: readonly [number, number]): boolean => a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);

/** Whether `loc` lies inside a function (its parameters or body) other than as that function's own name. */
function isLocalPy(scan: PyScan | undefined, loc: GoldLocation): boolean {
  const p: [number, number] = [loc.line, loc.col];
  return (scan?.functions ?? []).some(
    (f) => !before(p, f.start) && before(p, f.end) && !(f.name && f.name[0] === p[0] && f.name[1] === p[1]),
  );
}

interface LspLocation {
  uri: string;
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
}

interface LspStart {
  command: string;
  args: string[];
  /** The workspace folder (rootUri). */
  workspace: string;
  version: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Answers to `workspace/configuration`, by section. */
  settings?: Record<string, unknown>;
  /** Send `didOpen` before asking about a file (pyright); gopls reads unopened files from disk. */
  openFiles?: { languageId: string };
  /** Where the server's stderr goes (its log); nowhere by default. */
  stderrFile?: string;
}

/** A language server spoken to over stdio, as an editor would. */
class LspServer {
  private constructor(
    private readonly conn: MessageConnection,
    private readonly proc: ReturnType<typeof spawn>,
    readonly version: string,
    private readonly openFiles: LspStart['openFiles'],
    private readonly died: Promise<never>,
  ) {}

  static async start(o: LspStart): Promise<LspServer> {
    const proc = spawn(o.command, o.args, { stdio: ['pipe', 'pipe', o.stderrFile ? openSync(o.stderrFile, 'w') : 'ignore'], cwd: o.cwd, env: o.env ?? process.env });
    // A server that dies leaves its requests unanswered: they fail instead (gopls panics on a
    // few interface-method reference searches; the caller starts a new one).
    const died = new Promise<never>((_, reject) =>
      proc.on('exit', (code, signal) => reject(new Error(`${o.command} exited (${signal ?? code})${o.stderrFile ? `; its log: ${o.stderrFile}` : ''}`))),
    );
    died.catch(() => undefined);
    const conn = createMessageConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
    const settings = o.settings ?? {};
    conn.onRequest('workspace/configuration', (params: { items: Array<{ section?: string }> }) =>
      params.items.map((i) => settings[i.section ?? ''] ?? {}),
    );
    conn.onRequest('client/registerCapability', () => null);
    conn.onRequest('window/workDoneProgress/create', () => null);
    conn.listen();
    const rootUri = pathToFileURL(o.workspace).href;
    await conn.sendRequest('initialize', {
      processId: process.pid,
      rootUri,
      workspaceFolders: [{ uri: rootUri, name: path.basename(o.workspace) }],
      capabilities: {
        workspace: { configuration: true, workspaceFolders: true },
        textDocument: { definition: {}, references: {}, synchronization: {} },
      },
    });
    await conn.sendNotification('initialized', {});
    return new LspServer(conn, proc, o.version, o.openFiles, died);
  }

  get alive(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** pyright, as the Django gold was built: `pyright-langserver --stdio` from node_modules. */
  static pyright(repo: string, workspace: string, include: string): Promise<LspServer> {
    const pkgDir = path.join(repo, 'node_modules/pyright');
    const version = (JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as { version: string }).version;
    return LspServer.start({
      command: process.execPath,
      args: [path.join(pkgDir, 'langserver.index.js'), '--stdio'],
      workspace,
      version,
      settings: {
        python: {},
        'python.analysis': { include: [include], diagnosticMode: 'openFilesOnly', useLibraryCodeForTypes: true, autoSearchPaths: true },
        pyright: {},
      },
      openFiles: { languageId: 'python' },
    });
  }

  private opened = new Set<string>();
  async open(file: string): Promise<string> {
    const uri = pathToFileURL(file).href;
    if (this.openFiles && !this.opened.has(uri)) {
      this.opened.add(uri);
      await this.conn.sendNotification('textDocument/didOpen', {
        textDocument: { uri, languageId: this.openFiles.languageId, version: 1, text: readFileSync(file, 'utf8') },
      });
    }
    return uri;
  }

  async definition(file: string, line: number, col: number): Promise<LspLocation[]> {
    const uri = await this.open(file);
    const r = await Promise.race([
      this.conn.sendRequest<LspLocation | LspLocation[] | null>('textDocument/definition', {
        textDocument: { uri },
        position: { line: line - 1, character: col - 1 },
      }),
      this.died,
    ]);
    return r === null ? [] : Array.isArray(r) ? r : [r];
  }

  async references(file: string, line: number, col: number): Promise<LspLocation[]> {
    const uri = await this.open(file);
    return (
      (await Promise.race([
        this.conn.sendRequest<LspLocation[] | null>('textDocument/references', {
          textDocument: { uri },
          position: { line: line - 1, character: col - 1 },
          context: { includeDeclaration: false },
        }),
        this.died,
      ])) ?? []
    );
  }

  async stop(): Promise<void> {
    if (!this.alive) return;
    await this.conn.sendRequest('shutdown');
    await this.conn.sendNotification('exit');
    this.conn.dispose();
    this.proc.kill();
  }
}

async function buildDjangoGold(repo: string): Promise<IntelGold> {
  const root = DJANGO_ROOT;
  const files = corpusFiles(root, 'python');
  const scans = scanPython(root, files);
  const toLoc = (l: LspLocation): GoldLocation | null => {
    const file = fileURLToPath(l.uri);
    if (!file.startsWith(root + path.sep)) return null;
    return { path: path.relative(root, file).split(path.sep).join('/'), line: l.range.start.line + 1, col: l.range.start.character + 1 };
  };
  // A module answer (`from django.db import models` names a package) is an empty range at 0:0.
  const isModule = (l: LspLocation): boolean =>
    l.range.start.line === 0 && l.range.start.character === 0 && l.range.end.line === 0 && l.range.end.character === 0;

  const server = await LspServer.pyright(repo, path.dirname(root), path.basename(root));
  try {
    const rand = prng(SEED);
    const uses: UseSite[] = [...scans].flatMap(([rel, s]) => s.uses.map((u) => ({ path: rel, line: u.pos[0], col: u.pos[1], name: u.name, kind: u.kind })));
    progress(`django: ${scans.size} files, ${uses.length} use sites`);
    let asked = 0;
    const t0 = performance.now();
    const resolveDefinition = async (u: UseSite): Promise<GoldLocation[] | null> => {
      if (++asked % 100 === 0) progress(`django: ${asked} definitions asked, ${((performance.now() - t0) / 1000).toFixed(0)} s`);
      const answers = await server.definition(path.join(root, u.path), u.line, u.col);
      if (answers.length === 0) return null;
      const gold: GoldLocation[] = [];
      for (const a of answers) {
        const loc = toLoc(a);
        if (!loc || isModule(a)) return null;
        if (u.kind !== 'property' && loc.path === u.path && isLocalPy(scans.get(u.path), loc)) return null;
        gold.push(loc);
      }
      if (gold.some((g) => key(g) === key(u))) return null;
      return uniqueSorted(gold);
    };
    const defs = await draw(uses, { target: DEFINITION_TARGET, weights: KIND_WEIGHTS.python, perFileCap: PER_FILE_DEFS, perNameCap: PER_NAME_DEFS, dirShare: DIR_SHARE }, rand, resolveDefinition);
    progress(`django: ${defs.length} definition cases (${asked} asked)`);

    const counts = wordCounts(root, files);
    const decls: DeclSite[] = [...scans].flatMap(([rel, s]) => s.decls.map((d) => ({ path: rel, line: d.pos[0], col: d.pos[1], name: d.name, kind: d.kind })));
    const resolveReferences = async (d: DeclSite): Promise<GoldLocation[] | null> => {
      const n = counts.get(d.name) ?? 0;
      if (n < MIN_REFS + 1 || n > MAX_WORD_COUNT) return null;
      const answers = await server.references(path.join(root, d.path), d.line, d.col);
      const gold = uniqueSorted(answers.map(toLoc).filter((l): l is GoldLocation => l !== null && key(l) !== key(d)));
      return gold.length >= MIN_REFS && gold.length <= MAX_REFS ? gold : null;
    };
    const refs = await draw(decls, { target: REFERENCE_TARGET, weights: REF_WEIGHTS.python, perFileCap: PER_FILE_REFS, perNameCap: 1, dirShare: REF_DIR_SHARE }, rand, resolveReferences);
    progress(`django: ${refs.length} reference cases`);

    const version = spawnSync('dpkg-query', ['-W', '-f', '${Version}', 'python3-django'], { encoding: 'utf8' }).stdout.trim() || 'unknown';
    return assemble({
      corpus: 'django',
      root,
      language: 'python',
      corpusVersion: `python3-django ${version}`,
      tool: 'pyright-langserver (LSP)',
      toolVersion: server.version,
      notes: [
        `rootUri ${path.dirname(root)}, python.analysis.include ["${path.basename(root)}"], diagnosticMode openFilesOnly`,
        'use sites and kinds from python3 ast; columns converted from UTF-8 bytes to UTF-16',
      ],
      defs,
      refs,
    });
  } finally {
    await server.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// Go: gopls over LSP, use sites from go/types (go-scan.go)

const GO_ROOT = '/usr/share/go-1.19/src';
/**
 * The one build configuration both gopls and go-scan see: linux/amd64 without cgo (no C
 * compiler needed; the pure-Go resolver files of `net` are the ones analysed), the std module's
 * vendor directory, and no module downloads (GOPROXY=off: gopls's `go mod tidy` check of
 * GOROOT/src/go.mod then fails with "module lookup disabled", which is only a diagnostic).
 */
const GO_ENV: Record<string, string> = { GOOS: 'linux', GOARCH: 'amd64', CGO_ENABLED: '0', GOPROXY: 'off', GOFLAGS: '-mod=vendor', GOWORK: 'off', GO111MODULE: 'on' };
const GO_KIND_WEIGHTS: Partial<Record<DefinitionKind, number>> = { property: 0.24, qualified: 0.22, type: 0.14, call: 0.12, identifier: 0.12, promoted: 0.1, embedded: 0.06 };
const GO_REF_WEIGHTS: Partial<Record<ReferenceKind, number>> = { function: 0.3, method: 0.35, type: 0.2, const: 0.15 };
/** Named by the issue that asked for this gold: the first three reference sets, always. */
const GO_PINNED = ['fmt.Sprintf', 'errors.New', 'http.Server.Serve'];
/** More sets drawn among symbols with thousands of uses (go/types counts at least GO_MANY_MIN). */
const GO_MANY = 3;
const GO_MANY_MIN = 1000;
const GO_MANY_MAX = 10_000;
/** Sets drawn among methods that some use reaches through an embedded field. */
const GO_PROMOTED = 3;
const GO_MAX_REFS = 300;

interface GoScanFile {
  path: string;
  package: string;
  uses: Array<[number, number, string, DefinitionKind, string]>;
  decls: Array<[number, number, string, ReferenceKind, string]>;
}

/** Builds go-scan.go with the system Go (GOPATH mode: one file, standard library only) and runs it. */
function scanGo(repo: string, root: string): { files: GoScanFile[]; analysed: string[]; names: Map<string, number>; interfaceMethods: Set<string> } {
  const bin = path.join(repo, '.bench', 'go-scan');
  mkdirSync(path.dirname(bin), { recursive: true });
  const env = { ...process.env, GO111MODULE: 'off', GOFLAGS: '', GOPROXY: 'off' };
  const b = spawnSync('go', ['build', '-o', bin, path.join(repo, OUT_DIR, 'go-scan.go')], { env, encoding: 'utf8' });
  if (b.status !== 0) throw new Error(`go build go-scan.go failed: ${b.error?.message ?? b.stderr}`);
  const r = spawnSync(bin, [root], { env: { ...process.env, ...GO_ENV }, encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`go-scan failed: ${r.error?.message ?? r.stderr}`);
  const typeErrors = r.stderr.split('\n').filter((l) => l.includes('type errors')).length;
  if (typeErrors) progress(`go: ${typeErrors} packages with type errors in go-scan (x_test packages seeing two copies of their package, builtin); their unresolved uses are not candidates`);
  const files: GoScanFile[] = [];
  let analysed: string[] = [];
  let names = new Map<string, number>();
  let interfaceMethods = new Set<string>();
  for (const line of r.stdout.split('\n')) {
    if (!line) continue;
    const o = JSON.parse(line) as { scope?: string[]; names?: Record<string, number>; interfaceMethods?: string[] } & Partial<GoScanFile>;
    if (o.scope) analysed = o.scope;
    else if (o.names) names = new Map(Object.entries(o.names));
    else if (o.interfaceMethods) interfaceMethods = new Set(o.interfaceMethods);
    else files.push(o as GoScanFile);
  }
  return { files, analysed, names, interfaceMethods };
}

function goToolVersions(): { gopls: string; go: string } {
  const deb = (pkg: string): string => spawnSync('dpkg-query', ['-W', '-f', '${Version}', pkg], { encoding: 'utf8' }).stdout.trim();
  // Debian's gopls binary reports "master" for its version. Debian builds it from its
  // golang.org/x/tools package, so the package version is the x/tools release (v0.5.0 is the
  // gopls v0.11 line), not a gopls release number.
  const gopls = deb('gopls');
  const go = spawnSync('go', ['version'], { encoding: 'utf8' }).stdout.trim();
  return { gopls: gopls ? `golang.org/x/tools v${gopls.replace(/^\d+:/, '').replace(/\+.*$/, '')} (Debian gopls ${gopls})` : 'unknown', go };
}

async function buildGoGold(repo: string): Promise<IntelGold> {
  const root = GO_ROOT;
  const t0 = performance.now();
  const scan = scanGo(repo, root);
  const analysed = new Set(scan.analysed);
  progress(`go: go-scan ${((performance.now() - t0) / 1000).toFixed(0)} s, ${scan.files.length} files analysed, ${scan.files.reduce((n, f) => n + f.uses.length, 0)} use sites`);
  const goroot = spawnSync('go', ['env', 'GOROOT'], { encoding: 'utf8' }).stdout.trim();
  const prefixes = [root, ...(goroot ? [path.join(goroot, 'src')] : [])];
  const toLoc = (l: LspLocation): GoldLocation | null => {
    const file = fileURLToPath(l.uri);
    const base = prefixes.find((p) => file.startsWith(p + path.sep));
    if (!base) return null;
    return { path: path.relative(base, file).split(path.sep).join('/'), line: l.range.start.line + 1, col: l.range.start.character + 1 };
  };
  // go/types's view, for choosing candidates: uses per declaration, and the kind of each use site.
  const usesOf = new Map<string, number>();
  const promotedUsesOf = new Map<string, number>();
  for (const f of scan.files) {
    for (const [, , , kind, target] of f.uses) {
      if (!target) continue;
      usesOf.set(target, (usesOf.get(target) ?? 0) + 1);
      if (kind === 'promoted') promotedUsesOf.set(target, (promotedUsesOf.get(target) ?? 0) + 1);
    }
  }
  const versions = goToolVersions();
  const startGopls = (): Promise<LspServer> =>
    LspServer.start({
      command: 'gopls',
      args: ['serve'],
      workspace: root,
      cwd: root,
      env: { ...process.env, ...GO_ENV },
      version: versions.gopls,
      settings: { gopls: {} },
      stderrFile: path.join(repo, '.bench', 'gopls.log'),
    });
  let server = await startGopls();
  let crashes = 0;
  try {
    const rand = prng(SEED);
    const isTest = (p: string): boolean => p.endsWith('_test.go');
    const uses: UseSite[] = scan.files.flatMap((f) => f.uses.map(([line, col, name, kind]) => ({ path: f.path, line, col, name, kind })));
    let asked = 0;
    let failures = 0;
    const t1 = performance.now();
    const resolveDefinition = async (u: UseSite): Promise<GoldLocation[] | null> => {
      if (++asked % 100 === 0) progress(`go: ${asked} definitions asked, ${((performance.now() - t1) / 1000).toFixed(0)} s`);
      const answers = await server.definition(path.join(root, u.path), u.line, u.col).catch((e: unknown) => {
        if (++failures <= 5) progress(`go: definition at ${key(u)} failed: ${String(e)}`);
        if (!server.alive) throw e;
        return [];
      });
      if (answers.length === 0) return null;
      const gold: GoldLocation[] = [];
      for (const a of answers) {
        const loc = toLoc(a);
        if (!loc || !analysed.has(loc.path)) return null;
        gold.push(loc);
      }
      if (gold.some((g) => key(g) === key(u))) return null;
      return uniqueSorted(gold);
    };
    const defs = await draw(
      uses,
      { target: DEFINITION_TARGET, weights: GO_KIND_WEIGHTS, perFileCap: PER_FILE_DEFS, perNameCap: PER_NAME_DEFS, dirShare: DIR_SHARE, isTest, testShare: TEST_SHARE },
      rand,
      resolveDefinition,
    );
    progress(`go: ${defs.length} definition cases (${asked} asked, ${failures} failed, ${((performance.now() - t1) / 1000).toFixed(0)} s)`);

    // Reference candidates: exported declarations whose qualified name means one symbol in the
    // whole tree (cmd/ and testdata/ included), so that asking by name and by position must agree.
    // Methods an interface could name are left out: gopls adds the uses of the interface methods
    // they implement as far as it has type-checked their packages, which varies from run to run
    // (strings.Reader.ReadByte: 8, then 30).
    const decls: DeclSite[] = scan.files
      .flatMap((f) => f.decls.map(([line, col, name, kind, qualified]) => ({ path: f.path, line, col, name, kind, qualified })))
      .filter((d) => scan.names.get(d.qualified!) === 1 && !(d.kind === 'method' && scan.interfaceMethods.has(d.name)));
    const count = (d: DeclSite): number => usesOf.get(key(d)) ?? 0;
    let outside = 0;
    const referencesFor = async (d: DeclSite, min: number, max: number): Promise<GoldLocation[] | null> => {
      const t = performance.now();
      const answers = await server.references(path.join(root, d.path), d.line, d.col).catch(async (e: unknown) => {
        progress(`go: references of ${d.qualified} failed: ${String(e)}`);
        if (!server.alive) {
          if (++crashes > 5) throw new Error('gopls keeps crashing');
          server = await startGopls();
        }
        return null;
      });
      if (!answers) return null;
      const locs = answers.map(toLoc).filter((l): l is GoldLocation => l !== null && key(l) !== key(d));
      outside += locs.filter((l) => !analysed.has(l.path)).length;
      const gold = uniqueSorted(locs);
      progress(`go: references ${d.qualified}: ${gold.length} (go/types ${count(d)}) in ${((performance.now() - t) / 1000).toFixed(1)} s`);
      return gold.length >= min && gold.length <= max ? gold : null;
    };
    const taken = new Set<string>();
    const refs: Array<{ site: DeclSite; result: GoldLocation[] }> = [];
    const keep = (xs: Array<{ site: DeclSite; result: GoldLocation[] }>): void => {
      for (const x of xs) taken.add(x.site.qualified!);
      refs.push(...xs);
    };
    for (const q of GO_PINNED) {
      const d = decls.find((x) => x.qualified === q);
      if (!d) throw new Error(`go: ${q} is not declared exactly once in ${root}`);
      const gold = await referencesFor(d, MIN_REFS, GO_MANY_MAX);
      if (!gold) throw new Error(`go: ${q} has too few or too many references`);
      keep([{ site: d, result: gold }]);
    }
    const open = (pred: (d: DeclSite) => boolean): DeclSite[] => decls.filter((d) => !taken.has(d.qualified!) && pred(d));
    const refOpts = (target: number, weights: Partial<Record<ReferenceKind, number>>): DrawOptions<ReferenceKind> => ({ target, weights, perFileCap: PER_FILE_REFS, perNameCap: 1, dirShare: REF_DIR_SHARE });
    keep(await draw(open((d) => count(d) >= GO_MANY_MIN && count(d) <= GO_MANY_MAX), refOpts(GO_MANY, { function: 1, method: 1, type: 1 }), rand, (d) => referencesFor(d, GO_MANY_MIN, GO_MANY_MAX)));
    keep(await draw(open((d) => d.kind === 'method' && (promotedUsesOf.get(key(d)) ?? 0) > 0 && count(d) <= GO_MAX_REFS), refOpts(GO_PROMOTED, { method: 1 }), rand, (d) => referencesFor(d, MIN_REFS, GO_MAX_REFS)));
    keep(await draw(open((d) => count(d) >= MIN_REFS && count(d) <= GO_MAX_REFS), refOpts(REFERENCE_TARGET - refs.length, GO_REF_WEIGHTS), rand, (d) => referencesFor(d, MIN_REFS, GO_MAX_REFS)));
    if (crashes > 0) progress(`go: gopls crashed ${crashes} times on a reference search; those candidates were skipped`);
    if (outside > 0) progress(`go: ${outside} references outside the analysed files (unexpected: the scope list is wrong)`);
    progress(`go: ${refs.length} reference cases`);

    const corpusVersion = spawnSync('dpkg-query', ['-W', '-f', '${Version}', 'golang-1.19-src'], { encoding: 'utf8' }).stdout.trim() || 'unknown';
    return assemble({
      corpus: 'go',
      root,
      language: 'go',
      corpusVersion: `golang-1.19-src ${corpusVersion}`,
      tool: 'gopls serve (LSP)',
      toolVersion: versions.gopls,
      notes: [
        `${versions.go}; gopls run from ${root} (rootUri, the std module) with ${Object.entries(GO_ENV).map(([k, v]) => `${k}=${v}`).join(' ')}`,
        '`analysed`: the files of the std module in that build (go/build, as `go list std` selects them, tests included); cmd/ (its own module), testdata/ and other platforms\' files are outside it, and a reference found there is not judged',
        'use sites and kinds from go/types (go-scan.go); columns are UTF-16 code units, as LSP gives them',
        `reference sets: ${GO_PINNED.join(', ')} always; ${GO_MANY} drawn among symbols with ${GO_MANY_MIN}..${GO_MANY_MAX} uses; ${GO_PROMOTED} among methods some use reaches through an embedded field; the rest 2..${GO_MAX_REFS} references`,
      ],
      analysed: scan.analysed,
      defs,
      refs,
    });
  } finally {
    await server.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// Output

function assemble(a: {
  corpus: string;
  root: string;
  language: IntelGold['language'];
  corpusVersion: string;
  tool: string;
  toolVersion: string;
  notes: string[];
  analysed?: string[];
  defs: Array<{ site: UseSite; result: GoldLocation[] }>;
  refs: Array<{ site: DeclSite; result: GoldLocation[] }>;
}): IntelGold {
  const pad = (n: number, w: number): string => String(n).padStart(w, '0');
  const definitions: GoldDefinitionCase[] = a.defs
    .sort((x, y) => byPosition(x.site, y.site))
    .map(({ site, result }, i) => ({
      id: `${a.corpus}-d-${pad(i + 1, 4)}`,
      at: { path: site.path, line: site.line, col: site.col },
      name: site.name,
      kind: site.kind,
      gold: result,
    }));
  const references: GoldReferenceCase[] = a.refs
    .sort((x, y) => byPosition(x.site, y.site))
    .map(({ site, result }, i) => ({
      id: `${a.corpus}-r-${pad(i + 1, 3)}`,
      name: site.name,
      kind: site.kind,
      ...(site.qualified ? { qualified: site.qualified } : {}),
      definition: { path: site.path, line: site.line, col: site.col },
      gold: result,
    }));
  return parseIntelGold({
    corpus: a.corpus,
    root: a.root,
    language: a.language,
    corpusVersion: a.corpusVersion,
    seed: SEED,
    generator: { tool: a.tool, version: a.toolVersion, script: SCRIPT, date: new Date().toISOString().slice(0, 10) },
    notes: a.notes,
    ...(a.analysed ? { analysed: a.analysed } : {}),
    definitions,
    references,
  });
}

/**
 * Pretty JSON with every location on one line: readable diffs, a third of the size. The list
 * of analysed files is one path per line too.
 */
function formatGold(g: IntelGold): string {
  return `${JSON.stringify(g, null, 2).replace(
    /\{\n\s*"path": ("(?:[^"\\]|\\.)*"),\n\s*"line": (\d+),\n\s*"col": (\d+)\n\s*\}/g,
    '{ "path": $1, "line": $2, "col": $3 }',
  )}\n`;
}

function summary(g: IntelGold): string {
  const kinds = new Map<string, number>();
  for (const d of g.definitions) kinds.set(d.kind, (kinds.get(d.kind) ?? 0) + 1);
  const refKinds = new Map<string, number>();
  for (const r of g.references) refKinds.set(r.kind, (refKinds.get(r.kind) ?? 0) + 1);
  const refs = g.references.reduce((n, r) => n + r.gold.length, 0);
  const multi = g.definitions.filter((d) => d.gold.length > 1).length;
  const files = new Set(g.definitions.map((d) => d.at.path)).size;
  return (
    `${g.corpus}: ${g.definitions.length} definitions over ${files} files (${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}; ${multi} with several answers), ` +
    `${g.references.length} reference cases (${[...refKinds].map(([k, n]) => `${k} ${n}`).join(', ')}; ${refs} references)`
  );
}

async function main(argv: string[]): Promise<void> {
  const repo = process.cwd();
  const which = argv[0] ?? 'all';
  const wanted = which === 'all' ? ['rxjs', 'zod', 'django', 'go'] : [which];
  for (const name of wanted) {
    const tsCorpus = TS_CORPORA(repo).find((c) => c.name === name);
    if (!tsCorpus && name !== 'django' && name !== 'go') throw new Error(`usage: build-gold [rxjs|zod|django|go|all] (got ${name})`);
    const t0 = performance.now();
    const gold = tsCorpus ? await buildTsGold(repo, tsCorpus) : name === 'go' ? await buildGoGold(repo) : await buildDjangoGold(repo);
    const out = path.join(repo, OUT_DIR, `gold-${name}.json`);
    writeFileSync(out, formatGold(gold));
    progress(`${summary(gold)}; ${((performance.now() - t0) / 1000).toFixed(0)} s → ${path.relative(repo, out)}`);
  }
}

main(process.argv.slice(2)).catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = 1;
});
