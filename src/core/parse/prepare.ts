/**
 * One file made ready for the index, from its bytes: classified (text, binary, minified,
 * generated), hashed, parsed, and each chunk's search document tokenized and its embedding text
 * and hash computed. The parse workers run it, so that an index run's main thread only stores
 * the result: reading, hashing and tokenizing there had kept one core busy while the workers
 * waited.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { errorMessage } from '../errors';
import { classifyContent, type SkipReason } from '../content';
import type { ChunkDoc } from '../search/orama-index';
import { countTerms, tokenize, type CountedTerms } from '../search/tokenizer';
import type { Chunk, LanguageId, ParsedFile, SymbolDef } from '../types';
import type { CodeParser } from './parser';

export function sha1(data: string | Uint8Array): string {
  return createHash('sha1').update(data).digest('hex');
}

/** The text a chunk is embedded from: the chunk itself plus the context that makes it stand alone. */
export function enrichedText(path: string, language: LanguageId, imports: string[], c: Chunk): string {
  const lines = [`// ${path} (${language})`];
  if (imports.length > 0) lines.push(`// imports: ${imports.slice(0, 8).join('; ')}`);
  if (c.container) lines.push(`// in: ${c.container}`);
  if (c.decorators?.length) lines.push(...c.decorators);
  if (c.docstring) lines.push(c.docstring);
  lines.push(c.text);
  return lines.join('\n');
}

/**
 * The search document of a chunk. An index run and a rebuild from the stored chunks (an
 * unreadable snapshot, a compaction) both make it here, so that their scores are the same.
 */
export function chunkDoc(id: number, path: string, language: LanguageId, c: Pick<Chunk, 'kind' | 'signature' | 'container' | 'decorators' | 'docstring' | 'text'>, names: readonly string[]): ChunkDoc {
  return {
    id,
    path,
    language,
    kind: c.kind,
    name: names.join(' '),
    sig: [c.signature, c.container, ...(c.decorators ?? []), c.docstring].filter(Boolean).join('\n'),
    body: c.text,
  };
}

/** Names (plain and qualified) of the definitions that start inside a chunk. */
export function chunkNames(c: Pick<Chunk, 'symbol' | 'startLine' | 'endLine'>, symbols: ReadonlyArray<Pick<SymbolDef, 'name' | 'qualifiedName' | 'startLine'>>): string[] {
  const names = new Set<string>();
  if (c.symbol) names.add(c.symbol);
  for (const s of symbols) {
    if (s.startLine >= c.startLine && s.startLine <= c.endLine) {
      names.add(s.name);
      if (s.qualifiedName !== s.name) names.add(s.qualifiedName);
    }
  }
  return [...names];
}

/** {@link chunkNames} of each chunk of a parsed file. */
export function namesPerChunk(parsed: ParsedFile): string[][] {
  return parsed.chunks.map((c) => chunkNames(c, parsed.symbols));
}

export interface PrepareRequest {
  path: string;
  language: LanguageId;
  maxFileBytes: number;
  /** `[index] generated`: what becomes of a generated file. */
  generatedMode: 'index' | 'navigation' | 'skip';
  /** In a Go module's vendor directory: stored for navigation only. */
  vendored: boolean;
  /** The hash of the content the index holds, when an unchanged file may keep its parse. */
  knownHash?: string;
  /** Whether the chunks' embedding texts are wanted. */
  enriched: boolean;
}

/**
 * A chunk's search tokens per text field, counted here (a parse worker) so that the thread that
 * adds them to the index does one lookup per distinct term (see `CountedTerms`): each field's
 * distinct tokens joined by spaces (no token holds one; one string crosses between threads far
 * cheaper than an array of them), and `counts` the occurrences of each, the name's first, then
 * the signature's, then the body's.
 */
export interface ChunkTokens {
  name: string;
  sig: string;
  body: string;
  counts: Uint32Array;
}

export type PreparedFile =
  | { kind: 'skip'; reason: SkipReason; detail: string }
  /** The content hashes to {@link PrepareRequest.knownHash}: the stored parse stays. */
  | { kind: 'unchanged' }
  | {
      kind: 'parsed';
      hash: string;
      generated: boolean;
      /** Stored for navigation (definitions, references, imports) with no chunks. */
      navigationOnly: boolean;
      parsed: ParsedFile;
      /** Per chunk: the hash of its embedding text, its definitions' names, its tokens. */
      chunkHashes: string[];
      names: string[][];
      tokens: ChunkTokens[];
      /** Per chunk, the text it is embedded from (when asked for). */
      enriched?: string[];
    };

/**
 * A file's content as the preparer gets it: its bytes, or its path on the local disk for the
 * preparer (a parse worker) to read itself, off the indexing thread.
 */
export type FileSource = Uint8Array | { absPath: string };

/** Reads a file's bytes, or says why they cannot be read (the file went away meanwhile). */
export function readSource(source: FileSource): Uint8Array | { kind: 'skip'; reason: SkipReason; detail: string } {
  if (source instanceof Uint8Array) return source;
  try {
    return readFileSync(source.absPath);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return { kind: 'skip', reason: 'unreadable', detail: code === 'ENOENT' ? 'deleted during indexing' : String(code ?? errorMessage(e)) };
  }
}

/** Prepares one file with `parser` (see the module comment). */
export function prepareFile(parser: CodeParser, req: PrepareRequest, source: FileSource): PreparedFile {
  const bytes = readSource(source);
  if (!(bytes instanceof Uint8Array)) return bytes;
  const cls = classifyContent(req.path, bytes, { language: req.language, maxFileBytes: req.maxFileBytes });
  if (!cls.ok) return { kind: 'skip', reason: cls.reason, detail: cls.detail };
  if (cls.generated !== undefined && req.generatedMode === 'skip') return { kind: 'skip', reason: 'generated', detail: cls.generated };
  const generated = cls.generated !== undefined;
  const hash = sha1(bytes);
  if (req.knownHash === hash) return { kind: 'unchanged' };
  // A generated file is stored for navigation (definitions, references, imports: its uses
  // count and its names resolve) but, unless asked, gives search no chunk: as search results
  // and as the oracle's evidence it is noise, and no chunk means nothing to embed either.
  const navigationOnly = (generated && req.generatedMode === 'navigation') || req.vendored;
  let parsed = parser.parse(req.path, req.language, cls.text);
  if (navigationOnly) parsed = { ...parsed, chunks: [] };
  const enriched = parsed.chunks.map((c) => enrichedText(req.path, req.language, parsed.imports, c));
  const names = namesPerChunk(parsed);
  const tokens = parsed.chunks.map((c, i): ChunkTokens => {
    const doc = chunkDoc(0, req.path, req.language, c, names[i]!);
    const [name, sig, body] = [countTerms(tokenize(doc.name)), countTerms(tokenize(doc.sig)), countTerms(tokenize(doc.body))];
    const counts = new Uint32Array(name.terms.length + sig.terms.length + body.terms.length);
    counts.set(name.counts as number[], 0);
    counts.set(sig.counts as number[], name.terms.length);
    counts.set(body.counts as number[], name.terms.length + sig.terms.length);
    return { name: name.terms.join(' '), sig: sig.terms.join(' '), body: body.terms.join(' '), counts };
  });
  return {
    kind: 'parsed',
    hash,
    generated,
    navigationOnly,
    parsed,
    chunkHashes: enriched.map((t) => sha1(t)),
    names,
    tokens,
    ...(req.enriched ? { enriched } : {}),
  };
}

/** Tokens joined by {@link prepareFile}, split again. */
export function splitTokens(joined: string): string[] {
  return joined === '' ? [] : joined.split(' ');
}

/** A chunk's counted terms per field, as {@link prepareFile} sent them. */
export function chunkTerms(t: ChunkTokens): { name: CountedTerms; sig: CountedTerms; body: CountedTerms } {
  let at = 0;
  const field = (joined: string): CountedTerms => {
    const terms = splitTokens(joined);
    const counts = t.counts.subarray(at, at + terms.length);
    at += terms.length;
    let length = 0;
    for (let i = 0; i < counts.length; i++) length += counts[i]!;
    return { terms, counts, length };
  };
  const name = field(t.name);
  const sig = field(t.sig);
  return { name, sig, body: field(t.body) };
}
