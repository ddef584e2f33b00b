/**
 * Orama's map from a document's id to its internal id, filled only when it must be. Loading a
 * snapshot filled it at once: on the Linux kernel, 717,000 map entries, about 0.3 s and much of
 * the garbage collection of a process that answers one search. Chunk ids are handed out in
 * increasing order and Orama numbers documents in the order they are inserted, so the list of
 * ids by internal id is nearly always sorted: then a lookup is a binary search in that list,
 * and the map is filled only when something changes it. An unsorted list fills it at once.
 */
import type { AnyOrama } from '@orama/orama';

/** Whether decimal id `a` sorts before `b` (no leading zeros: a shorter one is smaller). */
function before(a: string, b: string): boolean {
  return a.length !== b.length ? a.length < b.length : a < b;
}

export class LazyIdMap extends Map<string, number> {
  private filled = false;

  /** A map over `ids` (internal id i + 1 is `ids[i]`); filled now unless they are sorted. */
  constructor(private readonly ids: readonly string[]) {
    super();
    for (let i = 1; i < ids.length; i++) {
      if (!before(ids[i - 1]!, ids[i]!)) {
        this.fill();
        break;
      }
    }
  }

  private fill(): void {
    if (this.filled) return;
    this.filled = true;
    for (let i = 0; i < this.ids.length; i++) super.set(this.ids[i]!, i + 1);
  }

  /** The internal id of `id` by binary search in the sorted list. */
  private search(id: string): number | undefined {
    let lo = 0;
    let hi = this.ids.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const at = this.ids[mid]!;
      if (at === id) return mid + 1;
      if (before(at, id)) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }

  override get(id: string): number | undefined {
    return this.filled ? super.get(id) : this.search(id);
  }

  override has(id: string): boolean {
    return this.filled ? super.has(id) : this.search(id) !== undefined;
  }

  override get size(): number {
    return this.filled ? super.size : this.ids.length;
  }

  override set(id: string, internal: number): this {
    this.fill();
    return super.set(id, internal);
  }

  override delete(id: string): boolean {
    this.fill();
    return super.delete(id);
  }

  override clear(): void {
    this.filled = true;
    super.clear();
  }

  override forEach(fn: (value: number, key: string, map: Map<string, number>) => void, thisArg?: unknown): void {
    this.fill();
    super.forEach(fn, thisArg);
  }

  override entries(): MapIterator<[string, number]> {
    this.fill();
    return super.entries();
  }

  override keys(): MapIterator<string> {
    this.fill();
    return super.keys();
  }

  override values(): MapIterator<number> {
    this.fill();
    return super.values();
  }

  override [Symbol.iterator](): MapIterator<[string, number]> {
    return this.entries();
  }
}

/**
 * Makes `db` load its id store lazily: the list of ids is taken as it is, the map is a
 * {@link LazyIdMap} over it. Call before Orama's `load`.
 */
export function loadIdsLazily(db: AnyOrama): void {
  const store = (db as unknown as { internalDocumentIDStore?: { load?: unknown; idToInternalId?: unknown; internalIdToId?: unknown } }).internalDocumentIDStore;
  if (!store || typeof store.load !== 'function') throw new Error("Orama's internals are not what this version of vlt expects (it is built for @orama/orama 3.1.18): internalDocumentIDStore.load");
  store.load = (_orama: unknown, raw: { internalIdToId: string[] }) => {
    store.internalIdToId = raw.internalIdToId;
    store.idToInternalId = new LazyIdMap(raw.internalIdToId);
  };
}
