import type { LanguageId } from '../types';

/**
 * File extension (lower case, with the dot) to language. JSX is parsed with the JavaScript
 * grammar because that grammar already understands JSX. `.h` is treated as C: a C++ header
 * parsed with the C grammar still yields its functions, structs and includes, while class
 * bodies degrade to error nodes that the chunker still covers.
 */
export const EXTENSION_LANGUAGES: Readonly<Record<string, LanguageId>> = {
  '.ts': 'typescript',
  '.mts': 'typescript',
  '.cts': 'typescript',
  '.tsx': 'tsx',
  '.js': 'javascript',
  '.mjs': 'javascript',
  '.cjs': 'javascript',
  '.jsx': 'javascript',
  '.py': 'python',
  '.pyi': 'python',
  '.go': 'go',
  '.rs': 'rust',
  '.java': 'java',
  '.c': 'c',
  '.h': 'c',
  '.cc': 'cpp',
  '.cpp': 'cpp',
  '.cxx': 'cpp',
  '.hpp': 'cpp',
  '.hh': 'cpp',
  '.hxx': 'cpp',
  '.cs': 'csharp',
  '.rb': 'ruby',
  '.php': 'php',
  '.kt': 'kotlin',
  '.kts': 'kotlin',
  '.swift': 'swift',
  '.md': 'markdown',
  '.markdown': 'markdown',
  // Languages read as text (no grammar): see TEXT_LANGUAGES.
  '.sh': 'bash',
  '.bash': 'bash',
  '.zsh': 'bash',
  '.ksh': 'bash',
  '.ps1': 'powershell',
  '.psm1': 'powershell',
  '.ex': 'elixir',
  '.exs': 'elixir',
  '.erl': 'erlang',
  '.hrl': 'erlang',
  '.hs': 'haskell',
  '.lhs': 'haskell',
  '.elm': 'elm',
  '.ml': 'ocaml',
  '.mli': 'ocaml',
  '.fs': 'fsharp',
  '.fsi': 'fsharp',
  '.fsx': 'fsharp',
  '.lua': 'lua',
  '.scala': 'scala',
  '.sc': 'scala',
  '.groovy': 'groovy',
  '.gradle': 'groovy',
  '.dart': 'dart',
  '.zig': 'zig',
  '.nim': 'nim',
  '.cr': 'crystal',
  '.pl': 'perl',
  '.pm': 'perl',
  '.r': 'r',
  '.jl': 'julia',
  '.clj': 'clojure',
  '.cljs': 'clojure',
  '.cljc': 'clojure',
  '.lisp': 'lisp',
  '.lsp': 'lisp',
  '.el': 'lisp',
  '.rkt': 'racket',
  '.tcl': 'tcl',
  '.d': 'd',
  '.m': 'objc',
  '.mm': 'objc',
  '.sql': 'sql',
  '.f90': 'fortran',
  '.f95': 'fortran',
  '.f03': 'fortran',
  '.f08': 'fortran',
  '.proto': 'protobuf',
  '.pro': 'prolog',
  '.vue': 'vue',
  '.svelte': 'svelte',
  '.scm': 'scheme',
  '.ss': 'scheme',
  '.sld': 'scheme',
  '.vim': 'vimscript',
  '.cmake': 'cmake',
  '.mk': 'make',
  '.mak': 'make',
};

/** Files known by their whole name, which has no telling extension. */
export const FILENAME_LANGUAGES: Readonly<Record<string, LanguageId>> = {
  'CMakeLists.txt': 'cmake',
  Makefile: 'make',
  makefile: 'make',
  GNUmakefile: 'make',
};

/** Where a grammar comes from: the npm package that ships it and the file name inside it. */
export interface GrammarSource {
  /** The package whose directory (or `out/` folder) holds the file, for source-tree runs. */
  pkg: string;
  /** Sub-directory of the package that holds the file. */
  subdir: string;
  /** The `.wasm` file name; the bundled layout keeps the same name under `dist/wasm/`. */
  file: string;
}

const repomix = (file: string): GrammarSource => ({ pkg: '@repomix/tree-sitter-wasms', subdir: 'out', file });
/** A grammar's own npm package, which ships its `.wasm` at the package root. */
const own = (pkg: string, file: string): GrammarSource => ({ pkg, subdir: '', file });

/** The tree-sitter grammar of each language; markdown has none and is split by headings. */
export const GRAMMARS: Readonly<Partial<Record<LanguageId, GrammarSource>>> = {
  typescript: repomix('tree-sitter-typescript.wasm'),
  tsx: repomix('tree-sitter-tsx.wasm'),
  javascript: repomix('tree-sitter-javascript.wasm'),
  python: repomix('tree-sitter-python.wasm'),
  go: repomix('tree-sitter-go.wasm'),
  rust: repomix('tree-sitter-rust.wasm'),
  java: repomix('tree-sitter-java.wasm'),
  c: repomix('tree-sitter-c.wasm'),
  cpp: repomix('tree-sitter-cpp.wasm'),
  csharp: repomix('tree-sitter-c_sharp.wasm'),
  ruby: repomix('tree-sitter-ruby.wasm'),
  php: repomix('tree-sitter-php.wasm'),
  kotlin: { pkg: '@tree-sitter-grammars/tree-sitter-kotlin', subdir: '', file: 'tree-sitter-kotlin.wasm' },
  swift: repomix('tree-sitter-swift.wasm'),
  bash: own('tree-sitter-bash', 'tree-sitter-bash.wasm'),
  elixir: own('tree-sitter-elixir', 'tree-sitter-elixir.wasm'),
  lua: own('@tree-sitter-grammars/tree-sitter-lua', 'tree-sitter-lua.wasm'),
  zig: own('@tree-sitter-grammars/tree-sitter-zig', 'tree-sitter-zig.wasm'),
  haskell: own('tree-sitter-haskell', 'tree-sitter-haskell.wasm'),
  objc: own('tree-sitter-objc', 'tree-sitter-objc.wasm'),
  ocaml: own('tree-sitter-ocaml', 'tree-sitter-ocaml.wasm'),
  scala: own('tree-sitter-scala', 'tree-sitter-scala.wasm'),
};

/**
 * How the index reads a language's files: `grammar` (a tree-sitter syntax tree: definitions,
 * references, imports, syntax-aware chunks), `headings` (markdown sections) or `text`
 * (definitions from line patterns, chunks by definitions and paragraphs; no references).
 */
export type LanguageReader = 'grammar' | 'headings' | 'text';

export function readerOf(language: LanguageId): LanguageReader {
  if (language === 'markdown') return 'headings';
  return GRAMMARS[language] ? 'grammar' : 'text';
}

/**
 * Files of a language with a grammar that its text reader reads better: OCaml interfaces
 * (`.mli`), whose `val` specifications the implementation grammar cannot parse.
 */
export function readAsText(path: string, language: LanguageId): boolean {
  return language === 'ocaml' && /\.mli$/i.test(path);
}

/** The `.wasm` file name of a language's grammar, or undefined for markdown. */
export function wasmFileFor(language: LanguageId): string | undefined {
  return GRAMMARS[language]?.file;
}

/**
 * Languages whose tag query extends another's: the base query comes first. TSX is TypeScript
 * plus JSX, with the same node types, so its file only holds the JSX patterns.
 */
const QUERY_BASE: Partial<Record<LanguageId, LanguageId>> = { tsx: 'typescript' };

/**
 * Version of what parsing extracts (the `.scm` queries and the code that reads their captures).
 * An index built by another version is re-parsed in full on its next run, so that a changed
 * query reaches files that did not change. Bump it with every change to `queries/` or to how
 * chunks are cut (chunker.ts, text-chunker.ts);
 * test/core/parse.test.ts pins the queries' hash to it and fails until it is bumped.
 */
export const EXTRACTOR_VERSION = 6;

/** The tag query files of a language under the queries directory, concatenated in order. */
export function queryFilesFor(language: LanguageId): string[] {
  const base = QUERY_BASE[language];
  return base ? [`${base}.scm`, `${language}.scm`] : [`${language}.scm`];
}

/** TypeScript, TSX and JavaScript: one module system, one kind of language server. */
export function isTsFamily(language: LanguageId): boolean {
  return language === 'typescript' || language === 'tsx' || language === 'javascript';
}

/** The language of a file, judged by its extension (case-insensitive), or undefined. */
export function languageForPath(path: string): LanguageId | undefined {
  const slash = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  const base = path.slice(slash + 1);
  const byName = FILENAME_LANGUAGES[base];
  if (byName) return byName;
  const dot = base.lastIndexOf('.');
  // A leading dot marks a hidden file (".ts" is a name, not an extension).
  if (dot <= 0) return undefined;
  return EXTENSION_LANGUAGES[base.slice(dot).toLowerCase()];
}

/**
 * Extensions two languages share, and how a file's first bytes tell them apart: `.pl` is Perl
 * unless the file holds Prolog directives (`:- module(…)`, `:- use_module(…)`) and no Perl
 * statement (`use strict`, `package`, `sub`).
 */
export function isAmbiguousPath(path: string): boolean {
  return /\.pl$/i.test(path);
}

export function languageFromContent(path: string, head: string): LanguageId | undefined {
  if (/\.pl$/i.test(path)) {
    const prolog = /^:-\s*(?:module|use_module|dynamic|multifile|discontiguous|set_prolog_flag|ensure_loaded|initialization)\b/m.test(head);
    const perl = /^\s*(?:use\s+(?:strict|warnings)\b|package\s+[\w:]+\s*;|sub\s+\w+|#!.*\bperl)/m.test(head);
    return prolog && !perl ? 'prolog' : 'perl';
  }
  return languageForPath(path);
}

/** Interpreters named by a `#!` line, and the language of their scripts. */
const INTERPRETERS: Readonly<Record<string, LanguageId>> = {
  sh: 'bash', bash: 'bash', zsh: 'bash', ksh: 'bash', dash: 'bash', ash: 'bash',
  python: 'python', python2: 'python', python3: 'python',
  node: 'javascript', nodejs: 'javascript', deno: 'typescript', bun: 'typescript', 'ts-node': 'typescript', tsx: 'typescript',
  ruby: 'ruby', perl: 'perl', php: 'php', lua: 'lua', luajit: 'lua', tclsh: 'tcl', wish: 'tcl',
  Rscript: 'r', julia: 'julia', elixir: 'elixir', escript: 'erlang', runhaskell: 'haskell', runghc: 'haskell',
  pwsh: 'powershell', guile: 'scheme', racket: 'racket', sbcl: 'lisp', clisp: 'lisp', make: 'make', groovy: 'groovy', scala: 'scala',
  swift: 'swift', kotlin: 'kotlin', 'dart': 'dart', crystal: 'crystal', nim: 'nim',
};

/** Emacs mode names in a `-*- … -*-` first line. */
const EMACS_MODES: Readonly<Record<string, LanguageId>> = {
  'shell-script': 'bash', sh: 'bash', bash: 'bash', python: 'python', perl: 'perl', cperl: 'perl', ruby: 'ruby',
  'emacs-lisp': 'lisp', lisp: 'lisp', scheme: 'scheme', tcl: 'tcl', makefile: 'make', c: 'c', 'c++': 'cpp',
  js: 'javascript', javascript: 'javascript', lua: 'lua', sql: 'sql',
};

/**
 * The language of a file without a telling name (`bash_completion`, `bin/deploy`), from its
 * first line: a `#!` interpreter (`#!/usr/bin/env python3`) or an Emacs mode line
 * (`-*- shell-script -*-`). Undefined when neither names a language we read.
 */
export function languageFromFirstLine(head: string): LanguageId | undefined {
  const first = head.slice(0, 300).split('\n', 1)[0] ?? '';
  const shebang = /^#!\s*(?:\S*\/)?(?:env\s+(?:-\S+\s+)*)?([A-Za-z][\w.+-]*)/.exec(first);
  if (shebang?.[1]) {
    const name = shebang[1].replace(/[\d.]+$/, '') || shebang[1];
    return INTERPRETERS[shebang[1]] ?? INTERPRETERS[name];
  }
  const mode = /-\*-\s*(?:.*?\bmode:\s*)?([\w+-]+)\s*;?[^\n]*?-\*-/i.exec(first);
  if (mode?.[1]) return EMACS_MODES[mode[1].toLowerCase()];
  return undefined;
}

