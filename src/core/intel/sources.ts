/**
 * The source files one navigation call reads: each file's text, definitions and imports
 * ("facts"), and its syntax tree with its locals scopes. Facts come from the index when the
 * file is unchanged since it was indexed (the stored content hash matches), so a file is
 * parsed at most once, for its tree. Facts are cached for the call and forgotten by `reset()`;
 * trees live in a {@link TreeCache}, which a long-lived host keeps across calls.
 */
import * as path from 'node:path';
import type { Node } from 'web-tree-sitter';
import type { WorkspaceFs } from '../ports';
import type { CodeParser } from '../parse/parser';
import { languageForPath } from '../parse/languages';
import { sha1 } from '../parse/prepare';
import type { IndexStore } from '../store/store';
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
  /** Content hash (the index's): keys the file's syntax tree in the tree cache. */
  hash: string;
  language: LanguageId;
  symbols: SymbolDef[];
  importSpecs: ImportSpec[];
  lines: string[];
}

export interface SourceTree {
  root: Node;
  scopes: LocalScopes | undefined;
}

/**
 * Syntax trees a call holds at once: a reference search over a big package stays bounded (the
 * oldest held tree is released to the cache, which may free it).
 */
const MAX_HELD_TREES = 128;

interface CachedTree {
  tree: SourceTree;
  dispose(): void;
  bytes: number;
  /** Calls holding the tree now: a held tree is never freed. */
  pins: number;
}

/**
 * Parsed syntax trees by language and content hash, least recently used first, bounded by the
 * size of their sources. A long-lived host keeps one across calls, so that the files a
 * reference search resolved are not parsed again by the next search (parsing is most of the
 * fallback's time). A tree is WebAssembly memory: eviction and `clear()` delete it.
 *
 * Invariant: a tree is freed only when no call holds it (`pins` is 0) and never used after.
 */
export class TreeCache {
  private readonly entries = new Map<string, CachedTree>();
  private bytes = 0;

  /** `maxBytes` 0 keeps nothing once released: the per-call behaviour of a one-shot process. */
  constructor(private readonly maxBytes = 64 * 1024 * 1024) {}

  get size(): number {
    return this.entries.size;
  }

  /** The tree for `key`, made on a miss; held (never freed) until `release(key)`. */
  acquire(key: string, bytes: number, make: () => SourceTree & { dispose(): void }): SourceTree {
    let e = this.entries.get(key);
    if (e) this.entries.delete(key);
    else {
      const t = make();
      e = { tree: { root: t.root, scopes: t.scopes }, dispose: t.dispose, bytes, pins: 0 };
      this.bytes += bytes;
    }
    e.pins++;
    this.entries.set(key, e);
    return e.tree;
  }

  release(key: string): void {
    const e = this.entries.get(key);
    if (e && e.pins > 0) e.pins--;
    this.evict();
  }

  private evict(): void {
    if (this.bytes <= this.maxBytes) return;
    for (const [key, e] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      if (e.pins > 0) continue;
      e.dispose();
      this.entries.delete(key);
      this.bytes -= e.bytes;
    }
  }

  /** Frees every tree no call holds. */
  clear(): void {
    for (const [key, e] of this.entries) {
      if (e.pins > 0) continue;
      e.dispose();
      this.entries.delete(key);
      this.bytes -= e.bytes;
    }
  }
}

export interface SourceDeps {
  root: string;
  fs: WorkspaceFs;
  parser(): Promise<CodeParser>;
  /** The index: definitions and imports of unchanged files are read from it, not parsed. */
  store?: IndexStore;
  /** The host's tree cache; without one, trees live for one call. */
  trees?: TreeCache;
}

export class SourceFiles {
  private facts = new Map<string, Promise<FileFacts | undefined>>();
  private texts = new Map<string, Promise<{ text: string; hash: string } | undefined>>();
  /** Tree keys this call holds, by path, oldest first. */
  private held = new Map<string, string>();
  private readonly trees: TreeCache;

  constructor(private readonly deps: SourceDeps) {
    this.trees = deps.trees ?? new TreeCache(0);
  }

  /** A file's text and content hash, read once per call; undefined when it cannot be read. */
  text(rel: string): Promise<{ text: string; hash: string } | undefined> {
    return memo(this.texts, rel, async () => {
      try {
        const bytes = await this.deps.fs.readFile(path.join(this.deps.root, rel));
        return { text: new TextDecoder().decode(bytes), hash: sha1(bytes) };
      } catch {
        return undefined;
      }
    });
  }

  fileFacts(rel: string): Promise<FileFacts | undefined> {
    return memo(this.facts, rel, () => this.loadFacts(rel));
  }

  private async loadFacts(rel: string): Promise<FileFacts | undefined> {
    const language = languageForPath(rel);
    if (!language || language === 'markdown') return undefined;
    const read = await this.text(rel);
    if (!read) return undefined;
    const { text, hash } = read;
    const lines = text.split('\n');
    const row = this.deps.store?.getFile(rel);
    if (row && row.hash === hash && row.language === language) {
      return { text, hash, language, symbols: this.deps.store!.symbolsOfFile(row.id), importSpecs: this.deps.store!.importSpecsOf(row.id), lines };
    }
    const parser = await this.deps.parser();
    let parsed;
    try {
      parsed = parser.parse(rel, language, text);
    } catch {
      return undefined;
    }
    return { text, hash, language, symbols: parsed.symbols, importSpecs: parsed.importSpecs, lines };
  }

  /**
   * The syntax tree and scope table of a file, held for the rest of the call (a reference
   * search resolves many uses per file) and released at its end, or when too many are held.
   */
  async syntax(rel: string, facts: FileFacts): Promise<SourceTree> {
    const key = `${facts.language}:${facts.hash}`;
    const parser = await this.deps.parser();
    const tree = this.trees.acquire(key, facts.text.length, () => {
      const t = parser.openTree(facts.language, facts.text);
      return { root: t.root, scopes: t.locals ? new LocalScopes(t.root, t.locals, facts.language) : undefined, dispose: t.dispose };
    });
    const prev = this.held.get(rel);
    if (prev !== undefined) this.trees.release(prev);
    this.held.delete(rel);
    this.held.set(rel, key);
    if (this.held.size > MAX_HELD_TREES) {
      const [oldest, oldKey] = this.held.entries().next().value as [string, string];
      this.held.delete(oldest);
      this.trees.release(oldKey);
    }
    return tree;
  }

  /** Releases every tree this call holds and forgets the files read. */
  reset(): void {
    const keys = [...this.held.values()];
    this.held.clear();
    for (const k of keys) this.trees.release(k);
    this.facts.clear();
    this.texts.clear();
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
