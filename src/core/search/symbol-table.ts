/**
 * The symbol table search reads, persisted: definitions by normalised name and by sub-word,
 * written by the writer at commit and read in place by a process that answers one query, so
 * that its first search does not rebuild the table from every symbol row (about half a second
 * and 150,000 objects on the Go standard library).
 *
 * Layout (little-endian u32 words unless noted), read without decoding more than a lookup needs:
 *   header    magic, version, generation, mode, nStrings, stringBytes, nSymbols, nKeys, nKeyRefs, nParts, nPartRefs
 *   strings   offsets[nStrings + 1], then UTF-8 bytes (padded to 4)
 *   symbols   8 words each: name, qualifiedName, kind, fileId, path, startLine, container + 1 (0: none), parts
 *   keys      string index per key (sorted), start[nKeys + 1], symbol indices
 *   parts     the same, for sub-words
 * Lists keep the order of the in-memory table they were written from, so that ranking ties
 * break the same way either side.
 */
import type { SymbolKind } from '../types';
import type { SymbolCandidate } from './hybrid';
import { normalizeSymbolName } from './symbol-name';
import { identifierParts } from './tokenizer';
import { BlockReader, memorySource, type ByteSource } from '../store/byte-source';

const MAGIC = 0x31545356; // "VST1"
const VERSION = 1;
const HEADER_WORDS = 11;
const SYMBOL_WORDS = 8;

/** The in-memory tables a writer holds: normalised name → definitions, sub-word → definitions. */
export interface SymbolMaps {
  byName: ReadonlyMap<string, readonly SymbolCandidate[]>;
  byPart: ReadonlyMap<string, readonly SymbolCandidate[]>;
}

/** The table's strings, each numbered once, in the order first interned. */
function stringTable(): { strings: Map<string, number>; intern(s: string): number } {
  const strings = new Map<string, number>();
  return {
    strings,
    intern: (s) => {
      let i = strings.get(s);
      if (i === undefined) strings.set(s, (i = strings.size));
      return i;
    },
  };
}

/** Encodes the tables; `generation` and `mode` identify the index state they describe. */
export function encodeSymbolTable(maps: SymbolMaps, generation: number, mode: string): Uint8Array {
  const { strings, intern } = stringTable();
  const modeIdx = intern(mode);
  const symbolIdx = new Map<SymbolCandidate, number>();
  // Typed: on the Linux kernel, 3.1 M definitions are 25 M words here.
  const symbols = new U32List();
  const add = (c: SymbolCandidate) => {
    let i = symbolIdx.get(c);
    if (i !== undefined) return i;
    i = symbolIdx.size;
    symbolIdx.set(c, i);
    symbols.push(intern(c.name), intern(c.qualifiedName), intern(c.kind), c.fileId, intern(c.path), c.startLine, c.container !== undefined ? intern(c.container) + 1 : 0, c.parts);
    return i;
  };
  const postings = (map: ReadonlyMap<string, readonly SymbolCandidate[]>) => {
    const keys = [...map.keys()].sort(compare);
    const start = new U32List();
    start.push(0);
    const refs = new U32List();
    for (const k of keys) {
      for (const c of map.get(k)!) refs.push(add(c));
      start.push(refs.length);
    }
    return { keys: keys.map(intern), start: start.view(), refs: refs.view() };
  };
  const byName = postings(maps.byName);
  const byPart = postings(maps.byPart);
  return layout(strings, modeIdx, generation, symbols.view(), byName, byPart);
}

/** What {@link encodeSymbolRows} reads of each definition (a symbol row). */
export interface SymbolRowLike {
  name: string;
  qualifiedName: string;
  kind: string;
  fileId: number;
  path: string;
  startLine: number;
  container?: string;
}

/**
 * Encodes the tables straight from the definitions, in the order the in-memory tables would
 * hold them, without building those tables: the same lookups, list for list, as
 * {@link encodeSymbolTable} over the maps built from these rows. A build that changed many files
 * commits with this: on the Linux kernel the maps are 3.1 M objects (most of the build's last
 * gigabyte of heap) that nothing reads after the commit. Here each definition is 8 words and its
 * strings are interned once.
 */
export function encodeSymbolRows(rows: Iterable<SymbolRowLike>, generation: number, mode: string): Uint8Array {
  const { strings, intern } = stringTable();
  const modeIdx = intern(mode);
  // Per definition, in row order: its 8 words, its key (a string index: first seen, first
  // numbered, as a Map's insertion order), and the range of its sub-words in `partOf`.
  const words = new U32List();
  const keyOf = new U32List();
  const partOf = new U32List();
  const partsFrom = new U32List();
  // On the Linux kernel (3.1 M definitions) lookups in `strings` were most of the time: a
  // name's key and sub-words are worked out once per distinct name, and a row's path, kind and
  // container are most often its predecessor's.
  const perName: Array<{ key: number; parts: number; partIds: readonly number[] } | undefined> = [];
  const last = { path: '', pathIdx: -1, kind: '', kindIdx: -1, container: '', containerIdx: -1 };
  for (const r of rows) {
    const nameIdx = intern(r.name);
    let named = perName[nameIdx];
    if (!named) {
      const parts = identifierParts(r.name);
      named = { key: intern(normalizeSymbolName(r.name)), parts: parts.length, partIds: parts.length >= 2 ? [...new Set(parts)].map(intern) : [] };
      perName[nameIdx] = named;
    }
    if (r.path !== last.path || last.pathIdx < 0) last.pathIdx = intern((last.path = r.path));
    if (r.kind !== last.kind || last.kindIdx < 0) last.kindIdx = intern((last.kind = r.kind));
    let container = 0;
    if (r.container) {
      if (r.container !== last.container || last.containerIdx < 0) last.containerIdx = intern((last.container = r.container));
      container = last.containerIdx + 1;
    }
    words.push(nameIdx, r.qualifiedName === r.name ? nameIdx : intern(r.qualifiedName), last.kindIdx, r.fileId, last.pathIdx, r.startLine, container, named.parts);
    keyOf.push(named.key);
    partsFrom.push(partOf.length);
    for (const id of named.partIds) partOf.push(id);
  }
  const n = keyOf.length;
  partsFrom.push(partOf.length);
  const key = keyOf.view();
  // Keys in first-seen order, then sorted: the in-memory name table's iteration order and the
  // persisted one's.
  const keyIds = uniqueInOrder(key);
  const text = [...strings.keys()];
  const byString = (ids: Uint32Array) => Uint32Array.from(ids).sort((a, b) => compare(text[a]!, text[b]!));
  const sortedKeys = byString(keyIds);
  // Symbols numbered by key (sorted), then row order: a key's list is a run of indices.
  const rank = new Uint32Array(strings.size);
  sortedKeys.forEach((k, i) => (rank[k] = i));
  const nameStart = new Uint32Array(sortedKeys.length + 1);
  for (let i = 0; i < n; i++) nameStart[rank[key[i]!]! + 1]!++;
  for (let k = 0; k < sortedKeys.length; k++) nameStart[k + 1]! += nameStart[k]!;
  const fill = nameStart.slice(0, sortedKeys.length);
  const symbolOf = new Uint32Array(n);
  const symbols = new Uint32Array(n * SYMBOL_WORDS);
  const rowWords = words.view();
  for (let i = 0; i < n; i++) {
    const s = fill[rank[key[i]!]!]!++;
    symbolOf[i] = s;
    symbols.set(rowWords.subarray(i * SYMBOL_WORDS, (i + 1) * SYMBOL_WORDS), s * SYMBOL_WORDS);
  }
  const nameRefs = new Uint32Array(n);
  for (let s = 0; s < n; s++) nameRefs[s] = s;
  // Sub-word lists in the in-memory order: by the definition's key in first-seen order, then row.
  const parts = partOf.view();
  const from = partsFrom.view();
  const sortedParts = byString(uniqueInOrder(parts));
  const partRank = new Uint32Array(strings.size);
  sortedParts.forEach((p, i) => (partRank[p] = i));
  const partStart = new Uint32Array(sortedParts.length + 1);
  for (let j = 0; j < parts.length; j++) partStart[partRank[parts[j]!]! + 1]!++;
  for (let p = 0; p < sortedParts.length; p++) partStart[p + 1]! += partStart[p]!;
  const partFill = partStart.slice(0, sortedParts.length);
  const partRefs = new Uint32Array(parts.length);
  // Rows ordered by their key's first appearance, then row order (a counting sort).
  const seenRank = new Uint32Array(strings.size);
  keyIds.forEach((k, i) => (seenRank[k] = i));
  const byKeyStart = new Uint32Array(keyIds.length + 1);
  for (let i = 0; i < n; i++) byKeyStart[seenRank[key[i]!]! + 1]!++;
  for (let k = 0; k < keyIds.length; k++) byKeyStart[k + 1]! += byKeyStart[k]!;
  const rowsByKey = new Uint32Array(n);
  for (let i = 0; i < n; i++) rowsByKey[byKeyStart[seenRank[key[i]!]!]!++] = i;
  for (const i of rowsByKey) for (let j = from[i]!; j < from[i + 1]!; j++) partRefs[partFill[partRank[parts[j]!]!]!++] = symbolOf[i]!;
  return layout(strings, modeIdx, generation, symbols, { keys: sortedKeys, start: nameStart, refs: nameRefs }, { keys: sortedParts, start: partStart, refs: partRefs });
}

/** The distinct values of `ids`, in the order they first occur. */
function uniqueInOrder(ids: Uint32Array): Uint32Array {
  const seen = new Set<number>();
  const out = new U32List();
  for (const id of ids) {
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(id);
  }
  return out.view();
}

interface Postings {
  keys: ArrayLike<number>;
  start: ArrayLike<number>;
  refs: ArrayLike<number>;
}

/** Lays the table out (see the file's comment). */
function layout(strings: Map<string, number>, modeIdx: number, generation: number, symbols: Uint32Array, byName: Postings, byPart: Postings): Uint8Array {
  // One encoding of every string, NUL-separated (no symbol text holds a NUL), then the offsets.
  const all = new TextEncoder().encode([...strings.keys()].join('\0'));
  const stringBytes = strings.size === 0 ? 0 : all.length - (strings.size - 1);
  const words =
    HEADER_WORDS + (strings.size + 1) + Math.ceil(stringBytes / 4) + symbols.length + byName.keys.length + byName.start.length + byName.refs.length + byPart.keys.length + byPart.start.length + byPart.refs.length;
  const out = new Uint32Array(words);
  let o = 0;
  for (const v of [MAGIC, VERSION, generation, modeIdx, strings.size, stringBytes, symbols.length / SYMBOL_WORDS, byName.keys.length, byName.refs.length, byPart.keys.length, byPart.refs.length]) out[o++] = v;
  const bytes = new Uint8Array(out.buffer);
  const dataAt = (o + strings.size + 1) * 4;
  let at = 0;
  out[o++] = 0;
  for (let i = 0; i < all.length; i++) {
    const b = all[i]!;
    if (b === 0) {
      out[o++] = at;
      continue;
    }
    bytes[dataAt + at++] = b;
  }
  if (strings.size > 0) out[o++] = at;
  o += Math.ceil(stringBytes / 4);
  for (const arr of [symbols, byName.keys, byName.start, byName.refs, byPart.keys, byPart.start, byPart.refs]) {
    out.set(arr, o);
    o += arr.length;
  }
  return bytes;
}

/** A growable list of u32 words. */
class U32List {
  private buf = new Uint32Array(1024);
  length = 0;
  push(...words: number[]): void {
    if (this.length + words.length > this.buf.length) {
      const grown = new Uint32Array(Math.max(this.buf.length * 2, this.length + words.length));
      grown.set(this.buf.subarray(0, this.length));
      this.buf = grown;
    }
    for (const w of words) this.buf[this.length++] = w;
  }
  view(): Uint32Array {
    return this.buf.subarray(0, this.length);
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * A persisted symbol table, read in place by range (on the Linux kernel it is 293 MiB, of which a
 * search reads a few blocks): lookups decode only the entries they return.
 */
export class PersistedSymbolTable {
  private readonly decoder = new TextDecoder();
  private readonly cache = new Map<number, string>();
  /** One object per definition: search counts the parts a definition covers by identity. */
  private readonly symbolCache = new Map<number, SymbolCandidate>();
  private readonly stringOffsets: number;
  private readonly stringData: number;
  private readonly symbolsAt: number;
  private readonly names: { keys: number; start: number; refs: number; count: number };
  private readonly parts: { keys: number; start: number; refs: number; count: number };
  readonly generation: number;
  readonly mode: string;
  readonly symbolCount: number;

  /** Reads a table held in memory; undefined when the bytes are not one (another version, truncated). */
  static read(blob: Uint8Array): PersistedSymbolTable | undefined {
    return PersistedSymbolTable.open(memorySource(blob));
  }

  /** Opens a table where it lies; undefined (and `source` closed) when it is not one. The table closes `source` in {@link close}. */
  static open(source: ByteSource): PersistedSymbolTable | undefined {
    const reader = new BlockReader(source);
    try {
      if (source.byteLength < HEADER_WORDS * 4 || source.byteLength % 4 !== 0 || reader.u32(0) !== MAGIC || reader.u32(4) !== VERSION) throw new Error('not a symbol table');
      return new PersistedSymbolTable(reader);
    } catch {
      reader.close();
      return undefined;
    }
  }

  private constructor(private readonly reader: BlockReader) {
    const h = (i: number) => this.word(i);
    const nStrings = h(4);
    const stringBytes = h(5);
    this.symbolCount = h(6);
    this.stringOffsets = HEADER_WORDS;
    this.stringData = (HEADER_WORDS + nStrings + 1) * 4;
    this.symbolsAt = HEADER_WORDS + nStrings + 1 + Math.ceil(stringBytes / 4);
    const namesAt = this.symbolsAt + this.symbolCount * SYMBOL_WORDS;
    this.names = { keys: namesAt, start: namesAt + h(7), refs: namesAt + h(7) + h(7) + 1, count: h(7) };
    const partsAt = this.names.refs + h(8);
    this.parts = { keys: partsAt, start: partsAt + h(9), refs: partsAt + h(9) + h(9) + 1, count: h(9) };
    if ((this.parts.refs + h(10)) * 4 !== reader.byteLength) throw new Error('truncated symbol table');
    this.generation = h(2);
    this.mode = this.string(h(3));
  }

  /** The table's word `i`. */
  private word(i: number): number {
    return this.reader.u32(i * 4);
  }

  /** Releases the source the table is read from. */
  close(): void {
    this.reader.close();
  }

  /** Definitions whose normalised name is `key`. */
  named(key: string): SymbolCandidate[] {
    return this.lookup(this.names, key);
  }

  /** Definitions of two or more sub-words, one of which is `part`. */
  withPart(part: string): SymbolCandidate[] {
    return this.lookup(this.parts, part);
  }

  /**
   * Definitions of two or more sub-words that are all among `parts` (a part given twice counts
   * twice), in the order they first appear in the parts' lists: what counting {@link withPart}'s
   * lists gives, without decoding the definitions most lists hold (on the Linux kernel, tens of
   * thousands for `cpu`, each read from another block of the table).
   */
  coveredBy(parts: readonly string[], over?: { hidden: ReadonlySet<string>; extra(part: string): readonly SymbolCandidate[] }): SymbolCandidate[] {
    const t = this.parts;
    // A definition of the table by its index; one laid over it (`over.extra`, after each list's own) by itself.
    const counts = new Map<number | SymbolCandidate, number>();
    for (const part of parts) {
      const k = this.find(t, part);
      if (k >= 0) for (const i of this.list(t, k)) counts.set(i, (counts.get(i) ?? 0) + 1);
      for (const def of over?.extra(part) ?? []) counts.set(def, (counts.get(def) ?? 0) + 1);
    }
    const out: SymbolCandidate[] = [];
    for (const [key, n] of counts) {
      if (n < 2) continue;
      if (typeof key !== 'number') {
        if (n >= key.parts) out.push(key);
        continue;
      }
      if (n < this.word(this.symbolsAt + key * SYMBOL_WORDS + 7)) continue;
      const def = this.symbol(key);
      if (!over?.hidden.has(def.path)) out.push(def);
    }
    return out;
  }

  /**
   * The name table as a writer holds it in memory (keys in sorted order): a writer that changes
   * a few files patches this instead of reading every symbol row again.
   */
  byName(): Map<string, SymbolCandidate[]> {
    const t = this.names;
    const map = new Map<string, SymbolCandidate[]>();
    for (let k = 0; k < t.count; k++) {
      const list: SymbolCandidate[] = [];
      for (let r = this.word(t.start + k); r < this.word(t.start + k + 1); r++) list.push(this.symbol(this.word(t.refs + r)));
      map.set(this.string(this.word(t.keys + k)), list);
    }
    return map;
  }

  /** Every definition's name (suggestions). */
  allNames(): Set<string> {
    const out = new Set<string>();
    for (let i = 0; i < this.symbolCount; i++) out.add(this.string(this.word(this.symbolsAt + i * SYMBOL_WORDS)));
    return out;
  }

  private lookup(t: { keys: number; start: number; refs: number; count: number }, key: string): SymbolCandidate[] {
    const k = this.find(t, key);
    const out: SymbolCandidate[] = [];
    if (k >= 0) for (const i of this.list(t, k)) out.push(this.symbol(i));
    return out;
  }

  /** The symbol indices of a table's `k`th key, read as one run. */
  private list(t: { start: number; refs: number }, k: number): Uint32Array {
    const from = this.word(t.start + k);
    const to = this.word(t.start + k + 1);
    if (to < from) throw new Error('a list of the symbol table has a bad range');
    return this.reader.u32s((t.refs + from) * 4, to - from);
  }

  /** The position of `key` among a table's sorted keys, or -1. */
  private find(t: { keys: number; count: number }, key: string): number {
    let lo = 0;
    let hi = t.count - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const c = compare(this.string(this.word(t.keys + mid)), key);
      if (c === 0) return mid;
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  private symbol(i: number): SymbolCandidate {
    const cached = this.symbolCache.get(i);
    if (cached) return cached;
    const at = this.symbolsAt + i * SYMBOL_WORDS;
    const w = (k: number) => this.word(at + k);
    const container = w(6);
    const sym: SymbolCandidate = {
      name: this.string(w(0)),
      qualifiedName: this.string(w(1)),
      kind: this.string(w(2)) as SymbolKind,
      fileId: w(3),
      path: this.string(w(4)),
      startLine: w(5),
      parts: w(7),
      ...(container ? { container: this.string(container - 1) } : {}),
    };
    this.symbolCache.set(i, sym);
    return sym;
  }

  private string(i: number): string {
    let s = this.cache.get(i);
    if (s === undefined) {
      const from = this.word(this.stringOffsets + i);
      const to = this.word(this.stringOffsets + i + 1);
      if (to < from) throw new Error('a string of the symbol table has a bad range');
      s = this.decoder.decode(this.reader.bytes(this.stringData + from, to - from));
      this.cache.set(i, s);
    }
    return s;
  }
}
