/**
 * The no-context decision's co-occurrence measure (src/core/oracle/relevance.ts) on a small
 * project: a question whose words occur together in one function has context; the same words
 * scattered over unrelated files do not, although the union of the evidence holds them all.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../../src/core/engine';
import { analyzeQuestion } from '../../../src/core/oracle/analyze';
import { Oracle } from '../../../src/core/oracle/oracle';
import { assessRelevance, decideContext, inflectionKey, inflections, MAX_NAMED_WORDS, MIN_COOCCURRENCE, MIN_COOCCURRENCE_FOUND, MIN_NAMED, subjectWords } from '../../../src/core/oracle/relevance';
import type { RankedEvidence } from '../../../src/core/oracle/types';
import { abbreviationsOf } from '../../../src/core/search/abbreviations';
import { derivations } from '../../../src/core/search/stem';
import { properNames } from '../../../src/core/oracle/proper-names';
import { nodeWorkspaceFs } from '../../../src/node/fs';

let dir: string;
let engine: Engine;

const files: Record<string, string> = {
  // The words of the on-topic question, together in one function.
  'src/retry/backoff.ts': 'export function retryWithBackoff(attempts: number) {\n  // Each failed attempt waits twice as long before the request is retried.\n  return attempts * 2;\n}\n',
  // The words of the off-topic question, one per file, next to unrelated code.
  'src/colors/palette.ts': 'export const palette = ["chocolate", "teal"];\nexport function shade(c: string) { return c.toUpperCase(); }\n',
  'src/net/chip.ts': 'export function chipId(serial: string) { return serial.slice(0, 4); }\n',
  'src/http/cookies.ts': 'export function parseCookies(header: string) { return header.split(";"); }\n',
  'src/text/recipe.ts': 'export function recipeTitle(s: string) { return s.trim(); }\n',
  'src/util/misc.ts': 'export function identity<T>(x: T): T { return x; }\nexport function give() {}\n',
  // Words only data uses: a table of place names, never a name the code gives anything.
  'src/data/places.ts': 'export const PLACES = [\n  "Canberra is the capital of Australia",\n  "Ottawa is the capital of Canada",\n];\n',
  // A folder the question names, and the subject it asks about in another folder.
  'src/log/logger.ts': 'export function writeLog(line: string) {\n  // Writes one line to the log.\n  process.stderr.write(line);\n}\n',
  'src/archive/rotate.ts': 'export function rotateFiles(files: string[], maxSize: number) {\n  // Rotate the files once they grow too large.\n  return files.filter((f) => f.length > maxSize);\n}\n',
  'src/parse/tokens.ts': 'export function parseTokens(s: string) {\n  // The parser splits the input into tokens.\n  return s.split(" ");\n}\n',
  // A codebase that abbreviates: its names say `buf` and `len`, only its comment the whole words.
  'src/ring/ring.ts': 'export interface RingBuf { len: number }\nexport function ringBufLen(rb: RingBuf): number {\n  // The length of the buffer, counted in slots.\n  return rb.len;\n}\n',
  // Names that say `locales` where a question says "localized".
  'src/locales/en.ts': 'export const en = { required: "is required" };\n',
  'src/errors/text.ts': 'export function errorText(code: string, messages: Record<string, string>) {\n  // Error messages, localized by the caller.\n  return messages[code] ?? code;\n}\n',
  // Code words common across the project, and one prose word only a comment uses.
  'src/schema/record.ts': 'export function parseRecord(key: unknown, value: unknown) {\n  // When the key schema is asynchronous, parsing waits for it.\n  return [key, value];\n}\n',
  ...Object.fromEntries([...'abcdefghijklmnop'].map((c) => [`src/schema/${c}.ts`, `export function recordKeySchemaFor_${c}() { return '${c}'; }\n`])),
  // A name's words apart, and a name written whole.
  'src/game/unreal.ts': 'export const unrealNumbers = [1, 2];\n',
  'src/game/engine.ts': 'export function engineStart() {\n  // Starts the game engine.\n}\n',
  'src/editor/host.ts': 'export function startHost() {\n  // Starts the VS Code extension host.\n}\n',
  'src/mail/send.ts': 'export function sendMessage(to: string) {\n  // Sends one message.\n  return to;\n}\n',
  // A type a comment mentions and nothing defines.
  'src/ring/notes.ts': '// A Semaphore could bound the ring one day.\nexport const ringNotes = 1;\n',
};

/** Evidence as the oracle ranks it: a code chunk at `rel`, with the reranker features that fired. */
function evidence(rel: string, features: Record<string, number> = {}, metadata: Record<string, unknown> = {}): RankedEvidence {
  return {
    result: { key: `code:${rel}:1-3`, source: 'code', path: rel, startLine: 1, endLine: 3, content: files[rel] ?? '', score: 1, method: 'bm25', citation: `[${rel}:1]`, metadata },
    fused: 1,
    score: 1,
    ranks: { bm25: 1 },
    features,
  };
}

/** Writes `project` into a new temporary folder and indexes it. */
async function indexedProject(prefix: string, project: Record<string, string>): Promise<{ dir: string; engine: Engine }> {
  const root = mkdtempSync(path.join(os.tmpdir(), prefix));
  for (const [rel, text] of Object.entries(project)) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), text);
  }
  const opened = await Engine.open(root, { fs: nodeWorkspaceFs, embeddingProvider: null }, 'write');
  await opened.index();
  return { dir: root, engine: opened };
}

beforeAll(async () => {
  ({ dir, engine } = await indexedProject('vlt-relevance-', files));
});

afterAll(async () => {
  await engine?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('inflections', () => {
  it('folds plural, past, -ing and -ly forms and the -ise/-ize spellings, not derivations', () => {
    expect(inflectionKey('recognise')).toBe(inflectionKey('recognized'));
    expect(inflectionKey('caching')).toBe(inflectionKey('cached'));
    expect(inflectionKey('stopped')).toBe(inflectionKey('stop'));
    expect(inflectionKey('entries')).toBe(inflectionKey('entry'));
    expect(inflectionKey('compactly')).toBe(inflectionKey('compact'));
    expect(inflectionKey('flavour')).toBe(inflectionKey('flavors'));
    expect(inflectionKey('colours')).toBe(inflectionKey('color'));
    expect(inflectionKey('reader')).not.toBe(inflectionKey('read'));
    expect(inflections('recognise')).toEqual(expect.arrayContaining(['recognized', 'recognizes', 'recognised']));
    // A three-letter stem is another word.
    expect(inflections('life')).not.toContain('lif');
  });

  it('keeps a question word written as code, and drops the word that only names a folder', () => {
    expect(analyzeQuestion('What happens when get() finds more than one object?').terms).toContain('get');
    expect(subjectWords(analyzeQuestion('What does the retry module consist of?'))).toEqual(['retry']);
  });

  it('drops the words of fixed phrases and of how a question asks for a place', () => {
    expect(subjectWords(analyzeQuestion('How does retryWithBackoff make sure a request is retried right away instead of later?'))).toEqual(['retryWithBackoff', 'request', 'retried', 'later']);
    expect(subjectWords(analyzeQuestion('Which helpers are built on top of retryWithBackoff?'))).toEqual(['helpers', 'built', 'retryWithBackoff']);
    expect(analyzeQuestion('Where is RetryPolicy declared?').terms).toEqual(['RetryPolicy']);
    // A folder's contents are a structural question, and "folders" or "top-level" no subject.
    expect(analyzeQuestion("What's inside src/retry?").type).toBe('structural');
    const top = analyzeQuestion('What are the top-level retry and log folders for?');
    expect(top.type).toBe('structural');
    expect(subjectWords(top)).toEqual(['retry', 'log']);
  });

  it('takes a word written as a call for code', () => {
    expect(analyzeQuestion('When timeout() fires, what does the subscriber receive?').symbols).toContain('timeout');
  });
});

describe('co-occurrence', () => {
  it('is high when the question\'s words occur together in one chunk', () => {
    const r = assessRelevance(engine, analyzeQuestion('How is a failed request retried with backoff?'), []);
    expect(r.chunk).toBeGreaterThan(0.9);
    expect(r.cooccurrence).toBeGreaterThanOrEqual(MIN_COOCCURRENCE);
    expect(r.where).toBe('src/retry/backoff.ts');
  });

  it('is low when each word occurs only in a different file', () => {
    const r = assessRelevance(engine, analyzeQuestion('Can you give me a recipe for chocolate chip cookies?'), []);
    expect(r.absent).toBe(0);
    expect(r.cooccurrence).toBeLessThan(MIN_COOCCURRENCE);
  });

  it('measures co-occurrence over the words the index knows, and the rest as absent', () => {
    const r = assessRelevance(engine, analyzeQuestion('How is a failed request retried with exponential jitter?'), []);
    expect(r.absent).toBeGreaterThan(0);
    expect(r.chunk).toBeGreaterThan(0.9);
  });
});

describe('the code\'s own names', () => {
  it('finds no context when the question\'s words occur together only where no name uses them', () => {
    const q = analyzeQuestion('What is the capital of Australia?');
    const r = assessRelevance(engine, q, [evidence('src/data/places.ts')]);
    // Both words are in one chunk: co-occurrence alone would call it context.
    expect(r.cooccurrence).toBeGreaterThanOrEqual(MIN_COOCCURRENCE);
    expect(r.named).toBeLessThan(MIN_NAMED);
    const d = decideContext(engine, q, [evidence('src/data/places.ts')]);
    expect(d.noContext).toBe(true);
    expect(d.why).toMatch(/^no word of it, \d+% of the weight, is a word the code names things with; no context below 40%$/);
  });

  it('has context when two or more of its words name the code, however much weight a prose word carries', () => {
    const q = analyzeQuestion('What happens if the key schema of a record is asynchronous?');
    const r = assessRelevance(engine, q, [evidence('src/schema/record.ts')]);
    expect(r.named).toBeLessThan(MIN_NAMED);
    expect(r.namedWords).toBeGreaterThan(MAX_NAMED_WORDS);
    expect(decideContext(engine, q, [evidence('src/schema/record.ts')]).noContext).toBe(false);
  });

  it('counts the words of notes and threads among the evidence as the project\'s own', () => {
    const q = analyzeQuestion('What is the capital of Australia?');
    const note: RankedEvidence = { ...evidence('src/data/places.ts'), result: { ...evidence('src/data/places.ts').result, key: 'note:places.md', source: 'note', path: 'places.md', content: 'The capital of Australia, for the tests of PLACES.', citation: '[note:places.md]' } };
    expect(assessRelevance(engine, q, [note]).named).toBeGreaterThanOrEqual(MIN_NAMED);
    expect(decideContext(engine, q, [note]).noContext).toBe(false);
  });

  it('counts a word by the abbreviation code writes it with', () => {
    expect(abbreviationsOf('buffers')).toContain('buf');
    expect(abbreviationsOf('Messages')).toContain('msg');
    expect(abbreviationsOf('constructor')).toEqual([]);
    const q = analyzeQuestion('How is the length of the buffer counted?');
    const r = assessRelevance(engine, q, [evidence('src/ring/ring.ts')]);
    expect(r.named).toBeGreaterThanOrEqual(MIN_NAMED);
    expect(decideContext(engine, q, [evidence('src/ring/ring.ts')]).noContext).toBe(false);
  });

  it('counts a word by its derivations: "localized" by `locales`', () => {
    expect(derivations('localized')).toEqual(expect.arrayContaining(['locale', 'locales']));
    expect(derivations('capital')).not.toContain('capacity');
    const q = analyzeQuestion('How is it localized?');
    expect(subjectWords(q)).toEqual(['localized']);
    const r = assessRelevance(engine, q, [evidence('src/errors/text.ts')]);
    expect(r.named).toBeGreaterThanOrEqual(MIN_NAMED);
    expect(decideContext(engine, q, [evidence('src/errors/text.ts')]).noContext).toBe(false);
  });

  it('has context when the words name the code, an agent noun by its verb', () => {
    // "parser" is only in a comment; the code's names say `parse`.
    const q = analyzeQuestion('How does the parser split the input into tokens?');
    const r = assessRelevance(engine, q, [evidence('src/parse/tokens.ts')]);
    expect(r.named).toBeGreaterThanOrEqual(MIN_NAMED);
    expect(decideContext(engine, q, [evidence('src/parse/tokens.ts')]).noContext).toBe(false);
  });
});

describe('a named folder', () => {
  it('is the word before "package" or after it, not the verb that follows "the X package"', () => {
    expect(analyzeQuestion('How does the log package rotate log files?').dirs).toEqual(['log']);
    expect(analyzeQuestion('What is in package bufio?').dirs).toEqual(['bufio']);
    expect(analyzeQuestion('Compare the bufio package and package strings').dirs).toEqual(['bufio', 'strings']);
  });

  it('finds no context when the subject occurs elsewhere but not in the folder the question names', () => {
    const q = analyzeQuestion('How does the log module rotate files once they grow too large?');
    expect(q.dirs).toContain('log');
    const ranked = [evidence('src/log/logger.ts', { namedDir: 0.5 }), evidence('src/archive/rotate.ts')];
    const r = assessRelevance(engine, q, ranked);
    expect(r.cooccurrence).toBeGreaterThanOrEqual(MIN_COOCCURRENCE);
    expect(r.scoped).toBeLessThan(MIN_COOCCURRENCE);
    expect(decideContext(engine, q, ranked).why).toMatch(/^its words do not occur together in the folder it names/);
  });

  it('has context when the subject is in the folder, and for a question about the folder itself', () => {
    const ranked = [evidence('src/log/logger.ts', { namedDir: 0.5 })];
    const q = analyzeQuestion('How does the log module write a line?');
    expect(assessRelevance(engine, q, ranked).scoped).toBeGreaterThanOrEqual(MIN_COOCCURRENCE);
    expect(decideContext(engine, q, ranked).noContext).toBe(false);
    expect(decideContext(engine, analyzeQuestion('What does the log module consist of?'), ranked).noContext).toBe(false);
  });
});

describe('words the index never mentions', () => {
  it('leaves common English words out: they say how a question is put, not what it is about', () => {
    const ranked = [evidence('src/retry/backoff.ts')];
    const plain = assessRelevance(engine, analyzeQuestion('Where do we decide how long a failed attempt waits before it is retried?'), ranked);
    expect(plain.ordinary).toEqual(['decide']);
    expect(plain.absent).toBe(0);
    // Two of its four words absent, both common: still an answer.
    const d = decideContext(engine, analyzeQuestion('How do we quickly decide to retry with backoff?'), ranked);
    expect(d.relevance?.ordinary).toEqual(['quickly', 'decide']);
    expect(d.why).toBeUndefined();
    // A rarer word the index lacks still counts.
    const rare = assessRelevance(engine, analyzeQuestion('Where does the kubelet decide how long a failed attempt waits before it is retried?'), ranked);
    expect(rare.ordinary).toEqual(['decide']);
    expect(rare.absent).toBeGreaterThan(0.2);
  });

  it('finds no context when most of what the user asked is absent, even where the named folder was found', () => {
    const q = analyzeQuestion('How does the mail module send a newsletter to every subscriber?');
    const ranked = [evidence('src/mail/send.ts', { namedDir: 0.5 })];
    const r = assessRelevance(engine, q, ranked);
    expect(r.ownAbsentWords).toBeGreaterThanOrEqual(2);
    expect(r.ownAbsent).toBeGreaterThanOrEqual(0.5);
    const d = decideContext(engine, q, ranked);
    expect(d.noContext).toBe(true);
    expect(d.why).toMatch(/of the question's words, \d+% of its weight, are nowhere in the index$/);
  });

  it('weighs only the user\'s own words when a follow-up was rewritten with the conversation\'s', () => {
    const asked = analyzeQuestion('How is sendMessage constructed?');
    const rewritten = analyzeQuestion('How is sendMessage constructed? (after find_references zqxjk_quux on src/mail/send.ts)');
    const ranked = [evidence('src/mail/send.ts', { exactSymbol: 1 }, { definition: true })];
    const own = assessRelevance(engine, rewritten, ranked, asked);
    expect(own.ownAbsentWords).toBeLessThan(2);
    expect(decideContext(engine, rewritten, ranked, asked).noContext).toBe(false);
    // Without the user's words apart, the rewrite's additions read as absent subjects.
    expect(assessRelevance(engine, rewritten, ranked).ownAbsentWords).toBeGreaterThanOrEqual(2);
  });
});

describe('names the project does not have', () => {
  it('finds no context for a class placed in a folder that was found, when no chunk mentions it', () => {
    const q = analyzeQuestion('Where is the JsonLogFormatter class in the log package defined?');
    const d = decideContext(engine, q, [evidence('src/log/logger.ts', { namedDir: 0.5 })]);
    expect(d.why).toBe('no chunk mentions JsonLogFormatter');
    // Its definition found, a name vouches for itself.
    const found = decideContext(engine, analyzeQuestion('Where is the writeLog function in the log package defined?'), [evidence('src/log/logger.ts', { namedDir: 0.5, exactSymbol: 0.6 }, { definition: true })]);
    expect(found.noContext).toBe(false);
  });

  it('finds no context for a second name the index never mentions or never writes whole, beside a definition that was found', () => {
    const ranked = [evidence('src/mail/send.ts', { exactSymbol: 0.6 }, { definition: true })];
    const d = decideContext(engine, analyzeQuestion('How does sendMessage encode the message as Protobuf?'), ranked);
    expect(d.why).toBe('no chunk mentions Protobuf');
    expect(decideContext(engine, analyzeQuestion('Can sendMessage deliver its message to Unreal Engine?'), ranked).why).toBe('no chunk writes Unreal Engine, though each of its words occurs');
    // A plain word the index lacks is how the question is put, not a second subject.
    expect(decideContext(engine, analyzeQuestion('How is sendMessage constructed?'), ranked).noContext).toBe(false);
  });

  it("finds no context for a member of the project's folder that only a comment mentions", () => {
    const q = analyzeQuestion('How does ring.Semaphore work?');
    const d = decideContext(engine, q, [evidence('src/ring/notes.ts'), evidence('src/ring/ring.ts')]);
    expect(d.why).toBe('nothing in the project defines ring.Semaphore');
    // A member that is defined, or a qualifier that is not the project's, is no such name.
    expect(decideContext(engine, analyzeQuestion('How does ring.ringBufLen work?'), [evidence('src/ring/ring.ts')]).why).toBeUndefined();
    expect(decideContext(engine, analyzeQuestion('How does Atomics.Semaphore relate to the ring?'), [evidence('src/ring/notes.ts')]).why ?? '').not.toMatch(/defines/);
  });
});

describe('proper names', () => {
  it('finds the names of several words or with a dot, not title case or the first word', () => {
    expect(properNames('How does Unreal Engine start?')).toEqual([['Unreal', 'Engine']]);
    expect(properNames('How does the VS Code extension host start?')).toEqual([['VS', 'Code']]);
    expect(properNames('How does Ember.js render a component?')).toEqual([['Ember', 'js']]);
    expect(properNames("How does Unity's Editor load scenes?")).toEqual([]);
    expect(properNames('How Does The Game Engine Start?')).toEqual([]);
    expect(properNames('Unreal Engine: how does it start?')).toEqual([]);
    // A status line or a title is not a product's name.
    expect(properNames('What happens when the endpoint answers 429 Too Many Requests?')).toEqual([]);
    expect(properNames('What happens on an Internal Server Error?')).toEqual([]);
  });

  it('finds no context when no chunk writes a name whole, though each word occurs', () => {
    const q = analyzeQuestion('How does Unreal Engine start?');
    const ranked = [evidence('src/game/engine.ts'), evidence('src/game/unreal.ts')];
    const d = decideContext(engine, q, ranked);
    expect(d.noContext).toBe(true);
    expect(d.why).toBe('no chunk writes Unreal Engine, though each of its words occurs');
  });

  it('has context when a chunk writes the name', () => {
    const q = analyzeQuestion('How does the VS Code extension host start?');
    const d = decideContext(engine, q, [evidence('src/editor/host.ts')]);
    expect(d.why).toBeUndefined();
  });
});

describe('a question about a symbol that was found', () => {
  let foundDir: string;
  let small: Engine;
  beforeAll(async () => {
    ({ dir: foundDir, engine: small } = await indexedProject('vlt-relevance-found-', {
      'src/cache/lru.ts': 'export class LruCache {\n  // Evicts the least recently used entry once the cache is full.\n  evict() {}\n}\n',
      'src/misc/a.ts': 'export function lateBinding() {\n  // A subscriber that arrives late.\n}\n',
      'src/misc/b.ts': 'export function stillWaiting() {\n  // Still waiting for someone.\n}\n',
      ...Object.fromEntries([...'abcdefghij'].map((c) => [`src/pad/${c}.ts`, `export function pad_${c}() { return 'entry ${c}'; }\n`])),
    }));
  });
  afterAll(async () => {
    await small?.close();
    rmSync(foundDir, { recursive: true, force: true });
  });

  it('asks less co-occurrence of its everyday words when the definition leads the evidence', () => {
    const q = analyzeQuestion('How does LruCache evict an entry for someone who arrives?');
    const lru = (metadata: Record<string, unknown>, features: Record<string, number>): RankedEvidence => ({ ...evidence('src/cache/lru.ts', features, metadata), result: { ...evidence('src/cache/lru.ts').result, content: 'export class LruCache {', metadata } });
    const r = assessRelevance(small, q, []);
    expect(r.cooccurrence).toBeGreaterThanOrEqual(MIN_COOCCURRENCE_FOUND);
    expect(r.cooccurrence).toBeLessThan(MIN_COOCCURRENCE);
    expect(decideContext(small, q, [lru({ definition: true }, { exactSymbol: 0.6 })]).noContext).toBe(false);
    // Found by its words alone, the same question is held to the full measure.
    expect(decideContext(small, q, [lru({}, {})]).why).toMatch(/^its words do not occur together/);
  });
});

describe('names whose separators are part of them', () => {
  it("answers a Vim autoload function's name (`tar#Browse`), which no member lookup defines", async () => {
    const ws = mkdtempSync(path.join(os.tmpdir(), 'vlt-vimnames-'));
    try {
      mkdirSync(path.join(ws, 'autoload'), { recursive: true });
      writeFileSync(path.join(ws, 'autoload/tar.vim'), 'function! tar#Browse(tarfile)\n  " Lists the files of a tar archive in a buffer.\n  let l:names = systemlist("tar -tf " . a:tarfile)\n  call setline(1, l:names)\nendfunction\n\nfunction! tar#Read(fname, mode)\n  " Reads one file of the archive.\n  return 0\nendfunction\n');
      writeFileSync(path.join(ws, 'autoload/zip.vim'), 'function! zip#Browse(zipfile)\n  " Lists a zip archive.\n  return 0\nendfunction\n');
      const writer = await Engine.open(ws, { fs: nodeWorkspaceFs, embeddingProvider: null, parseWorkers: 0 }, 'write');
      await writer.index();
      try {
        const ans = await new Oracle({ engine: writer }).ask('tar#Browse', { noLlm: true, noLog: true, explain: true });
        expect(ans.noContext, ans.explain?.threshold.why).toBe(false);
        expect(ans.files[0]).toBe('autoload/tar.vim');
      } finally {
        await writer.close();
      }
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });
});
