/**
 * Structured import statements. The tag query marks each import/include/use statement with
 * `@import`; this module reads the statement's syntax tree into {@link ImportSpec}s, which the
 * code graph resolves to files and the navigation chain follows name by name.
 *
 * Grammar shapes differ too much for one query to say "module" and "imported name" across
 * languages, so each language family has a small reader here. A statement a reader does not
 * understand still yields a spec with its source text, never an error: resolution is best
 * effort, and the statement's text is kept in `ParsedFile.imports` regardless.
 */
import type { Node } from 'web-tree-sitter';
import type { ImportSpec, LanguageId } from '../types';

type Names = NonNullable<ImportSpec['names']>;

/** The text of a string literal without its quotes. */
function unquote(text: string): string {
  const t = text.trim();
  if (t.length >= 2) {
    const q = t[0];
    if ((q === '"' || q === "'" || q === '`' || q === '<') && t.endsWith(q === '<' ? '>' : q)) return t.slice(1, -1);
  }
  return t;
}

function line(node: Node): number {
  return node.startPosition.row + 1;
}

function firstOfType(node: Node, types: readonly string[]): Node | undefined {
  for (const c of node.namedChildren) if (c && types.includes(c.type)) return c;
  return undefined;
}

// ---- TypeScript / JavaScript --------------------------------------------------------------

function jsSpecifiers(clause: Node, names: Names, kindOf: 'import_specifier' | 'export_specifier'): void {
  for (const spec of clause.namedChildren) {
    if (!spec || spec.type !== kindOf) continue;
    const name = spec.childForFieldName('name')?.text;
    const alias = spec.childForFieldName('alias')?.text;
    if (name) names.push({ name: unquote(name), local: unquote(alias ?? name) });
  }
}

function readJs(node: Node): ImportSpec[] {
  if (node.type === 'import_statement') {
    const source = node.childForFieldName('source');
    if (!source) return [];
    const spec: ImportSpec = { source: unquote(source.text), line: line(node) };
    const names: Names = [];
    const clause = firstOfType(node, ['import_clause']);
    if (clause) {
      for (const c of clause.namedChildren) {
        if (!c) continue;
        if (c.type === 'identifier') names.push({ name: 'default', local: c.text });
        else if (c.type === 'named_imports') jsSpecifiers(c, names, 'import_specifier');
        else if (c.type === 'namespace_import') {
          const id = firstOfType(c, ['identifier']);
          if (id) spec.namespace = id.text;
        }
      }
    }
    if (names.length > 0) spec.names = names;
    return [spec];
  }
  if (node.type === 'export_statement') {
    const source = node.childForFieldName('source');
    if (!source) return [];
    const spec: ImportSpec = { source: unquote(source.text), line: line(node), reexport: true };
    const clause = firstOfType(node, ['export_clause']);
    if (clause) {
      const names: Names = [];
      jsSpecifiers(clause, names, 'export_specifier');
      if (names.length > 0) spec.names = names;
    } else {
      // `export * from 'x'` or `export * as ns from 'x'`.
      const ns = firstOfType(node, ['namespace_export']);
      const id = ns ? firstOfType(ns, ['identifier', 'string']) : undefined;
      if (id) spec.namespace = unquote(id.text);
      else spec.star = true;
    }
    return [spec];
  }
  // `const x = require('y')`, `const { a, b: c } = require('y')`, a bare `require('y')`.
  const specs: ImportSpec[] = [];
  const calls = node.type === 'expression_statement' ? node.namedChildren : node.descendantsOfType('variable_declarator');
  for (const c of calls) {
    if (!c) continue;
    const call = c.type === 'variable_declarator' ? c.childForFieldName('value') : c;
    if (!call || call.type !== 'call_expression' || call.childForFieldName('function')?.text !== 'require') continue;
    const arg = call.childForFieldName('arguments')?.namedChildren.find((a) => a?.type === 'string');
    if (!arg) continue;
    const spec: ImportSpec = { source: unquote(arg.text), line: line(node) };
    const target = c.type === 'variable_declarator' ? c.childForFieldName('name') : null;
    if (target?.type === 'identifier') spec.namespace = target.text;
    else if (target?.type === 'object_pattern') {
      const names: Names = [];
      for (const p of target.namedChildren) {
        if (!p) continue;
        if (p.type === 'shorthand_property_identifier_pattern') names.push({ name: p.text, local: p.text });
        else if (p.type === 'pair_pattern') {
          const k = p.childForFieldName('key')?.text;
          const v = p.childForFieldName('value');
          if (k && v?.type === 'identifier') names.push({ name: k, local: v.text });
        }
      }
      if (names.length > 0) spec.names = names;
    }
    specs.push(spec);
  }
  return specs;
}

// ---- Python -------------------------------------------------------------------------------

function readPython(node: Node): ImportSpec[] {
  if (node.type === 'import_statement') {
    const specs: ImportSpec[] = [];
    for (const c of node.childrenForFieldName('name')) {
      if (!c) continue;
      if (c.type === 'aliased_import') {
        const name = c.childForFieldName('name')?.text;
        const alias = c.childForFieldName('alias')?.text;
        if (name) specs.push({ source: name, line: line(node), namespace: alias ?? name });
      } else {
        // `import a.b.c` binds `a`; `a.b.c` stays reachable through it.
        specs.push({ source: c.text, line: line(node), namespace: c.text.split('.')[0] ?? c.text });
      }
    }
    return specs;
  }
  if (node.type === 'import_from_statement') {
    const mod = node.childForFieldName('module_name');
    if (!mod) return [];
    const spec: ImportSpec = { source: mod.text.replace(/\s+/g, ''), line: line(node) };
    if (firstOfType(node, ['wildcard_import'])) {
      spec.star = true;
      return [spec];
    }
    const names: Names = [];
    for (const c of node.childrenForFieldName('name')) {
      if (!c) continue;
      if (c.type === 'aliased_import') {
        const name = c.childForFieldName('name')?.text;
        const alias = c.childForFieldName('alias')?.text;
        if (name) names.push({ name, local: alias ?? name });
      } else names.push({ name: c.text, local: c.text });
    }
    if (names.length > 0) spec.names = names;
    return [spec];
  }
  return [];
}

// ---- Go -----------------------------------------------------------------------------------

/** The package name Go gives an import path by default: its last element, minus a `/vN` suffix. */
export function goPackageName(importPath: string): string {
  const parts = importPath.split('/').filter((p) => p.length > 0);
  let last = parts[parts.length - 1] ?? importPath;
  if (/^v\d+$/.test(last) && parts.length > 1) last = parts[parts.length - 2] ?? last;
  // gopkg.in/yaml.v2 → yaml; go-foo → foo is a convention too weak to guess.
  return last.replace(/\.v\d+$/, '');
}

function readGo(node: Node): ImportSpec[] {
  if (node.type !== 'import_spec') return [];
  const p = node.childForFieldName('path');
  if (!p) return [];
  const source = unquote(p.text);
  const spec: ImportSpec = { source, line: line(node) };
  const alias = node.childForFieldName('name');
  if (alias?.type === 'dot') spec.star = true;
  else if (alias?.type === 'blank_identifier') return [spec];
  else spec.namespace = alias?.text ?? goPackageName(source);
  return [spec];
}

// ---- Rust ---------------------------------------------------------------------------------

/** Expands a `use` tree (`a::b::{c, d as e, f::*}`) into one spec per module path. */
function rustUseTree(node: Node, prefix: string, out: ImportSpec[], ln: number): void {
  const join = (a: string, b: string) => (a ? `${a}::${b}` : b);
  switch (node.type) {
    case 'scoped_use_list': {
      const path = node.childForFieldName('path')?.text ?? '';
      const list = node.childForFieldName('list');
      if (list) for (const c of list.namedChildren) if (c) rustUseTree(c, join(prefix, path), out, ln);
      return;
    }
    case 'use_list':
      for (const c of node.namedChildren) if (c) rustUseTree(c, prefix, out, ln);
      return;
    case 'use_as_clause': {
      const path = node.childForFieldName('path')?.text ?? '';
      const alias = node.childForFieldName('alias')?.text;
      const full = join(prefix, path);
      const cut = full.lastIndexOf('::');
      const name = cut >= 0 ? full.slice(cut + 2) : full;
      out.push({ source: cut >= 0 ? full.slice(0, cut) : full, line: ln, names: [{ name, local: alias ?? name }] });
      return;
    }
    case 'use_wildcard': {
      const path = node.namedChildren[0]?.text ?? '';
      out.push({ source: join(prefix, path), line: ln, star: true });
      return;
    }
    default: {
      const full = join(prefix, node.text.replace(/\s+/g, ''));
      const cut = full.lastIndexOf('::');
      if (cut < 0) {
        out.push({ source: full, line: ln, namespace: full });
        return;
      }
      const name = full.slice(cut + 2);
      if (name === 'self') out.push({ source: full.slice(0, cut), line: ln, namespace: full.slice(0, cut).split('::').pop() ?? name });
      else out.push({ source: full.slice(0, cut), line: ln, names: [{ name, local: name }] });
    }
  }
}

function readRust(node: Node): ImportSpec[] {
  if (node.type === 'use_declaration') {
    const arg = node.childForFieldName('argument');
    const out: ImportSpec[] = [];
    if (arg) rustUseTree(arg, '', out, line(node));
    return out;
  }
  if (node.type === 'mod_item') {
    const name = node.childForFieldName('name')?.text;
    return name ? [{ source: `mod ${name}`, line: line(node), namespace: name }] : [];
  }
  if (node.type === 'extern_crate_declaration') {
    const name = node.childForFieldName('name')?.text;
    const alias = node.childForFieldName('alias')?.text;
    return name ? [{ source: name, line: line(node), namespace: alias ?? name }] : [];
  }
  return [];
}

// ---- C / C++ ------------------------------------------------------------------------------

function readC(node: Node): ImportSpec[] {
  if (node.type === 'module_import') {
    // Objective-C `@import Foundation;`: a module, not a file.
    const m = node.childForFieldName('path');
    return m ? [{ source: m.text, line: line(node), system: true }] : [];
  }
  if (node.type !== 'preproc_include') {
    // C++ `using std::string;` / `using namespace std;`: a name, not a file.
    return [];
  }
  const p = node.childForFieldName('path');
  if (!p) return [];
  const spec: ImportSpec = { source: unquote(p.text), line: line(node) };
  if (p.type === 'system_lib_string') spec.system = true;
  return [spec];
}

// ---- Java, Kotlin, C#, Swift, PHP, Ruby: dotted or quoted module names ----------------------

function readDotted(node: Node): ImportSpec[] {
  // The statement's text without its keywords: `import static a.b.C.*;` → `a.b.C.*`.
  const text = node.text
    .replace(/^\s*(import|using|use|require_once|require|include_once|include)\b/, '')
    .replace(/\b(static|global|namespace|function|const)\b/g, '')
    .replace(/[;()]/g, '')
    .trim();
  const quoted = /["']([^"']+)["']/.exec(text);
  if (quoted?.[1]) return [{ source: quoted[1], line: line(node) }];
  const aliasMatch = /^(.*?)\s+(?:as\s+)?(\w+)$/.exec(text);
  let path = text;
  let alias: string | undefined;
  if (aliasMatch?.[1] && /\bas\b/.test(text)) {
    path = aliasMatch[1].trim();
    alias = aliasMatch[2];
  }
  path = path.replace(/\s+/g, '').replace(/\\/g, '.');
  if (path.endsWith('.*')) return [{ source: path.slice(0, -2), line: line(node), star: true }];
  const cut = path.lastIndexOf('.');
  if (cut < 0) return [{ source: path, line: line(node), namespace: alias ?? path }];
  const name = path.slice(cut + 1);
  return [{ source: path.slice(0, cut), line: line(node), names: [{ name, local: alias ?? name }] }];
}

/**
 * A statement that names a module by a dotted path after a keyword: Haskell `import qualified
 * Data.Map as M` and `import Data.List (sortBy, foldl')`, OCaml `open Printf` / `include Set`,
 * Elixir `alias Shop.Cart, as: C` / `import Enum, only: [map: 2]`, Scala `import a.b.{C, D => E}`.
 */
function readModuleStatement(node: Node, language: LanguageId): ImportSpec[] {
  let text = collapseWs(node.text).replace(/^(?:import|open|include|alias|require|use)\b\s*(?:qualified\b\s*|module\s+type\b\s*|!\s*)?/, '');
  const at = line(node);
  // Scala's selectors: `a.b.{C, D => E}` and `a.b._` / `a.b.*`.
  const braces = /^([\w.]+)\.\{([^}]*)\}/.exec(text);
  if (braces?.[1] && braces[2] !== undefined) {
    const names = braces[2].split(',').map((n) => n.trim()).filter(Boolean).map((n) => {
      const [name, local] = n.split(/\s*(?:=>|\bas\b)\s*/);
      return { name: name!.trim(), local: (local ?? name!).trim() };
    });
    return [{ source: braces[1], line: at, names: names.filter((n) => n.name !== '_' && n.name !== '*') }];
  }
  const path = /^[A-Za-z_][\w'.]*/.exec(text)?.[0]?.replace(/\.$/, '');
  if (!path) return [];
  text = text.slice(path.length);
  if (/\._$/.test(path)) return [{ source: path.slice(0, -2), line: at, star: true }];
  if (/^\.\*/.test(text)) return [{ source: path, line: at, star: true }];
  const spec: ImportSpec = { source: path, line: at };
  const alias = /^\s*(?:,\s*)?(?:as:?\s*|as\s+)([A-Z][\w.]*|\w+)/.exec(text);
  if (alias?.[1]) spec.namespace = alias[1];
  // Haskell's import list; in OCaml a parenthesis after a module is a functor's argument.
  const list = language === 'haskell' ? /^\s*\(([^)]*)\)/.exec(text) : null;
  if (list?.[1] !== undefined) {
    const names = list[1].split(',').map((n) => n.trim().replace(/\(.*$/, '')).filter((n) => /^[\w']+$/.test(n));
    if (names.length) spec.names = names.map((name) => ({ name, local: name }));
  }
  return [spec];
}

function collapseWs(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/** A shell `source FILE` / `. FILE`: the file as written, quotes removed; a path, never a dotted name. */
function readShellSource(node: Node): ImportSpec[] {
  const arg = node.text.replace(/^\s*(?:source|\.)\s+/, '').trim().split(/\s+/)[0] ?? '';
  const source = arg.replace(/^["']|["']$/g, '');
  return source ? [{ source, line: line(node) }] : [];
}

/** Structured specs of one `@import` node; an empty list when the statement says nothing resolvable. */
export function readImport(node: Node, language: LanguageId): ImportSpec[] {
  try {
    switch (language) {
      case 'typescript':
      case 'tsx':
      case 'javascript':
        return readJs(node);
      case 'python':
        return readPython(node);
      case 'go':
        return readGo(node);
      case 'rust':
        return readRust(node);
      case 'c':
      case 'cpp':
      case 'objc':
        return readC(node);
      case 'bash':
        return readShellSource(node);
      case 'haskell':
      case 'ocaml':
      case 'elixir':
      case 'scala':
        return readModuleStatement(node, language);
      case 'markdown':
        return [];
      default:
        return readDotted(node);
    }
  } catch {
    // A reader meeting a shape it does not know must not lose the file's other results.
    return [];
  }
}
