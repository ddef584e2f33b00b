/**
 * ctags' tags as persisted under `.vlt/` (ctags-tags.jsonl): a first line naming the index
 * generation they were made for and, for every name, where its tags lie in the rest of the
 * file; then one JSON array of tags per name. A one-shot command that looks up one name reads
 * the first line and that name's line, not the whole file (34 MB of JSON on the Go standard
 * library: about 370 ms to parse, on every cold `vlt coderag def`).
 */
import * as fs from 'node:fs/promises';
import type { Tag } from '../core/intel/navigate';

export const TAGS_CACHE_FILE = 'ctags-tags.jsonl';
const VERSION = 2;

/** The first line: the generation, and each name's [offset, length] in bytes after it. */
export interface TagsIndex {
  generation: number;
  names: Record<string, [number, number]>;
  /** Where the tags' lines begin in the file. */
  bodyStart: number;
}

/** The cache file's bytes for tags grouped by name. */
export function encodeTags(generation: number, byName: ReadonlyMap<string, readonly Tag[]>): Buffer {
  const names: Record<string, [number, number]> = {};
  const lines: Buffer[] = [];
  let at = 0;
  for (const [name, tags] of byName) {
    const line = Buffer.from(`${JSON.stringify(tags)}\n`);
    names[name] = [at, line.length - 1];
    lines.push(line);
    at += line.length;
  }
  const head = Buffer.from(`${JSON.stringify({ version: VERSION, generation, names })}\n`);
  return Buffer.concat([head, ...lines]);
}

/** Reads the first line of the cache; undefined when there is none, or not of this layout. */
export async function readTagsIndex(file: string): Promise<TagsIndex | undefined> {
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(file, 'r');
    const chunks: Buffer[] = [];
    let position = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(1 << 20);
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
      if (bytesRead === 0) return undefined;
      const nl = chunk.subarray(0, bytesRead).indexOf(0x0a);
      if (nl >= 0) {
        chunks.push(chunk.subarray(0, nl));
        const head = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { version?: unknown; generation?: unknown; names?: unknown };
        if (head.version !== VERSION || typeof head.generation !== 'number' || !head.names || typeof head.names !== 'object') return undefined;
        return { generation: head.generation, names: head.names as Record<string, [number, number]>, bodyStart: position + nl + 1 };
      }
      chunks.push(chunk.subarray(0, bytesRead));
      position += bytesRead;
    }
  } catch {
    return undefined;
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/** The tags of one name, read from its line alone; undefined when the file does not hold them as the index says. */
export async function readTagsOf(file: string, index: TagsIndex, name: string): Promise<Tag[] | undefined> {
  const at = Object.hasOwn(index.names, name) ? index.names[name] : undefined;
  if (!at) return [];
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(file, 'r');
    const bytes = Buffer.allocUnsafe(at[1]);
    const { bytesRead } = await handle.read(bytes, 0, at[1], index.bodyStart + at[0]);
    if (bytesRead !== at[1]) return undefined;
    const tags = JSON.parse(bytes.toString('utf8')) as unknown;
    return Array.isArray(tags) ? (tags as Tag[]) : undefined;
  } catch {
    return undefined;
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/** Every name's tags, for a host that keeps them all (the whole file read once). */
export async function readAllTags(file: string): Promise<{ generation: number; byName: Map<string, Tag[]> } | undefined> {
  try {
    const text = await fs.readFile(file, 'utf8');
    const nl = text.indexOf('\n');
    const head = JSON.parse(text.slice(0, nl)) as { version?: unknown; generation?: unknown };
    if (head.version !== VERSION || typeof head.generation !== 'number') return undefined;
    const byName = new Map<string, Tag[]>();
    let start = nl + 1;
    while (start < text.length) {
      const end = text.indexOf('\n', start);
      const line = text.slice(start, end < 0 ? text.length : end);
      start = end < 0 ? text.length : end + 1;
      if (!line) continue;
      const tags = JSON.parse(line) as Tag[];
      const name = tags[0]?.name;
      if (name !== undefined) byName.set(name, tags);
    }
    return { generation: head.generation, byName };
  } catch {
    return undefined;
  }
}
