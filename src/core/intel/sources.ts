/**
 * The source files one navigation call reads: each file's text, definitions and imports
 * ("facts"), and its syntax tree with its locals scopes. Everything here is cached for the call
 * and forgotten by `reset()`; syntax trees are WebAssembly memory and are freed explicitly.
 */
import * as path from 'node:path';
import type { Node } from 'web-tree-sitter';
import type { WorkspaceFs } from '../ports';
import type { CodeParser } from '../parse/parser';
import { languageForPath } from '../parse/languages';
import type { ImportSpec, LanguageId, SymbolDef } from '../types';
import { LocalScopes } from './syntax';

/** A 1-based position in a workspace file. */
export interface Loc {
  path: string;
  line: number;
  col: number;
}

export interface FileFacts {
  text: string;
  language: LanguageId;
  symbols: SymbolDef[];
  importSpecs: ImportSpec[];
  lines: string[];
}

export interface SourceTree {
  root: Node;
  scopes: LocalScopes | undefined;
}

/** Syntax trees kept open during one call; a reference search over a big package stays bounded. */
const MAX_OPEN_TREES = 128;

export class SourceFiles {
  private facts = new Map<string, Promise<FileFacts | undefined>>();
  private trees = new Map<string, SourceTree & { dispose(): void }>();

  constructor(private readonly deps: { root: string; fs: WorkspaceFs; parser(): Promise<CodeParser> }) {}

  fileFacts(rel: string): Promise<FileFacts | undefined> {
    return memo(this.facts, rel, () => this.loadFacts(rel));
  }

  private async loadFacts(rel: string): Promise<FileFacts | undefined> {
    const language = languageForPath(rel);
    if (!language || language === 'markdown') return undefined;
    let bytes: Uint8Array;
    try {
      bytes = await this.deps.fs.readFile(path.join(this.deps.root, rel));
    } catch {
      return undefined;
    }
    const text = new TextDecoder().decode(bytes);
    const parser = await this.deps.parser();
    let parsed;
    try {
      parsed = parser.parse(rel, language, text);
    } catch {
      return undefined;
    }
    return { text, language, symbols: parsed.symbols, importSpecs: parsed.importSpecs, lines: text.split('\n') };
  }

  /**
   * Syntax trees and scope tables of the files a call touches, kept for the call (a reference
   * search resolves many uses per file) and freed at its end, or when too many are open.
   */
  async syntax(rel: string, facts: FileFacts): Promise<SourceTree> {
    const hit = this.trees.get(rel);
    if (hit) return hit;
    const parser = await this.deps.parser();
    const t = parser.openTree(facts.language, facts.text);
    const entry = { root: t.root, scopes: t.locals ? new LocalScopes(t.root, t.locals, facts.language) : undefined, dispose: t.dispose };
    if (this.trees.size >= MAX_OPEN_TREES) {
      const [oldest, old] = this.trees.entries().next().value as [string, { dispose(): void }];
      old.dispose();
      this.trees.delete(oldest);
    }
    this.trees.set(rel, entry);
    return entry;
  }

  /** Frees every cached tree and forgets the facts read. */
  reset(): void {
    for (const t of this.trees.values()) t.dispose();
    this.trees.clear();
    this.facts.clear();
  }
}

/** The column of `name` on a 1-based line, or 1. */
export function nameCol(facts: FileFacts, line: number, name: string): number {
  const text = facts.lines[line - 1] ?? '';
  const re = new RegExp(`(?<![\\w$])${name.replace(/[$]/g, '\\$')}(?![\\w$])`);
  const m = re.exec(text);
  return m ? m.index + 1 : 1;
}

/** The cached value for `key`, made (and cached) on first use: the per-call caches of a navigation. */
export function memo<V>(cache: Map<string, V>, key: string, make: () => V): V {
  let v = cache.get(key);
  if (v === undefined) {
    v = make();
    cache.set(key, v);
  }
  return v;
}
