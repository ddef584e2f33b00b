/** Shared data model of the engine. Line numbers are 1-based and inclusive everywhere. */

export const LANGUAGES = [
  'typescript',
  'tsx',
  'javascript',
  'python',
  'go',
  'rust',
  'java',
  'c',
  'cpp',
  'csharp',
  'ruby',
  'php',
  'kotlin',
  'swift',
  'markdown',
  // Read as text: chunks by definitions found with line patterns (queries/text-definitions.json).
  'bash',
  'powershell',
  'elixir',
  'erlang',
  'haskell',
  'elm',
  'ocaml',
  'fsharp',
  'lua',
  'scala',
  'groovy',
  'dart',
  'zig',
  'nim',
  'crystal',
  'perl',
  'r',
  'julia',
  'clojure',
  'lisp',
  'racket',
  'tcl',
  'd',
  'objc',
  'sql',
  'fortran',
  'protobuf',
  'vue',
  'svelte',
  'scheme',
  'vimscript',
  'cmake',
  'make',
  'prolog',
] as const;

export type LanguageId = (typeof LANGUAGES)[number];

export type SymbolKind =
  | 'function'
  | 'method'
  | 'class'
  | 'interface'
  | 'struct'
  | 'enum'
  | 'trait'
  | 'type'
  | 'module'
  | 'constant'
  | 'variable'
  | 'field'
  | 'heading';

/** A definition found in a file. */
export interface SymbolDef {
  name: string;
  kind: SymbolKind;
  /** Name qualified by enclosing types/modules, e.g. `Writer.Close` or `pkg.Type.method`. */
  qualifiedName: string;
  /** First line of the declaration, trimmed (e.g. `func (z *Writer) Close() error`). */
  signature: string;
  startLine: number;
  endLine: number;
  /** Qualified name of the enclosing definition, if any. */
  container?: string;
}

/** A use of an identifier (a call, a type use, a plain reference). */
export interface SymbolRef {
  name: string;
  line: number;
  /** 1-based column of the first character. */
  col: number;
  /** `inherit`: the name of a superclass, implemented interface or embedded type in a type's header. */
  kind: 'call' | 'type' | 'reference' | 'inherit';
}

/**
 * One import, include or use statement, structured enough to resolve names to files. A
 * statement importing several modules (Python `import a, b`) gives one spec per module.
 */
export interface ImportSpec {
  /**
   * The module as written, without quotes: `./util`, `django.db.models`, `.models` (leading
   * dots kept for Python relative imports), `net/http`, `foo.h`, `crate::a::b`, `java.util.List`.
   */
  source: string;
  line: number;
  /** Names brought into scope: `name` as the module exports it, `local` as this file uses it. */
  names?: Array<{ name: string; local: string }>;
  /**
   * A local name bound to the module itself: `import * as z`, Python `import a.b as c` (`c`),
   * Python `import a.b` (`a`), a Go package's name or alias, a TS/JS default import.
   */
  namespace?: string;
  /** Everything the module exports is brought in: `from x import *`, `export * from`, Go `import . "x"`. */
  star?: boolean;
  /** The statement re-exports what it imports (`export { a } from`, `export * from`). */
  reexport?: boolean;
  /** `#include <x>`: a system header, searched outside the workspace first. */
  system?: boolean;
}

/** A retrievable span of a file, with the context that makes it understandable alone. */
export interface Chunk {
  startLine: number;
  endLine: number;
  /** What the chunk mainly is: a symbol kind, `section` for markdown, or `block`. */
  kind: SymbolKind | 'section' | 'block';
  /** Qualified name of the main definition the chunk holds, if any. */
  symbol?: string;
  signature?: string;
  /** Header line of the enclosing class/impl/struct, if the chunk sits inside one. */
  container?: string;
  decorators?: string[];
  docstring?: string;
  /** The chunk's own source text (the body). */
  text: string;
}

export interface ParsedFile {
  language: LanguageId;
  /** Import/include/use statements, as written (first line of each, trimmed). */
  imports: string[];
  /** The same statements, structured for resolution. */
  importSpecs: ImportSpec[];
  chunks: Chunk[];
  symbols: SymbolDef[];
  refs: SymbolRef[];
}
