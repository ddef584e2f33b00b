/**
 * The binary forms the index stores instead of rows: one file's references as one BLOB, and
 * a posting (the sorted ids of the files that use a name) as delta varints.
 */
import { VltError } from '../errors';
import type { SymbolRef } from '../types';

/**
 * Compact binary form of one file's `SymbolRef[]`. A big repository has millions of
 * references, so they are stored as one BLOB per file instead of one row each. Layout (all
 * integers are unsigned LEB128 varints):
 *
 *   u8      format version (1)
 *   varint  name count N, then N times: varint byte length + UTF-8 bytes (first-use order)
 *   varint  reference count R, then R times:
 *           varint  nameIndex * 4 + kind        (kind: 0 call, 1 type, 2 reference, 3 inherit)
 *           varint  zigzag(line - previous line) (the first reference is relative to 0)
 *           varint  col
 *
 * Order is preserved exactly. Lines are delta-coded because references come roughly in line
 * order, which keeps most deltas in one byte; the zigzag step makes the rare backward jump
 * cheap too. A typical reference costs about 3 to 4 bytes.
 */
export const REFS_FORMAT_VERSION = 1;

const REF_KINDS: readonly SymbolRef['kind'][] = ['call', 'type', 'reference', 'inherit'];
const REF_KIND_CODE: Record<SymbolRef['kind'], number> = { call: 0, type: 1, reference: 2, inherit: 3 };

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: false });

/** A growable byte buffer with varint writes, for the refs and definitions codecs. */
export class ByteWriter {
  buf: Uint8Array;
  pos = 0;
  constructor(initial: number) {
    this.buf = new Uint8Array(Math.max(16, initial));
  }
  ensure(extra: number): void {
    if (this.pos + extra <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + extra) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }
  /** Writes a non-negative integer up to 2^53. */
  varint(n: number): void {
    this.ensure(8);
    this.varintUnchecked(n);
  }
  /** As {@link varint}, for callers that reserved the room; below 2^28 it stays bitwise. */
  varintUnchecked(n: number): void {
    const buf = this.buf;
    if (n < 0x10000000) {
      while (n >= 0x80) {
        buf[this.pos++] = (n & 0x7f) | 0x80;
        n >>>= 7;
      }
      buf[this.pos++] = n;
      return;
    }
    while (n >= 0x80) {
      buf[this.pos++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    buf[this.pos++] = n;
  }
  string(s: string): void {
    // UTF-8 needs at most 3 bytes per UTF-16 code unit, plus the length prefix.
    this.ensure(s.length * 3 + 8);
    const buf = this.buf;
    // Identifiers are nearly always ASCII, which is copied directly: a TextEncoder call per
    // short name costs more than the loop.
    if (s.length < 0x80) {
      let ascii = true;
      for (let i = 0; i < s.length; i++) {
        if (s.charCodeAt(i) >= 0x80) {
          ascii = false;
          break;
        }
      }
      if (ascii) {
        buf[this.pos++] = s.length;
        for (let i = 0; i < s.length; i++) buf[this.pos++] = s.charCodeAt(i);
        return;
      }
    }
    const start = this.pos;
    // The length prefix is written after encoding, so reserve room for its largest form.
    const lenBytes = varintSize(s.length * 3);
    const { written } = utf8Encoder.encodeInto(s, buf.subarray(start + lenBytes));
    const actual = varintSize(written);
    if (actual !== lenBytes) buf.copyWithin(start + actual, start + lenBytes, start + lenBytes + written);
    this.varintUnchecked(written);
    this.pos = start + actual + written;
  }
  bytes(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }
}

function varintSize(n: number): number {
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 0x80);
    size++;
  }
  return size;
}

/** Reads what {@link ByteWriter} writes; any overrun or bad value means the blob is corrupt. */
export class ByteReader {
  pos = 0;
  constructor(
    private readonly buf: Uint8Array,
    /** Names what the blob holds in the INDEX_CORRUPT message. */
    private readonly what = 'reference list',
  ) {}
  get done(): boolean {
    return this.pos >= this.buf.length;
  }
  u8(): number {
    const b = this.buf[this.pos++];
    if (b === undefined) throw this.corrupt('unexpected end');
    return b;
  }
  varint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      const b = this.buf[this.pos++];
      if (b === undefined) throw this.corrupt('unexpected end');
      result += (b & 0x7f) * scale;
      if (b < 0x80) return result;
      scale *= 0x80;
    }
    throw this.corrupt('varint too long');
  }
  string(): string {
    const len = this.varint();
    const end = this.pos + len;
    if (end > this.buf.length) throw this.corrupt('string overruns the blob');
    const s = utf8Decoder.decode(this.buf.subarray(this.pos, end));
    this.pos = end;
    return s;
  }
  corrupt(why: string): VltError {
    return new VltError('INDEX_CORRUPT', `a stored ${this.what} is malformed (${why}); rebuild the index with \`vlt coderag init\``);
  }
}

function corruptRefs(why: string): VltError {
  return new ByteReader(new Uint8Array(0)).corrupt(why);
}

function checkRefNumber(value: number, field: string): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new VltError('INTERNAL', `cannot store a reference with ${field} ${String(value)}`);
  }
  return value;
}

/** Scratch state reused across calls: encoding runs once per file, millions of refs in all. */
const refScratch = { writer: new ByteWriter(1 << 16), nameIndex: new Map<string, number>(), codes: new Uint32Array(1024) };

/** Encodes references and also returns the distinct names, which the store indexes. */
export function encodeRefsWithNames(refs: readonly SymbolRef[]): { bytes: Uint8Array; names: string[] } {
  const names: string[] = [];
  const nameIndex = refScratch.nameIndex;
  nameIndex.clear();
  if (refScratch.codes.length < refs.length) refScratch.codes = new Uint32Array(refs.length * 2);
  const codes = refScratch.codes;
  for (let i = 0; i < refs.length; i++) {
    const ref = refs[i]!;
    let idx = nameIndex.get(ref.name);
    if (idx === undefined) {
      idx = names.length;
      names.push(ref.name);
      nameIndex.set(ref.name, idx);
    }
    const kind = REF_KIND_CODE[ref.kind];
    if (kind === undefined) throw new VltError('INTERNAL', `unknown reference kind ${String(ref.kind)}`);
    if (idx >= 0x3fffffff) throw new VltError('INTERNAL', 'too many distinct reference names in one file');
    codes[i] = idx * 4 + kind;
  }
  nameIndex.clear();
  const w = refScratch.writer;
  w.pos = 0;
  w.varint(REFS_FORMAT_VERSION);
  w.varint(names.length);
  for (const name of names) w.string(name);
  w.varint(refs.length);
  // Three varints of at most 8 bytes each per reference: reserve once, not per write.
  w.ensure(refs.length * 24);
  let prevLine = 0;
  for (let i = 0; i < refs.length; i++) {
    const ref = refs[i]!;
    const line = checkRefNumber(ref.line, 'line');
    const col = checkRefNumber(ref.col, 'column');
    const delta = line - prevLine;
    prevLine = line;
    w.varintUnchecked(codes[i]!);
    w.varintUnchecked(delta >= 0 ? delta * 2 : -delta * 2 - 1);
    w.varintUnchecked(col);
  }
  const bytes = w.bytes();
  // Do not let one huge file pin a huge scratch buffer for the rest of the process.
  if (w.buf.length > 1 << 22) refScratch.writer = new ByteWriter(1 << 16);
  return { bytes, names };
}

export function encodeRefs(refs: readonly SymbolRef[]): Uint8Array {
  return encodeRefsWithNames(refs).bytes;
}

function readRefNames(r: ByteReader): string[] {
  const version = r.u8();
  if (version !== REFS_FORMAT_VERSION) throw corruptRefs(`unknown format version ${version}`);
  const count = r.varint();
  const names: string[] = [];
  for (let i = 0; i < count; i++) names.push(r.string());
  return names;
}

/** Decodes only the name table, which is all that deleting a file's name index rows needs. */
export function decodeRefNames(bytes: Uint8Array): string[] {
  return readRefNames(new ByteReader(bytes));
}

/** Decodes a reference list; with `onlyName`, returns just the uses of that name. */
export function decodeRefs(bytes: Uint8Array, onlyName?: string): SymbolRef[] {
  const r = new ByteReader(bytes);
  const names = readRefNames(r);
  const wanted = onlyName === undefined ? -1 : names.indexOf(onlyName);
  if (onlyName !== undefined && wanted < 0) return [];
  const count = r.varint();
  const refs: SymbolRef[] = [];
  let line = 0;
  for (let i = 0; i < count; i++) {
    const code = r.varint();
    const z = r.varint();
    const col = r.varint();
    line += z % 2 === 0 ? z / 2 : -(z + 1) / 2;
    const nameIdx = Math.floor(code / 4);
    if (wanted >= 0 && nameIdx !== wanted) continue;
    const name = names[nameIdx];
    const kind = REF_KINDS[code % 4];
    if (name === undefined || kind === undefined) throw corruptRefs('bad name or kind');
    refs.push({ name, line, col, kind });
  }
  if (!r.done) throw corruptRefs('trailing bytes');
  return refs;
}

/** Encodes a sorted list of distinct file ids as delta varints. */
export function encodePosting(sortedIds: readonly number[]): Uint8Array {
  const w = new ByteWriter(sortedIds.length * 2);
  let prev = 0;
  for (const id of sortedIds) {
    w.varint(id - prev);
    prev = id;
  }
  return w.bytes();
}

export function decodePosting(bytes: Uint8Array): number[] {
  const r = new ByteReader(bytes);
  const ids: number[] = [];
  let prev = 0;
  while (!r.done) {
    prev += r.varint();
    ids.push(prev);
  }
  return ids;
}
