/**
 * The hybrid search index: an Orama database whose full-text component is the compact
 * {@link CodeTextIndex} and whose documents store keeps only slim metadata. Chunk text lives
 * in the store's packs; Orama holds the documents' ids, the language and kind filters, and
 * (when embeddings are on) the vectors; the text index holds the postings, in segments.
 */
import {
  create,
  insert,
  remove,
  searchVector,
  save,
  load,
  count,
  type AnyOrama,
  type IIndex,
  type Tokenizer,
} from '@orama/orama';
import { index as oramaIndex } from '@orama/orama/components';
import { columnDocumentsStore, isColumnDocs, languageAt, type ColumnDocs } from './orama-docs';
import { serialize as v8serialize, deserialize as v8deserialize } from 'node:v8';
import { loadIdsLazily } from './orama-ids';
import { memorySource, readRange, type ByteSource } from '../store/byte-source';
import { CodeTextIndex, TEXT_FIELDS, type FieldTerms, type TextField, type TextManifest } from './text-index';
import { MemorySegmentDir, type SegmentDir } from './text-segment';
import { tokenize, tokenizePath, tokenizeQuery } from './tokenizer';

/** What the search index knows about one chunk. `id` is the chunk's row id in the store. */
export interface ChunkDoc {
  id: number;
  path: string;
  language: string;
  kind: string;
  /** Symbol names defined in the chunk, qualified and plain. */
  name: string;
  /** Signature, enclosing container header, decorators and docstring. */
  sig: string;
  body: string;
}

/** Field boosts: a symbol's name says what a chunk is far better than any word of its body. */
export const DEFAULT_BOOST: Record<TextField, number> = { name: 4, path: 1.5, sig: 2, body: 1 };

/** The slim form kept in Orama's documents store. */
interface StoredDoc {
  id: string;
  path: string;
  language: string;
  kind: string;
}

type CodeIndexStore = ReturnType<typeof oramaIndex.create> & {
  text: CodeTextIndex;
  /** The tokens of the document being inserted, when its caller has them (see SearchIndex.add). */
  tokens?: Partial<Record<TextField, FieldTerms>>;
};

/** Above this many distinct terms a query is treated as a pasted document. */
export const LONG_QUERY_TERMS = 12;

const TEXT_FIELD_SET = new Set<string>(TEXT_FIELDS);
/** "VSS2": a search snapshot of version 2, the text index inside (read as one segment); version 1 was one v8 document. */
const SNAPSHOT_MAGIC_V2 = 0x32535356;
/** "VSS3": Orama's part and the text index's manifest (see {@link SearchIndex.serialize}). */
const SNAPSHOT_MAGIC = 0x33535356;

/** Where the text index keeps its segments, and how large its in-memory tail may grow. */
export interface TextStorage {
  dir: SegmentDir;
  tailBytes?: number;
}

function fieldTokens(prop: string, value: string): string[] {
  return prop === 'path' ? tokenizePath(value) : tokenize(value);
}

function codeIndexComponent(storage: TextStorage): IIndex<CodeIndexStore> {
  const base = oramaIndex.createIndex();
  return {
    ...(base as unknown as IIndex<CodeIndexStore>),
    create(orama, shared, schema) {
      const store = base.create(orama, shared, schema) as CodeIndexStore;
      store.text = new CodeTextIndex(storage.dir, storage.tailBytes);
      return store;
    },
    insert(impl, store, prop, id, internalId, value, schemaType, language, tokenizer, docsCount, options) {
      if (TEXT_FIELD_SET.has(prop)) {
        store.text.add(internalId, { [prop]: store.tokens?.[prop as TextField] ?? fieldTokens(prop, String(value)) });
        return;
      }
      base.insert(impl as never, store, prop, id, internalId, value, schemaType, language, tokenizer, docsCount, options);
    },
    remove(impl, store, prop, id, internalId, value, schemaType, language, tokenizer, docsCount) {
      // The slim documents store keeps `path` but not the other text fields, so Orama only
      // calls us for `path` among them: that call removes the whole document's postings, and
      // its vector (Orama never calls us for `embedding` either: a dead chunk's vector would
      // stay among those vector search scans and the count of chunks with a vector).
      if (prop === 'path') {
        store.text.remove(internalId);
        (store.vectorIndexes as Record<string, { node?: { remove?: (id: number) => void } } | undefined>).embedding?.node?.remove?.(internalId);
      }
      if (TEXT_FIELD_SET.has(prop)) return true;
      return base.remove(impl as never, store, prop, id, internalId, value, schemaType, language, tokenizer, docsCount);
    },
    search(store, term, _tokenizer, _language, props, _exact, _tolerance, boost, _relevance, _docsCount, whereIds) {
      const s = store as CodeIndexStore;
      const fieldBoost: Partial<Record<TextField, number>> = {};
      for (const f of TEXT_FIELDS) fieldBoost[f] = props.includes(f) ? ((boost as Record<string, number>)[f] ?? 1) : 0;
      const terms = tokenizeQuery(term);
      const hits = s.text.search(terms, {
        boost: fieldBoost,
        accept: whereIds ? (slot: number) => whereIds.has(slot) : undefined,
        // A pasted bug report has hundreds of words; the ones found in most chunks add
        // nothing to the ranking but cost a full posting scan each.
        maxDocFrequency: terms.length > LONG_QUERY_TERMS ? 0.25 : 1,
      });
      return hits.map((h): [number, number] => [h.slot, h.score]);
    },
    save(store) {
      // Vectors are not part of the snapshot: they are reloaded from the embedding cache. The
      // text index is not either: it is in its segments, which SearchIndex.serialize names.
      const vectorless = { ...store, vectorIndexes: emptyVectorIndexes(store) };
      return { base: base.save(vectorless as never) } as never;
    },
    load(shared, raw) {
      const r = raw as { base: unknown };
      const store = base.load(shared, r.base) as CodeIndexStore;
      // SearchIndex.open sets the text index after the load.
      store.text = new CodeTextIndex(storage.dir, storage.tailBytes);
      return store;
    },
  };
}

function emptyVectorIndexes(store: CodeIndexStore): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [prop, v] of Object.entries(store.vectorIndexes as Record<string, { node: { size: number } }>)) {
    out[prop] = { ...v, node: { toJSON: () => ({ size: v.node.size, vectors: [] }) } };
  }
  return out;
}


/** Orama calls the tokenizer only through our index component, which tokenizes itself. */
const passThroughTokenizer: Tokenizer = {
  language: 'english',
  normalizationCache: new Map(),
  tokenize: (raw: string) => tokenize(raw),
};

function createOrama(dimensions: number | undefined, storage: TextStorage): AnyOrama {
  const schema: Record<string, string> = {
    path: 'string',
    name: 'string',
    sig: 'string',
    body: 'string',
    language: 'enum',
    kind: 'enum',
  };
  if (dimensions) schema.embedding = `vector[${dimensions}]`;
  return create({
    schema: schema as never,
    sort: { enabled: false },
    components: {
      tokenizer: passThroughTokenizer,
      index: codeIndexComponent(storage) as never,
      documentsStore: columnDocumentsStore() as never,
    },
  }) as unknown as AnyOrama;
}

/**
 * Orama's insert and remove are typed as possibly async; with our synchronous components
 * they never are. Fail loudly if an Orama upgrade changes that, rather than dropping a promise.
 */
function assertSync(result: unknown): void {
  if (result instanceof Promise) throw new Error('Orama returned a promise from a synchronous operation');
}

/**
 * Every part of Orama's private state this module reads, in one place (Orama is pinned to
 * 3.1.18 in package.json for this reason). `privateParts` checks the shapes on each new or
 * loaded index and fails with a clear error if an Orama upgrade changed them; the test
 * "Orama internals" in test/core/text-index.test.ts runs it.
 */
interface OramaPrivate {
  /** Our index component's store (`db.data.index`). */
  store: CodeIndexStore;
  /** External id ↔ internal id (`sharedInternalDocumentStore`); internal ids start at 1 and are never reused. */
  idToInternalId: Map<string, number>;
  internalIdToId: string[];
  /** The vector index of the `embedding` field, when the schema has one. */
  vectors: { add(internalId: number, v: Float32Array): void; vectors: Map<number, unknown> } | undefined;
  /** The documents store and its data (`db.documentsStore`, `db.data.docs`: our columns). */
  getDoc(id: string): unknown;
  docs: ColumnDocs;
}

function privateParts(db: AnyOrama): OramaPrivate {
  const data = db.data as unknown as { index?: CodeIndexStore; docs?: unknown };
  const store = data.index;
  const shared = (store as { sharedInternalDocumentStore?: { idToInternalId?: unknown; internalIdToId?: unknown } } | undefined)?.sharedInternalDocumentStore;
  const vectorIndexes = (store as { vectorIndexes?: Record<string, { node?: { add?: unknown; vectors?: unknown } }> } | undefined)?.vectorIndexes;
  const node = vectorIndexes?.embedding?.node;
  const problems = [
    !store || !(store.text instanceof CodeTextIndex) ? 'db.data.index.text (our text index)' : '',
    !(shared?.idToInternalId instanceof Map) ? 'sharedInternalDocumentStore.idToInternalId (a Map)' : '',
    !Array.isArray(shared?.internalIdToId) ? 'sharedInternalDocumentStore.internalIdToId (an array)' : '',
    typeof vectorIndexes !== 'object' ? 'vectorIndexes' : '',
    node && (typeof node.add !== 'function' || !(node.vectors instanceof Map)) ? 'vectorIndexes.embedding.node (add, vectors)' : '',
    typeof db.documentsStore?.get !== 'function' || !isColumnDocs(data.docs) ? 'documentsStore.get / data.docs (our columns)' : '',
  ].filter(Boolean);
  if (problems.length) throw new Error(`Orama's internals are not what this version of vlt expects (it is built for @orama/orama 3.1.18): ${problems.join(', ')}`);
  return {
    store: store!,
    idToInternalId: shared!.idToInternalId as Map<string, number>,
    internalIdToId: shared!.internalIdToId as string[],
    vectors: node as OramaPrivate['vectors'],
    getDoc: (id) => db.documentsStore.get(data.docs as never, id),
    docs: data.docs as ColumnDocs,
  };
}

export interface ScoredChunk {
  id: number;
  score: number;
}

export class SearchIndex {
  private readonly parts: OramaPrivate;

  private constructor(
    private db: AnyOrama,
    readonly dimensions: number | undefined,
  ) {
    this.parts = privateParts(db);
  }

  /** A new, empty index; its text segments go to `storage` (memory when not given). */
  static create(dimensions?: number, storage: TextStorage = { dir: new MemorySegmentDir() }): SearchIndex {
    return new SearchIndex(createOrama(dimensions, storage), dimensions);
  }

  get size(): number {
    return count(this.db) as number;
  }

  private get store(): CodeIndexStore {
    return this.parts.store;
  }

  has(id: number): boolean {
    return this.parts.idToInternalId.has(String(id)) && this.getDoc(id) !== undefined;
  }

  /** Path, language and kind of an indexed chunk. */
  docMeta(id: number): { path: string; language: string; kind: string } | undefined {
    return this.getDoc(id);
  }

  private getDoc(id: number): StoredDoc | undefined {
    return this.parts.getDoc(String(id)) as StoredDoc | undefined;
  }

  /**
   * Adds a chunk. `tokens`, when given, are its text fields as the tokenizer makes them (an
   * index run tokenizes in its parse workers); they must be what tokenizing `doc` gives.
   */
  add(doc: ChunkDoc, embedding?: Float32Array, tokens?: Record<TextField, FieldTerms>): void {
    const d: Record<string, unknown> = { ...doc, id: String(doc.id) };
    // Orama validates vectors as plain arrays and stores them as Float32Array itself.
    if (embedding && this.dimensions && embedding.length === this.dimensions) d.embedding = Array.from(embedding);
    const store = this.store;
    store.tokens = tokens;
    try {
      assertSync(insert(this.db, d as never));
    } finally {
      store.tokens = undefined;
    }
    store.text.maybeSpill();
  }

  remove(id: number): void {
    assertSync(remove(this.db, String(id)));
  }

  /**
   * Full-text (BM25F) search. Returns chunk ids best first. `accept` filters chunks while they
   * are scored, before the limit (a path scope must not come back empty because the best
   * `limit` chunks of the whole index lie elsewhere).
   */
  searchText(query: string, opts: { limit: number; language?: string; boost?: Partial<Record<TextField, number>>; accept?: (id: number) => boolean; expansions?: ReadonlyMap<string, number> }): ScoredChunk[] {
    const own = tokenizeQuery(query);
    const terms = opts.expansions ? [...own, ...[...opts.expansions.keys()].filter((t) => !own.includes(t))] : own;
    if (terms.length === 0) return [];
    // Straight to the text index, not through Orama's search: Orama would re-sort every hit and
    // fetch documents; the ranking is the same (score, then slot, best first).
    const ids = this.parts.internalIdToId;
    const { accept, language } = opts;
    const filtered = accept !== undefined || language !== undefined;
    return this.store.text
      .search(terms, {
        boost: { ...DEFAULT_BOOST, ...opts.boost },
        ...(filtered
          ? {
              accept: (slot: number) => {
                const id = ids[slot - 1];
                if (id === undefined) return false;
                return (!language || languageAt(this.parts.docs, slot) === language) && (!accept || accept(Number(id)));
              },
            }
          : {}),
        limit: opts.limit,
        maxDocFrequency: own.length > LONG_QUERY_TERMS ? 0.25 : 1,
        ...(opts.expansions ? { weights: opts.expansions } : {}),
      })
      .map((h) => ({ id: Number(ids[h.slot - 1]), score: h.score }));
  }

  /** Whether any chunk's text holds `term` (an index term: lower case, plurals folded). */
  hasTerm(term: string): boolean {
    return this.store.text.hasTerm(term);
  }

  /** Nearest chunks to a query vector (cosine similarity). */
  searchVector(vector: Float32Array, opts: { limit: number; language?: string; minSimilarity?: number }): ScoredChunk[] {
    if (!this.dimensions) return [];
    const res = searchVector(this.db, {
      mode: 'vector',
      vector: { value: vector, property: 'embedding' },
      similarity: opts.minSimilarity ?? 0.2,
      limit: opts.limit,
      ...(opts.language ? { where: { language: { eq: opts.language } } } : {}),
    } as never) as { hits: Array<{ id: string; score: number }> };
    return res.hits.map((h) => ({ id: Number(h.id), score: h.score }));
  }

  /** Fills the vector of an already indexed chunk (used after loading a snapshot). */
  setVector(id: number, vector: Float32Array): void {
    const internal = this.parts.idToInternalId.get(String(id));
    if (internal !== undefined) this.parts.vectors?.add(internal, vector);
  }

  /** Whether the chunk has a vector. */
  hasVector(id: number): boolean {
    const internal = this.parts.idToInternalId.get(String(id));
    return internal !== undefined && (this.parts.vectors?.vectors.has(internal) ?? false);
  }

  vectorCount(): number {
    return this.parts.vectors?.vectors.size ?? 0;
  }

  /**
   * Merges the text index's segments where its policy says (see {@link CodeTextIndex.merge}),
   * letting other work run meanwhile. A commit calls it before {@link serialize}.
   */
  mergeText(): Promise<number> {
    this.store.text.flush();
    return this.store.text.merge();
  }

  /** The text segment files the index reads (what a commit must keep). */
  segmentNames(): string[] {
    return this.store.text.segmentNames();
  }

  /**
   * A binary snapshot for persistence (vectors excluded): "VSS3", the byte length of the rest,
   * then one v8 document: Orama's part (documents, ids and the flat indexes) and the text
   * index's manifest. The text index's tail is written as a segment first; the segments
   * themselves are files of their own, which the snapshot names.
   */
  serialize(): Uint8Array {
    const text = this.store.text;
    text.flush();
    const doc = v8serialize({ v: 3, dimensions: this.dimensions ?? 0, raw: save(this.db) as unknown, text: text.manifest() });
    const out = new Uint8Array(8 + doc.byteLength);
    const view = new DataView(out.buffer);
    view.setUint32(0, SNAPSHOT_MAGIC, true);
    view.setUint32(4, doc.byteLength, true);
    out.set(doc, 8);
    return out;
  }

  static deserialize(bytes: Uint8Array, storage: TextStorage): SearchIndex {
    return SearchIndex.open(memorySource(bytes), storage);
  }

  /**
   * Opens a snapshot: Orama's part and the heads of the text segments now, posting lists as
   * queries ask for them. A snapshot of version 2 held the text index inside: it is read by
   * range as the index's one segment, so `source` then stays open until {@link close}.
   */
  static open(source: ByteSource, storage: TextStorage): SearchIndex {
    let keepSource = false;
    try {
      const head = readRange(source, 0, Math.min(8, source.byteLength));
      const view = new DataView(head.buffer);
      const magic = head.byteLength < 8 ? 0 : view.getUint32(0, true);
      if (magic !== SNAPSHOT_MAGIC && magic !== SNAPSHOT_MAGIC_V2) throw new Error('search snapshot of an earlier version');
      const docBytes = view.getUint32(4, true);
      if (8 + docBytes > source.byteLength) throw new Error('search snapshot is truncated');
      const snap = v8deserialize(readRange(source, 8, docBytes)) as { v: number; dimensions: number; raw: unknown; text?: TextManifest };
      if (snap.v !== (magic === SNAPSHOT_MAGIC ? 3 : 2)) throw new Error(`search snapshot version ${snap.v} is not supported`);
      const idx = SearchIndex.fromOrama(snap.dimensions, snap.raw, storage);
      if (magic === SNAPSHOT_MAGIC) {
        if (!snap.text) throw new Error('search snapshot has no text index');
        idx.store.text = CodeTextIndex.open(snap.text, storage.dir, storage.tailBytes);
      } else {
        idx.store.text = CodeTextIndex.openSnapshot(source, 8 + Math.ceil(docBytes / 4) * 4, storage.dir, storage.tailBytes);
        keepSource = true;
      }
      return idx;
    } finally {
      if (!keepSource) source.close();
    }
  }

  private static fromOrama(dimensions: number, raw: unknown, storage: TextStorage): SearchIndex {
    const dims = dimensions || undefined;
    const db = createOrama(dims, storage);
    loadIdsLazily(db);
    load(db, raw as never);
    return new SearchIndex(db, dims);
  }

  /** Releases the snapshot file of an index that is done with (see {@link CodeTextIndex.close}). */
  close(): void {
    this.store.text.close();
  }

  /** Chunks whose name or body contains `term` (an index term, as the tokenizer makes them). */
  docFrequency(term: string): number {
    const t = this.store.text;
    return Math.max(t.docFrequency(term, 'body'), t.docFrequency(term, 'name'));
  }

  /** Chunks that hold `term` in a symbol name they define or in their path: the code's own names. */
  nameFrequency(term: string): number {
    const t = this.store.text;
    return Math.max(t.docFrequency(term, 'name'), t.docFrequency(term, 'path'));
  }

  /**
   * For each indexed chunk holding a term of at least one group, its path and the bit mask of
   * the groups it holds (see {@link CodeTextIndex.groupMasks}).
   */
  groupMasks(groups: readonly (readonly string[])[]): Array<{ id: number; path: string; mask: number }> {
    const ids = this.parts.internalIdToId;
    const out: Array<{ id: number; path: string; mask: number }> = [];
    for (const [slot, mask] of this.store.text.groupMasks(groups)) {
      const id = ids[slot - 1];
      const path = id === undefined ? undefined : this.getDoc(Number(id))?.path;
      if (path !== undefined) out.push({ id: Number(id), path, mask });
    }
    return out;
  }

  /** Document ids Orama has handed out (it never reuses one) against the chunks it holds now. */
  idSlack(): { assigned: number; live: number } {
    return { assigned: this.parts.internalIdToId.length, live: this.size };
  }

  textStats(): { slots: number; deleted: number; vocabulary: number; segments: number } {
    const t = this.store.text;
    return { slots: t.slotCount, deleted: t.deletedCount, vocabulary: t.vocabularySize, segments: t.segmentCount };
  }
}
