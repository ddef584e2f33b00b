/**
 * Orama's documents store for the search index, as columns. Orama keeps one object per
 * document; the search index needs only a chunk's path, language and kind (its text fields live
 * in the text index), so this store keeps, per internal id, three indexes into one table of the
 * distinct values, and saves them as typed arrays. Loading the Go standard library's 30K chunks
 * took 30-50 ms of v8 deserialisation as objects (a tenth of a cold search); as columns, a few.
 * A document object is made only when Orama or a caller asks for one.
 */
import type { IDocumentsStore } from '@orama/orama';

/** What the store keeps of a chunk. */
export interface SlimDoc {
  id: string;
  path: string;
  language: string;
  kind: string;
}

/** The part of Orama's id store this reads (see privateParts in orama-index.ts, which checks its shape). */
interface SharedIds {
  idToInternalId: Map<string, number>;
  internalIdToId: string[];
}

type Column = number[] | Int32Array;

export interface ColumnDocs {
  sharedInternalDocumentStore: SharedIds;
  /** The distinct values of the three columns. */
  values: string[];
  valueIds: Map<string, number>;
  /** Per internal id, the value's index; -1 where no document is stored. */
  path: Column;
  language: Column;
  kind: Column;
  count: number;
  /**
   * The documents by internal id, as Orama's own store has them: its vector search reads
   * `data.docs.docs[internalId]` directly, past the component's methods. A view that makes each
   * object when it is read.
   */
  docs: Record<number, SlimDoc | undefined>;
}

/** The saved form, layout "columns-1": the live documents' internal ids, ascending, and their columns. */
interface SavedColumns {
  layout: 'columns-1';
  values: string[];
  ids: Int32Array;
  path: Int32Array;
  language: Int32Array;
  kind: Int32Array;
}

/** Orama's own saved form, as earlier snapshots hold it. */
interface SavedObjects {
  docs: Record<string, SlimDoc | undefined>;
  count: number;
}

/** Orama's documents-store component, over {@link ColumnDocs} (typed here, cast for Orama). */
interface ColumnStore {
  create(orama: unknown, shared: SharedIds): ColumnDocs;
  get(docs: ColumnDocs, id: string | number): SlimDoc | undefined;
  getMultiple(docs: ColumnDocs, ids: ReadonlyArray<string | number>): Array<SlimDoc | undefined>;
  getAll(docs: ColumnDocs): Record<number, SlimDoc>;
  store(docs: ColumnDocs, id: string, internalId: number, doc: SlimDoc): boolean;
  remove(docs: ColumnDocs, id: string, internalId?: number): boolean;
  count(docs: ColumnDocs): number;
  load(shared: SharedIds, raw: unknown): ColumnDocs;
  save(docs: ColumnDocs): SavedColumns;
}

export function columnDocumentsStore(): IDocumentsStore {
  const store: ColumnStore = {
    create: (_orama, shared) => emptyDocs(shared),
    get: (docs, id) => docAt(docs, docs.sharedInternalDocumentStore.idToInternalId.get(String(id))),
    getMultiple: (docs, ids) => ids.map((id) => docAt(docs, docs.sharedInternalDocumentStore.idToInternalId.get(String(id)))),
    getAll: (docs) => {
      const all: Record<number, SlimDoc> = {};
      for (let i = 0; i < docs.path.length; i++) {
        const d = docAt(docs, i);
        if (d) all[i] = d;
      }
      return all;
    },
    store: (docs, _id, internalId, d) => {
      if ((docs.path[internalId] ?? -1) >= 0) return false;
      writable(docs);
      const cols = docs as ColumnDocs & { path: number[]; language: number[]; kind: number[] };
      while (cols.path.length <= internalId) {
        cols.path.push(-1);
        cols.language.push(-1);
        cols.kind.push(-1);
      }
      cols.path[internalId] = valueId(docs, d.path);
      cols.language[internalId] = valueId(docs, d.language);
      cols.kind[internalId] = valueId(docs, d.kind);
      docs.count++;
      return true;
    },
    remove: (docs, id, internalId) => {
      const at = internalId ?? docs.sharedInternalDocumentStore.idToInternalId.get(String(id));
      if (at === undefined || (docs.path[at] ?? -1) < 0) return false;
      writable(docs);
      docs.path[at] = -1;
      docs.language[at] = -1;
      docs.kind[at] = -1;
      docs.count--;
      return true;
    },
    count: (docs) => docs.count,
    load: (shared, raw) => {
      const r = raw as SavedColumns | SavedObjects;
      const docs = emptyDocs(shared);
      if ('layout' in r && r.layout === 'columns-1') {
        docs.values = r.values;
        docs.valueIds = new Map(r.values.map((v, i) => [v, i]));
        const size = r.ids.length > 0 ? r.ids[r.ids.length - 1]! + 1 : 0;
        const cols = [new Int32Array(size).fill(-1), new Int32Array(size).fill(-1), new Int32Array(size).fill(-1)] as const;
        for (let i = 0; i < r.ids.length; i++) {
          const at = r.ids[i]!;
          cols[0][at] = r.path[i]!;
          cols[1][at] = r.language[i]!;
          cols[2][at] = r.kind[i]!;
        }
        [docs.path, docs.language, docs.kind] = cols;
        docs.count = r.ids.length;
        return docs;
      }
      // A snapshot of an earlier version: Orama's objects, one per document.
      for (const [internal, d] of Object.entries((r as SavedObjects).docs)) if (d) store.store(docs, d.id, Number(internal), d);
      return docs;
    },
    save: (docs) => {
      // Live documents only: Orama never reuses an internal id, so a churned index has many dead ones.
      const ids: number[] = [];
      for (let i = 0; i < docs.path.length; i++) if (docs.path[i]! >= 0) ids.push(i);
      const column = (c: Column) => Int32Array.from(ids, (i) => c[i]!);
      return { layout: 'columns-1', values: docs.values, ids: Int32Array.from(ids), path: column(docs.path), language: column(docs.language), kind: column(docs.kind) };
    },
  };
  return store as unknown as IDocumentsStore;
}

/** Whether Orama's `data.docs` is this store's (a check of the adapter's assumptions). */
export function isColumnDocs(docs: unknown): docs is ColumnDocs {
  const d = docs as Partial<ColumnDocs> | undefined;
  return typeof d === 'object' && d !== null && Array.isArray(d.values) && d.valueIds instanceof Map && d.path !== undefined && typeof d.count === 'number';
}

/** The language of the document at an internal id (a filter asks it of every scored chunk). */
export function languageAt(docs: ColumnDocs, internalId: number): string | undefined {
  const v = docs.language[internalId] ?? -1;
  return v >= 0 ? docs.values[v] : undefined;
}

function emptyDocs(shared: SharedIds): ColumnDocs {
  const docs: ColumnDocs = { sharedInternalDocumentStore: shared, values: [], valueIds: new Map(), path: [], language: [], kind: [], count: 0, docs: {} };
  docs.docs = new Proxy<Record<number, SlimDoc | undefined>>({}, { get: (_, key) => (typeof key === 'string' ? docAt(docs, Number(key)) : undefined) });
  return docs;
}

function docAt(docs: ColumnDocs, internalId: number | undefined): SlimDoc | undefined {
  if (internalId === undefined) return undefined;
  const p = docs.path[internalId] ?? -1;
  if (p < 0) return undefined;
  const id = docs.sharedInternalDocumentStore.internalIdToId[internalId - 1];
  if (id === undefined) return undefined;
  return { id, path: docs.values[p]!, language: docs.values[docs.language[internalId]!]!, kind: docs.values[docs.kind[internalId]!]! };
}

function valueId(docs: ColumnDocs, value: string): number {
  let v = docs.valueIds.get(value);
  if (v === undefined) {
    v = docs.values.push(value) - 1;
    docs.valueIds.set(value, v);
  }
  return v;
}

/** Columns loaded as typed arrays become arrays on the first change (they grow). */
function writable(docs: ColumnDocs): void {
  if (!Array.isArray(docs.path)) {
    docs.path = Array.from(docs.path);
    docs.language = Array.from(docs.language);
    docs.kind = Array.from(docs.kind);
  }
}
