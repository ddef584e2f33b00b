/**
 * One file's definitions as one BLOB (`files.defs`), instead of one row each in a table with
 * two indexes: on the Linux kernel, 3.1 M definition rows and their indexes were 538 MiB of the
 * 884 MiB index.db that every process loads whole. Layout (integers are unsigned LEB128 varints):
 *
 *   u8      format version (1)
 *   varint  name count N, then N strings (varint byte length + UTF-8): the distinct definition
 *           names, first-use order (all the name postings need, read without the rest)
 *   varint  string count S, then S strings: kinds, qualified names, signatures, containers
 *   varint  definition count D, then D times:
 *           name index, kind index, qualified name index + 1 (0: the same as the name),
 *           signature index, container index + 1 (0: none),
 *           zigzag(start line - previous start line), end line - start line
 *
 * Order is the parser's, kept exactly. A definition's id is derived from its file and its
 * position ({@link defId}), so ids stay what they were until the file is stored again.
 */
import type { SymbolDef, SymbolKind } from '../types';
import { VltError } from '../errors';
import { ByteReader, ByteWriter } from './refs-codec';

export const DEFS_FORMAT_VERSION = 1;

/** Definitions per file that get distinct ids; ids are `fileId * DEF_ID_SCALE + position`. */
export const DEF_ID_SCALE = 2 ** 21;

export function defId(fileId: number, position: number): number {
  return fileId * DEF_ID_SCALE + position;
}

/** Scratch state reused across calls, as the references codec does. */
const scratch = { writer: new ByteWriter(1 << 14) };

function interner(): { list: string[]; index(s: string): number } {
  const list: string[] = [];
  const map = new Map<string, number>();
  return {
    list,
    index(s) {
      let i = map.get(s);
      if (i === undefined) {
        i = list.length;
        list.push(s);
        map.set(s, i);
      }
      return i;
    },
  };
}

function checkLine(value: number, what: string): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new VltError('INTERNAL', `cannot store a definition with ${what} ${String(value)}`);
  return value;
}

/** Encodes a file's definitions and also returns their distinct names, which the store indexes. */
export function encodeDefsWithNames(all: readonly SymbolDef[]): { bytes: Uint8Array; names: string[] } {
  // Past DEF_ID_SCALE definitions ids would collide; no parser gives one file that many.
  const defs = all.length > DEF_ID_SCALE ? all.slice(0, DEF_ID_SCALE) : all;
  const names = interner();
  const strings = interner();
  const codes: number[] = [];
  let prevStart = 0;
  for (const d of defs) {
    const start = checkLine(d.startLine, 'start line');
    const end = checkLine(d.endLine, 'end line');
    const delta = start - prevStart;
    prevStart = start;
    codes.push(
      names.index(d.name),
      strings.index(d.kind),
      d.qualifiedName === d.name ? 0 : strings.index(d.qualifiedName) + 1,
      strings.index(d.signature),
      d.container === undefined ? 0 : strings.index(d.container) + 1,
      delta >= 0 ? delta * 2 : -delta * 2 - 1,
      Math.max(0, end - start),
    );
  }
  const w = scratch.writer;
  w.pos = 0;
  w.varint(DEFS_FORMAT_VERSION);
  w.varint(names.list.length);
  for (const n of names.list) w.string(n);
  w.varint(strings.list.length);
  for (const s of strings.list) w.string(s);
  w.varint(defs.length);
  w.ensure(codes.length * 8);
  for (const c of codes) w.varintUnchecked(c);
  const bytes = w.bytes();
  if (w.buf.length > 1 << 22) scratch.writer = new ByteWriter(1 << 14);
  return { bytes, names: names.list };
}

function readNames(r: ByteReader): string[] {
  const version = r.u8();
  if (version !== DEFS_FORMAT_VERSION) throw r.corrupt(`unknown format version ${version}`);
  const count = r.varint();
  const names: string[] = [];
  for (let i = 0; i < count; i++) names.push(r.string());
  return names;
}

/** The distinct names a blob defines (what a file's name postings need). */
export function decodeDefNames(bytes: Uint8Array): string[] {
  return readNames(new ByteReader(bytes, 'definition list'));
}

/** A decoded definition with its position in the file's list (see {@link defId}). */
export interface PositionedDef extends SymbolDef {
  position: number;
}

/** Decodes a file's definitions in stored order; with `onlyName`, just the ones of that name. */
export function decodeDefs(bytes: Uint8Array, onlyName?: string): PositionedDef[] {
  const r = new ByteReader(bytes, 'definition list');
  const names = readNames(r);
  const wanted = onlyName === undefined ? -1 : names.indexOf(onlyName);
  if (onlyName !== undefined && wanted < 0) return [];
  const stringCount = r.varint();
  const strings: string[] = [];
  for (let i = 0; i < stringCount; i++) strings.push(r.string());
  const count = r.varint();
  const out: PositionedDef[] = [];
  let start = 0;
  for (let i = 0; i < count; i++) {
    const nameIdx = r.varint();
    const kindIdx = r.varint();
    const qn = r.varint();
    const sigIdx = r.varint();
    const containerIdx = r.varint();
    const z = r.varint();
    const span = r.varint();
    start += z % 2 === 0 ? z / 2 : -(z + 1) / 2;
    if (wanted >= 0 && nameIdx !== wanted) continue;
    const name = names[nameIdx];
    const kind = strings[kindIdx];
    const qualifiedName = qn === 0 ? name : strings[qn - 1];
    const signature = strings[sigIdx];
    const container = containerIdx === 0 ? undefined : strings[containerIdx - 1];
    if (name === undefined || kind === undefined || qualifiedName === undefined || signature === undefined || (containerIdx !== 0 && container === undefined)) {
      throw r.corrupt('a string index is out of range');
    }
    const def: PositionedDef = { name, kind: kind as SymbolKind, qualifiedName, signature, startLine: start, endLine: start + span, position: i };
    if (container !== undefined) def.container = container;
    out.push(def);
  }
  if (!r.done) throw r.corrupt('trailing bytes');
  return out;
}
