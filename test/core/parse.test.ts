/**
 * Tests of parsing, symbol/reference extraction and chunking. Golden files under
 * test/golden/parse/ hold the expected output for each fixture; regenerate them with
 * `UPDATE_GOLDEN=1 npx vitest run test/core/parse.test.ts` and review the diff by hand.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LANGUAGES, type LanguageId, type ParsedFile } from '../../src/core/types';
import { EXTRACTOR_VERSION, languageForPath, readerOf, wasmFileFor } from '../../src/core/parse/languages';
import { createHash } from 'node:crypto';
import { createCodeParser, type CodeParser } from '../../src/core/parse/parser';
import { createParsePool } from '../../src/core/parse/pool';
import { DEFAULT_CHUNK_OPTIONS } from '../../src/core/parse/chunker';

const ROOT = path.resolve(__dirname, '../..');
const FIXTURES = path.join(ROOT, 'test/fixtures/lang');
const GOLDEN = path.join(ROOT, 'test/golden/parse');
const UPDATE = process.env.UPDATE_GOLDEN === '1';

const EXT: Record<LanguageId, string> = {
  typescript: 'ts',
  tsx: 'tsx',
  javascript: 'js',
  python: 'py',
  go: 'go',
  rust: 'rs',
  java: 'java',
  c: 'c',
  cpp: 'cpp',
  csharp: 'cs',
  ruby: 'rb',
  php: 'php',
  kotlin: 'kt',
  swift: 'swift',
  markdown: 'md',
  bash: 'sh',
  powershell: 'ps1',
  elixir: 'ex',
  erlang: 'erl',
  haskell: 'hs',
  elm: 'elm',
  ocaml: 'ml',
  fsharp: 'fs',
  lua: 'lua',
  scala: 'scala',
  groovy: 'groovy',
  dart: 'dart',
  zig: 'zig',
  nim: 'nim',
  crystal: 'cr',
  perl: 'pl',
  r: 'r',
  julia: 'jl',
  clojure: 'clj',
  lisp: 'lisp',
  racket: 'rkt',
  tcl: 'tcl',
  d: 'd',
  objc: 'm',
  sql: 'sql',
  fortran: 'f90',
  protobuf: 'proto',
  vue: 'vue',
  svelte: 'svelte',
  scheme: 'scm',
  vimscript: 'vim',
  cmake: 'cmake',
  make: 'mk',
  prolog: 'pl',
};

/** Fixtures known by their whole name. */
const FIXTURE_NAME: Partial<Record<LanguageId, string>> = { cmake: 'CMakeLists.txt', make: 'Makefile' };

/**
 * The fixtures are small, so the golden run uses small chunk limits to exercise splitting,
 * merging and the container/docstring context; the defaults are tested on a large file.
 */
const GOLDEN_CHUNKS = { maxChars: 400, maxLines: 30, minChars: 100 };

/** A stable, reviewable summary of a parse: one line per symbol, reference and chunk. */
function summarize(r: ParsedFile): Record<string, unknown> {
  return {
    language: r.language,
    imports: r.imports,
    importSpecs: r.importSpecs.map((i) =>
      [
        `${i.line}: ${i.source}`,
        i.namespace !== undefined ? `as ${i.namespace}` : '',
        i.names ? `{ ${i.names.map((n) => (n.name === n.local ? n.name : `${n.name} as ${n.local}`)).join(', ')} }` : '',
        i.star ? '*' : '',
        i.reexport ? 'reexport' : '',
        i.system ? 'system' : '',
      ]
        .filter(Boolean)
        .join(' '),
    ),
    symbols: r.symbols.map((s) => ({
      kind: s.kind,
      name: s.name,
      qualifiedName: s.qualifiedName,
      lines: `${s.startLine}-${s.endLine}`,
      ...(s.container !== undefined ? { container: s.container } : {}),
      signature: s.signature,
    })),
    refs: r.refs.map((x) => `${x.kind} ${x.name} ${x.line}:${x.col}`),
    chunks: r.chunks.map((c) => ({
      lines: `${c.startLine}-${c.endLine}`,
      kind: c.kind,
      ...(c.symbol !== undefined ? { symbol: c.symbol } : {}),
      ...(c.signature !== undefined ? { signature: c.signature } : {}),
      ...(c.container !== undefined ? { container: c.container } : {}),
      ...(c.decorators !== undefined ? { decorators: c.decorators } : {}),
      ...(c.docstring !== undefined ? { docstring: c.docstring } : {}),
    })),
  };
}

/** JSON with one array element per line, so that golden diffs point at single items. */
function stringify(v: Record<string, unknown>): string {
  const lines = Object.entries(v).map(([k, val]) => {
    if (!Array.isArray(val) || val.length === 0) return `  ${JSON.stringify(k)}: ${JSON.stringify(val)}`;
    return `  ${JSON.stringify(k)}: [\n${val.map((x) => `    ${JSON.stringify(x)}`).join(',\n')}\n  ]`;
  });
  return `{\n${lines.join(',\n')}\n}\n`;
}

/** Asserts the structural invariants every chunk list must hold. */
function checkChunks(r: ParsedFile, source: string, limits = DEFAULT_CHUNK_OPTIONS): void {
  const lines = source.split('\n');
  let prevEnd = 0;
  for (const c of r.chunks) {
    expect(c.startLine).toBeGreaterThan(prevEnd);
    expect(c.endLine).toBeGreaterThanOrEqual(c.startLine);
    expect(c.text).toBe(lines.slice(c.startLine - 1, c.endLine).join('\n'));
    // Only blank lines may fall between chunks.
    for (let l = prevEnd + 1; l < c.startLine; l++) expect(lines[l - 1]?.trim()).toBe('');
    expect(c.endLine - c.startLine + 1).toBeLessThanOrEqual(limits.maxLines);
    if (c.endLine > c.startLine) expect(c.text.length).toBeLessThanOrEqual(limits.maxChars);
    prevEnd = c.endLine;
  }
  for (let l = prevEnd + 1; l <= lines.length; l++) expect(lines[l - 1]?.trim()).toBe('');
}

let parser: CodeParser;

beforeAll(async () => {
  parser = await createCodeParser({ chunk: GOLDEN_CHUNKS });
});

afterAll(() => {
  parser.dispose();
});

/** The hash of every query file (and the text languages' patterns) at EXTRACTOR_VERSION 5. */
const QUERIES_HASH = 'dd23964b19213cd66f0afbf4aa6308fcc0124e93';

describe('languages', () => {
  it('maps extensions to languages', () => {
    const cases: [string, LanguageId | undefined][] = [
      ['a/b.ts', 'typescript'],
      ['x.mts', 'typescript'],
      ['x.cts', 'typescript'],
      ['x.tsx', 'tsx'],
      ['x.jsx', 'javascript'],
      ['x.mjs', 'javascript'],
      ['x.cjs', 'javascript'],
      ['x.pyi', 'python'],
      ['x.h', 'c'],
      ['x.hpp', 'cpp'],
      ['x.cc', 'cpp'],
      ['x.HXX', 'cpp'],
      ['x.cs', 'csharp'],
      ['x.kts', 'kotlin'],
      ['README.markdown', 'markdown'],
      ['C:\\src\\main.go', 'go'],
      ['Makefile', 'make'],
      ['src/CMakeLists.txt', 'cmake'],
      ['ice-9/match.scm', 'scheme'],
      ['x.pro', 'prolog'],
      ['.ts', undefined],
      ['x.txt', undefined],
      ['lib/cart.ex', 'elixir'],
      ['Data/Queue.hs', 'haskell'],
      ['init.lua', 'lua'],
      ['Order.scala', 'scala'],
      ['std/mem.zig', 'zig'],
      ['Downloader.m', 'objc'],
      ['schema.SQL', 'sql'],
      ['tree.mli', 'ocaml'],
      ['run.sh', 'bash'],
      ['account.dart', 'dart'],
    ];
    for (const [p, lang] of cases) expect(languageForPath(p), p).toBe(lang);
  });

  it('bumps EXTRACTOR_VERSION with every change to the queries, so that old indexes are re-parsed', () => {
    const dir = path.resolve(__dirname, '../../src/core/parse/queries');
    const files = [...fs.readdirSync(dir).map((f) => f), ...fs.readdirSync(path.join(dir, 'locals')).map((f) => `locals/${f}`)].filter((f) => f.endsWith('.scm') || f.endsWith('.json')).sort();
    const hash = createHash('sha1');
    for (const f of files) hash.update(`${f}\0${fs.readFileSync(path.join(dir, f), 'utf8')}\0`);
    // When this fails: bump EXTRACTOR_VERSION in src/core/parse/languages.ts, then record both here.
    expect({ version: EXTRACTOR_VERSION, queries: hash.digest('hex') }).toEqual({ version: 6, queries: QUERIES_HASH });
  });

  it('reads every language by a grammar, by headings, or as text with definition patterns', () => {
    const patterns = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../src/core/parse/queries/text-definitions.json'), 'utf8')) as Record<string, unknown>;
    for (const lang of LANGUAGES) {
      const reader = readerOf(lang);
      expect(reader === 'grammar', lang).toBe(wasmFileFor(lang) !== undefined);
      if (reader === 'text') expect(patterns[lang], `${lang} has no definition patterns`).toBeDefined();
    }
    expect(readerOf('markdown')).toBe('headings');
  });
});

describe('golden output per language', () => {
  for (const lang of LANGUAGES) {
    it(lang, () => {
      const file = path.join(FIXTURES, lang, FIXTURE_NAME[lang] ?? `sample.${EXT[lang]}`);
      const source = fs.readFileSync(file, 'utf8');
      const r = parser.parse(file, lang, source);
      checkChunks(r, source, { ...DEFAULT_CHUNK_OPTIONS, ...GOLDEN_CHUNKS });
      const actual = stringify(summarize(r));
      const goldenFile = path.join(GOLDEN, `${lang}.json`);
      if (UPDATE || !fs.existsSync(goldenFile)) {
        fs.mkdirSync(GOLDEN, { recursive: true });
        fs.writeFileSync(goldenFile, actual);
      }
      expect(actual).toBe(fs.readFileSync(goldenFile, 'utf8'));
    });
  }
});

describe('qualified names', () => {
  const find = (r: ParsedFile, q: string) => r.symbols.find((s) => s.qualifiedName === q);

  it('qualifies Go methods by their receiver type', () => {
    const src = 'package gzip\n\ntype Writer struct{}\n\nfunc (z *Writer) Close() error {\n\treturn nil\n}\n\nfunc (z Writer) Name() string { return "" }\n\nfunc (l *List[T]) Len() int { return 0 }\n';
    const r = parser.parse('w.go', 'go', src);
    expect(find(r, 'Writer.Close')).toMatchObject({ kind: 'method', signature: 'func (z *Writer) Close() error', container: 'Writer', startLine: 5, endLine: 7 });
    expect(find(r, 'Writer.Name')?.kind).toBe('method');
    expect(find(r, 'List.Len')?.kind).toBe('method');
  });

  it('qualifies Rust impl methods by the implementing type', () => {
    const src = 'struct Foo;\nimpl Foo {\n    fn bar(&self) {}\n}\nimpl<T> Display for Wrapper<T> {\n    fn fmt(&self) {}\n}\nfn free() {}\n';
    const r = parser.parse('f.rs', 'rust', src);
    expect(find(r, 'Foo.bar')?.kind).toBe('method');
    expect(find(r, 'Wrapper.fmt')?.kind).toBe('method');
    expect(find(r, 'free')?.kind).toBe('function');
    // impl blocks qualify names but are not symbols themselves.
    expect(r.symbols.map((s) => s.qualifiedName)).toEqual(['Foo', 'Foo.bar', 'Wrapper.fmt', 'free']);
  });

  it('qualifies Python methods, including nested classes and local functions', () => {
    const src = 'class A:\n    def f(self):\n        def helper():\n            pass\n        return helper\n\n    class B:\n        def g(self):\n            pass\n\ndef top():\n    pass\n';
    const r = parser.parse('a.py', 'python', src);
    expect(find(r, 'A.f')?.kind).toBe('method');
    expect(find(r, 'A.f.helper')?.kind).toBe('function');
    expect(find(r, 'A.B.g')?.kind).toBe('method');
    expect(find(r, 'top')?.kind).toBe('function');
  });

  it('qualifies C++ out-of-line members, Kotlin extension functions and Go multi-name specs', () => {
    const cpp = parser.parse('a.cpp', 'cpp', 'namespace ns {\nint Widget::size() const { return 0; }\n}\n');
    expect(find(cpp, 'ns.Widget.size')).toMatchObject({ kind: 'method', container: 'ns.Widget' });
    const kt = parser.parse('a.kt', 'kotlin', 'fun String.shout(): String = uppercase()\n');
    expect(find(kt, 'String.shout')?.kind).toBe('method');
    const go = parser.parse('a.go', 'go', 'package p\n\nvar y, z = 1, 2\n');
    expect(go.symbols.map((s) => s.qualifiedName)).toEqual(['y', 'z']);
  });

  it('qualifies TypeScript class methods', () => {
    const src = 'export class Store<T> {\n  private items: T[] = [];\n  add(item: T): void {\n    this.items.push(item);\n  }\n  static create(): Store<number> {\n    return new Store();\n  }\n  handle = () => this.items.length;\n}\n';
    const r = parser.parse('s.ts', 'typescript', src);
    expect(find(r, 'Store.add')).toMatchObject({ kind: 'method', signature: 'add(item: T): void', container: 'Store' });
    expect(find(r, 'Store.create')?.kind).toBe('method');
    expect(find(r, 'Store.handle')?.kind).toBe('method');
    expect(r.refs).toContainEqual({ name: 'Store', line: 7, col: 16, kind: 'call' });
  });
});

describe('robustness', () => {
  it('returns best-effort output for files with syntax errors', () => {
    const cases: [LanguageId, string][] = [
      ['go', 'package x\n\nfunc Good() int { return 1 }\n\nfunc Broken( {\n\tif x := ; {\n}\n\nfunc After() {}\n'],
      ['typescript', 'export function ok(): number { return 1; }\nclass {{{ broken\nexport function later() {}\n'],
      ['python', 'def ok():\n    return 1\n\ndef broken(:\n    pass\n\nclass Later:\n    def m(self): pass\n'],
      ['rust', 'fn ok() {}\nimpl Foo {\n    fn m(&self) {\n'],
      ['cpp', 'class A { void f() { ; \nint main() { return 0; }\n'],
    ];
    for (const [lang, src] of cases) {
      const r = parser.parse(`broken.${EXT[lang]}`, lang, src);
      expect(r.chunks.length, lang).toBeGreaterThan(0);
      expect(r.symbols.length, lang).toBeGreaterThan(0);
      checkChunks(r, src, { ...DEFAULT_CHUNK_OPTIONS, ...GOLDEN_CHUNKS });
    }
    const py = parser.parse('b.py', 'python', cases[2]?.[1] ?? '');
    expect(py.symbols.map((s) => s.qualifiedName)).toContain('ok');
  });

  it('survives truncated and scrambled sources in every language', () => {
    for (const lang of LANGUAGES) {
      const src = fs.readFileSync(path.join(FIXTURES, lang, FIXTURE_NAME[lang] ?? `sample.${EXT[lang]}`), 'utf8');
      const lines = src.split('\n');
      // Deterministic variants: prefixes cut mid-token, and lines in a scrambled order.
      const variants = [1, 2, 3, 5, 7].map((k) => src.slice(0, Math.floor((src.length * k) / 8)));
      variants.push(lines.map((_, i) => lines[(i * 7) % lines.length]).join('\n'));
      variants.push(src.replace(/[{}()]/g, ''));
      for (const v of variants) {
        const r = parser.parse(`v.${EXT[lang]}`, lang, v);
        checkChunks(r, v, { ...DEFAULT_CHUNK_OPTIONS, ...GOLDEN_CHUNKS });
      }
    }
  });

  it('handles empty and blank files', () => {
    for (const lang of LANGUAGES) {
      expect(parser.parse('e', lang, '')).toEqual({ language: lang, importSpecs: [], imports: [], chunks: [], symbols: [], refs: [] });
      const blank = parser.parse('b', lang, '\n\n   \n');
      expect(blank.chunks, lang).toEqual([]);
    }
  });

  it('handles a very long line and a 1 MiB file', () => {
    const long = `const data = [${Array.from({ length: 40000 }, (_, i) => i).join(',')}];\nfunction f() { return data; }\n`;
    const r = parser.parse('long.js', 'javascript', long);
    expect(r.symbols.map((s) => s.name)).toEqual(['f']);
    expect(r.chunks.map((c) => [c.startLine, c.endLine])).toEqual([[1, 1], [2, 2]]);

    const fn = (i: number): string => `// Function ${i} adds numbers.\nexport function add${i}(a: number, b: number): number {\n  const s = a + b;\n  return s * ${i};\n}\n\n`;
    let big = '';
    for (let i = 0; big.length < 1024 * 1024; i++) big += fn(i);
    const t0 = Date.now();
    const rb = parser.parse('big.ts', 'typescript', big);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(rb.symbols.length).toBe(big.split('export function').length - 1);
  });

  it('keeps line and column numbers in UTF-16 units with non-ASCII text', () => {
    const src = 'package x\n// héllo 😀\nfunc Émoji() { bär(1) }\n';
    const r = parser.parse('u.go', 'go', src);
    expect(r.symbols[0]).toMatchObject({ name: 'Émoji', startLine: 3 });
    expect(r.refs).toContainEqual({ name: 'bär', line: 3, col: 16, kind: 'call' });
  });

  it('reads CRLF files without carriage returns in chunks or signatures', () => {
    const src = 'package x\r\n\r\n// Add adds.\r\nfunc Add(a, b int) int {\r\n\treturn a + b\r\n}\r\n';
    const r = parser.parse('crlf.go', 'go', src);
    expect(r.symbols[0]).toMatchObject({ qualifiedName: 'Add', signature: 'func Add(a, b int) int', startLine: 4, endLine: 6 });
    expect(r.chunks.map((c) => c.text).join('\n')).not.toContain('\r');
    expect(r.chunks[0]?.docstring).toBe('Add adds.');
  });

  it('throws PARSER_UNAVAILABLE when a grammar is missing', async () => {
    const p = await createCodeParser({ wasmDir: os.tmpdir() });
    expect(() => p.parse('x.go', 'go', 'package x\n')).toThrow(expect.objectContaining({ code: 'PARSER_UNAVAILABLE' }) as Error);
    p.dispose();
  });
});

describe('import statements of the newer grammars', () => {
  const specs = (file: string, lang: LanguageId, src: string) => parser.parse(file, lang, src).importSpecs;
  it('reads modules, aliases, lists and stars', () => {
    expect(specs('a.hs', 'haskell', "module M where\nimport qualified Data.Map as M\nimport Data.List (sortBy, foldl')\n")).toEqual([
      { source: 'Data.Map', line: 2, namespace: 'M' },
      { source: 'Data.List', line: 3, names: [{ name: 'sortBy', local: 'sortBy' }, { name: "foldl'", local: "foldl'" }] },
    ]);
    expect(specs('a.ml', 'ocaml', 'open Printf\ninclude Set.Make (String)\n')).toEqual([
      { source: 'Printf', line: 1 },
      { source: 'Set.Make', line: 2 },
    ]);
    expect(specs('a.ex', 'elixir', 'defmodule A do\n  alias Shop.Cart, as: C\n  use GenServer\nend\n')).toEqual([
      { source: 'Shop.Cart', line: 2, namespace: 'C' },
      { source: 'GenServer', line: 3 },
    ]);
    expect(specs('a.scala', 'scala', 'import scala.collection.mutable.{Map, Set => MSet}\nimport java.util._\n')).toEqual([
      { source: 'scala.collection.mutable', line: 1, names: [{ name: 'Map', local: 'Map' }, { name: 'Set', local: 'MSet' }] },
      { source: 'java.util', line: 2, star: true },
    ]);
    expect(specs('a.sh', 'bash', 'source ./lib/common.sh\n. "$DIR/helpers.sh"\n')).toEqual([
      { source: './lib/common.sh', line: 1 },
      { source: '$DIR/helpers.sh', line: 2 },
    ]);
    expect(specs('a.m', 'objc', '#import <UIKit/UIKit.h>\n#import "Downloader.h"\n@import Foundation;\n')).toEqual([
      { source: 'UIKit/UIKit.h', line: 1, system: true },
      { source: 'Downloader.h', line: 2 },
      { source: 'Foundation', line: 3, system: true },
    ]);
  });
});

describe('files a grammar cannot read', () => {
  it('reads a file that is mostly syntax errors with its language\'s text reader, keeping its definitions', () => {
    const noise = Array.from({ length: 20 }, () => '@@ !! ## $$ ~~ %% ^^ ]]').join('\n');
    const src = `local t = {{{ ((( [[[\n${noise}\nfunction keep_me(a)\n  return a\nend\n\nfunction and_me(b)\n  return b\nend\n`;
    const r = parser.parse('broken.lua', 'lua', src);
    expect(r.symbols.map((x) => x.name)).toEqual(['keep_me', 'and_me']);
    expect(r.refs).toEqual([]);
    checkChunks(r, src, { ...DEFAULT_CHUNK_OPTIONS, ...GOLDEN_CHUNKS });
  });

  it("reads OCaml interfaces (.mli) as text: the implementation grammar cannot parse their val specifications", () => {
    const src = '(** Sets. *)\n\ntype t\n\nval empty : t\n\nval add : int -> t -> t\n(** [add x s] adds [x]. *)\n\nexception Empty\n';
    const r = parser.parse('set.mli', 'ocaml', src);
    expect(r.symbols.map((x) => `${x.kind} ${x.name}`)).toEqual(['type t', 'function empty', 'function add', 'type Empty']);
  });
});

describe('a definition header on several lines', () => {
  it('starts one chunk with the body: C\'s return type stays with the function name', () => {
    // Sizes chosen so that the open chunk (the function before and the doc comment) has room
    // for the return type's line but not for the name's: the header must not be split there.
    const body = Array.from({ length: 40 }, (_, i) => `    if (c == ${i}) count += ${i};`).join('\n');
    for (let width = 10; width <= 300; width += 10) {
      const doc = Array.from({ length: 6 }, () => ` * ${'x'.repeat(Math.max(1, width / 6))}`).join('\n');
      const src = `int before(int a) {\n    return a + 1;\n}\n\n/*\n${doc}\n */\nstatic int\nparse_reference_value(const char *s, int c) {\n    int count = 0;\n${body}\n    return count;\n}\n`;
      const r = parser.parse('ref.c', 'c', src);
      checkChunks(r, src, { ...DEFAULT_CHUNK_OPTIONS, ...GOLDEN_CHUNKS });
      const nameLine = src.split('\n').findIndex((l) => l.startsWith('parse_reference_value(')) + 1;
      const holding = r.chunks.find((c) => c.startLine <= nameLine && nameLine <= c.endLine)!;
      expect(holding.startLine, `doc width ${width}`).toBeLessThanOrEqual(nameLine - 1);
    }
  });
});

describe('chunking with default limits', () => {
  /** A 2000+ line Go file: many small functions, a few huge ones, a long struct and comments. */
  function generated(): string {
    const out: string[] = ['package gen', '', 'import "fmt"', ''];
    for (let i = 0; out.length < 2000; i++) {
      if (i % 10 === 5) {
        out.push(`// Big${i} is long enough to be split.`, `func Big${i}(x int) int {`);
        for (let j = 0; j < 120; j++) out.push(`\tx = x*${j} + ${i} // step ${j} of a long computation`);
        out.push('\treturn x', '}', '');
      } else if (i % 10 === 7) {
        out.push(`type S${i} struct {`);
        for (let j = 0; j < 30; j++) out.push(`\tField${j} int \`json:"f${j}"\``);
        out.push('}', '');
      } else {
        out.push(`// F${i} prints.`, `func F${i}() {`, `\tfmt.Println("${i}")`, '}', '');
      }
    }
    return out.join('\n');
  }

  it('splits a 2000-line file within limits, in order, without overlaps or gaps', async () => {
    const p = await createCodeParser();
    const src = generated();
    const r = p.parse('gen.go', 'go', src);
    expect(src.split('\n').length).toBeGreaterThanOrEqual(2000);
    checkChunks(r, src);
    expect(r.chunks.length).toBeGreaterThan(20);
    // Pieces of a function that was too big name the function they belong to.
    const pieces = r.chunks.filter((c) => c.symbol === 'Big5');
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces[0]?.docstring).toBe('Big5 is long enough to be split.');
    expect(pieces.slice(1).every((c) => c.kind === 'block' && c.signature === 'func Big5(x int) int')).toBe(true);
    p.dispose();
  });
});

describe('chunk context', () => {
  // Tiny limits put each member in its own chunk, so that it is the chunk's main definition.
  const tiny = { maxChars: 160, maxLines: 8, minChars: 10 };

  it('attaches sibling decorators and doc comments of class members (TypeScript)', async () => {
    const p = await createCodeParser({ chunk: tiny });
    const src = [
      '@Component({ selector: "app" })',
      'export class AppComponent {',
      '  @Input() name = "";',
      '',
      '  /** Handles clicks on the host element. */',
      "  @HostListener('click', ['$event'])",
      '  onClick(e: Event): void {',
      '    console.log(e);',
      '  }',
      '}',
      '',
    ].join('\n');
    const r = p.parse('app.ts', 'typescript', src);
    const member = r.chunks.find((c) => c.symbol === 'AppComponent.onClick');
    expect(member).toMatchObject({
      kind: 'method',
      signature: 'onClick(e: Event): void',
      container: 'export class AppComponent {',
      decorators: ["@HostListener('click', ['$event'])"],
      docstring: 'Handles clicks on the host element.',
    });
    expect(r.chunks[0]).toMatchObject({ symbol: 'AppComponent', decorators: ['@Component({ selector: "app" })'] });
    p.dispose();
  });

  it('uses Python docstrings and Rust doc comments across attributes', async () => {
    const p = await createCodeParser({ chunk: tiny });
    const filler = Array.from({ length: 30 }, (_, i) => i).join(', ');
    const py = p.parse(
      'm.py',
      'python',
      `class A:\n    def g(self):\n        return [${filler}]\n\n    @staticmethod\n    def f():\n        """Does f.\n\n        More.\n        """\n        return 1\n`,
    );
    expect(py.chunks.find((c) => c.symbol === 'A.f')).toMatchObject({ decorators: ['@staticmethod'], docstring: 'Does f.\n\nMore.', container: 'class A:' });
    const rs = p.parse('m.rs', 'rust', '/// A point.\n/// In 2D.\n#[derive(Debug)]\npub struct P {\n    x: i32,\n}\n');
    expect(rs.chunks[0]).toMatchObject({ kind: 'struct', symbol: 'P', decorators: ['#[derive(Debug)]'], docstring: 'A point.\nIn 2D.' });
    // A comment separated by a blank line, or trailing code, is not documentation.
    const go = p.parse('m.go', 'go', 'package m\n\n// Unrelated.\n\nfunc F() {}\n');
    expect(go.chunks.find((c) => c.symbol === 'F')?.docstring).toBeUndefined();
    p.dispose();
  });
});

describe('markdown', () => {
  it('ignores headings inside fences and qualifies nested headings', () => {
    const src = '# A\n\ntext\n\n```\n# not a heading\n```\n\n## B\n\n~~~~\n## nor this\n~~~~\n\n### C ###\n\nbody\n\n## D\n';
    const r = parser.parse('r.md', 'markdown', src);
    expect(r.symbols.map((s) => [s.qualifiedName, s.startLine, s.endLine])).toEqual([
      ['A', 1, 19],
      ['A > B', 9, 17],
      ['A > B > C', 15, 17],
      ['A > D', 19, 19],
    ]);
    expect(r.chunks.map((c) => [c.startLine, c.endLine, c.symbol, c.container])).toEqual([
      [1, 7, 'A', undefined],
      [9, 13, 'B', '# A'],
      [15, 17, 'C', '## B'],
      [19, 19, 'D', '# A'],
    ]);
  });

  it('splits a long section at paragraph breaks', () => {
    const para = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(4);
    const src = `# Long\n\n${Array.from({ length: 40 }, () => para).join('\n\n')}\n`;
    const r = parser.parse('l.md', 'markdown', src);
    expect(r.chunks.length).toBeGreaterThan(2);
    expect(r.chunks.every((c) => c.symbol === 'Long' && c.kind === 'section')).toBe(true);
    checkChunks(r, src, { ...DEFAULT_CHUNK_OPTIONS, ...GOLDEN_CHUNKS });
  });
});

describe('parse pool', () => {
  it('parses in-thread when no worker script exists', async () => {
    const pool = createParsePool();
    expect(pool.mode).toBe('in-thread');
    const r = await pool.parse('a.py', 'python', 'def f():\n    pass\n');
    expect(r.symbols.map((s) => s.name)).toEqual(['f']);
    await pool.close();
    await expect(pool.parse('a.py', 'python', '')).rejects.toMatchObject({ code: 'CANCELLED' });
  });

  it('parses on worker threads with the bundled worker and matches the in-thread output', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vlt-parse-worker-'));
    const esbuild = await import('esbuild');
    await esbuild.build({
      entryPoints: [path.join(ROOT, 'src/core/parse/worker.ts')],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      outfile: path.join(dir, 'parse-worker.js'),
      logLevel: 'error',
    });
    const pool = createParsePool({ workers: 2, workerScript: path.join(dir, 'parse-worker.js') });
    try {
      expect(pool.mode).toBe('workers');
      expect(pool.size).toBe(2);
      const langs: LanguageId[] = ['go', 'python', 'rust', 'typescript'];
      const results = await Promise.all(
        langs.map((lang) => {
          const file = path.join(FIXTURES, lang, FIXTURE_NAME[lang] ?? `sample.${EXT[lang]}`);
          return pool.parse(file, lang, fs.readFileSync(file, 'utf8'));
        }),
      );
      const local = await createCodeParser();
      langs.forEach((lang, i) => {
        const file = path.join(FIXTURES, lang, FIXTURE_NAME[lang] ?? `sample.${EXT[lang]}`);
        expect(results[i]).toEqual(local.parse(file, lang, fs.readFileSync(file, 'utf8')));
      });
      local.dispose();
      // A file prepared from its path: the worker reads it, and says so when it went away.
      const go = path.join(FIXTURES, 'go', FIXTURE_NAME.go ?? `sample.${EXT.go}`);
      const req = { path: 'sample.go', language: 'go' as const, maxFileBytes: 1 << 20, generatedMode: 'navigation' as const, vendored: false, enriched: false };
      const fromPath = await pool.prepare(req, { absPath: go });
      expect(fromPath).toEqual(await pool.prepare(req, fs.readFileSync(go)));
      expect(fromPath).toMatchObject({ kind: 'parsed' });
      await expect(pool.prepare(req, { absPath: path.join(dir, 'gone.go') })).resolves.toEqual({ kind: 'skip', reason: 'unreadable', detail: 'deleted during indexing' });
    } finally {
      await pool.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('restarts a crashed worker and fails only the request it was handling', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vlt-fake-worker-'));
    const script = path.join(dir, 'crashy-worker.js');
    // A stand-in worker that dies on the source "crash" and echoes anything else.
    fs.writeFileSync(
      script,
      `const { parentPort } = require('node:worker_threads');
parentPort.on('message', (m) => {
  if (m.source === 'crash') process.exit(3);
  if (m.source === 'fail') return parentPort.postMessage({ id: m.id, error: 'nope', code: 'IO' });
  parentPort.postMessage({ id: m.id, result: { language: m.language, imports: [m.source], chunks: [], symbols: [], refs: [] } });
});
`,
    );
    const pool = createParsePool({ workers: 1, workerScript: script });
    try {
      const crash = pool.parse('c', 'go', 'crash');
      const after = pool.parse('a', 'go', 'after');
      await expect(crash).rejects.toMatchObject({ code: 'INTERNAL' });
      await expect(after).resolves.toMatchObject({ imports: ['after'] });
      await expect(pool.parse('f', 'go', 'fail')).rejects.toMatchObject({ code: 'IO', message: 'nope' });
      await expect(pool.parse('b', 'go', 'again')).resolves.toMatchObject({ imports: ['again'] });
    } finally {
      await pool.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails requests, without a restart loop, when workers cannot start', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vlt-broken-worker-'));
    const script = path.join(dir, 'broken-worker.js');
    fs.writeFileSync(script, "throw new Error('cannot start');\n");
    const pool = createParsePool({ workers: 2, workerScript: script });
    try {
      await expect(pool.parse('a', 'go', 'x')).rejects.toMatchObject({ code: 'INTERNAL' });
      await expect(pool.parse('b', 'go', 'y')).rejects.toMatchObject({ code: 'INTERNAL' });
    } finally {
      await pool.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
