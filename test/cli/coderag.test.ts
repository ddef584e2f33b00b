import { appendFileSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync, truncateSync, unlinkSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFixture, tempDir, vlt, vltAsync } from '../helpers/cli';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai';
import { LANGUAGES } from '../../src/core/types';

/** The search `--json` contract documented in docs/cli.md. */
const HIT_KEYS = ['content_hash', 'end_line', 'kind', 'path', 'retrievers', 'score', 'snippet', 'snippet_line', 'start_line', 'symbol'];

describe('vlt coderag on the per-language fixtures', () => {
  let ws: { dir: string; cleanup: () => void };
  beforeAll(async () => {
    ws = copyFixture('test/fixtures/lang');
  });
  afterAll(() => ws.cleanup());

  it('init indexes every language and writes the index under .vlt/', async () => {
    const r = await vlt(['coderag', 'init', ws.dir, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.filesParsed).toBeGreaterThanOrEqual(15);
    expect(report.chunksAdded).toBeGreaterThan(15);
    expect(existsSync(path.join(ws.dir, '.vlt/index.db'))).toBe(true);
  });

  it('status reports counts, languages and that vectors are off', async () => {
    const r = await vlt(['coderag', 'status', '--json', '-C', ws.dir]);
    expect(r.code, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout);
    expect(s.files).toBeGreaterThanOrEqual(15);
    expect(s.symbols).toBeGreaterThan(30);
    expect(s.references).toBeGreaterThan(30);
    expect(Object.keys(s.languages)).toEqual(expect.arrayContaining(['go', 'python', 'rust', 'typescript', 'c', 'kotlin', 'swift', 'markdown']));
    expect(s.vectors.enabled).toBe(false);
    expect(s.vectors.note).toMatch(/vectors are off/);
    expect(s.bytes_on_disk).toBeGreaterThan(0);
    const human = await vlt(['coderag', 'status', '-C', ws.dir]);
    expect(human.stdout).toMatch(/^files\s+\d+/m);
  });

  it('search --json follows the documented contract', async () => {
    const r = await vlt(['coderag', 'search', 'total', '--json', '-k', '5', '-C', ws.dir]);
    expect(r.code, r.stderr).toBe(0);
    const hits = JSON.parse(r.stdout);
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.length).toBeLessThanOrEqual(5);
    for (const h of hits) {
      expect(Object.keys(h).sort()).toEqual(HIT_KEYS);
      expect(h.start_line).toBeLessThanOrEqual(h.end_line);
      expect(h.content_hash).toMatch(/^[0-9a-f]{40}$/);
    }
  });

  it('--lang and --path filter the hits', async () => {
    const go = JSON.parse((await vlt(['coderag', 'search', 'area', '--json', '--lang', 'go', '-C', ws.dir])).stdout);
    expect(go.length).toBeGreaterThan(0);
    expect(go.every((h: { path: string }) => h.path.endsWith('.go'))).toBe(true);
    const py = JSON.parse((await vlt(['coderag', 'search', 'total', '--json', '--path', 'python/**', '-C', ws.dir])).stdout);
    expect(py.length).toBeGreaterThan(0);
    expect(py.every((h: { path: string }) => h.path.startsWith('python/'))).toBe(true);
    // --kind: only chunks whose main definition is of a kind asked for; a bad kind is a usage error.
    const docs = JSON.parse((await vlt(['coderag', 'search', 'search a repository', '--json', '--kind', 'doc', '-C', ws.dir])).stdout) as Array<{ path: string }>;
    expect(docs.length).toBeGreaterThan(0);
    expect(docs.every((h) => h.path.endsWith('.md'))).toBe(true);
    const defs = JSON.parse((await vlt(['coderag', 'search', 'area', '--json', '--kind', 'function,method', '-C', ws.dir])).stdout) as Array<{ kind: string }>;
    expect(defs.length).toBeGreaterThan(0);
    expect(defs.every((h) => h.kind === 'function' || h.kind === 'method')).toBe(true);
    const bad = await vlt(['coderag', 'search', 'area', '--kind', 'widget', '-C', ws.dir]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/expected a comma-separated list of function, method, class, type, test, doc/);
  });

  it('--explain shows every retriever, the fusion and that vectors are off', async () => {
    const r = await vlt(['coderag', 'search', 'total', '--explain', '-C', ws.dir]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/symbol \(/);
    expect(r.stdout).toMatch(/bm25 \(/);
    expect(r.stdout).toMatch(/vector \(.*skipped, vectors are off/);
    expect(r.stdout).toMatch(/ranking \(query intent: \w+\): intent/);
    expect(r.stdout).toMatch(/final order \(weighted reciprocal-rank fusion, then the ranking stages\)/);
  });

  it('maps errors to exit codes: 2 for usage, 1 for failures', async () => {
    expect((await vlt(['coderag', 'search'])).code).toBe(2);
    expect((await vlt(['coderag', 'search', 'x', '--bogus'])).code).toBe(2);
    expect((await vlt(['coderag', 'search', 'x', '-k', 'zero'])).code).toBe(2);
    expect((await vlt(['coderag', 'search', '   ', '-C', ws.dir])).code).toBe(2);
    const slowGlob = await vlt(['coderag', 'search', 'x', '--path', '*a*a*a*a*ab', '-C', ws.dir]);
    expect(slowGlob.code).toBe(2);
    expect(slowGlob.stderr).toMatch(/wildcards/);
    const escaping = await vlt(['coderag', 'search', 'x', '--path', '../../etc/**', '-C', ws.dir]);
    expect(escaping.code).toBe(1);
    expect(escaping.stderr).toMatch(/not inside the workspace/);
    const missing = await vlt(['coderag', 'init', '/definitely/not/here']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/does not exist/);
    expect(missing.stdout).toBe('');
  });
});

describe('incremental indexing, locking and recovery', () => {
  let ws: { dir: string; cleanup: () => void };
  beforeAll(async () => {
    ws = copyFixture('test/fixtures/lang');
    expect((await vlt(['coderag', 'init', ws.dir])).code).toBe(0);
  });
  afterAll(() => ws.cleanup());

  it('re-parses only changed files and removes deleted ones', async () => {
    const again = JSON.parse((await vlt(['coderag', 'init', ws.dir, '--json'])).stdout);
    expect(again.filesParsed).toBe(0);
    appendFileSync(path.join(ws.dir, 'go/sample.go'), '\nfunc FreshlyAddedFunction() int { return 42 }\n');
    unlinkSync(path.join(ws.dir, 'ruby/sample.rb'));
    const r = JSON.parse((await vlt(['coderag', 'sync', '--json', '-C', ws.dir])).stdout);
    expect(r.filesParsed).toBe(1);
    expect(r.filesRemoved).toBe(1);
    const hits = JSON.parse((await vlt(['coderag', 'search', 'FreshlyAddedFunction', '--json', '-C', ws.dir])).stdout);
    expect(hits[0].path).toBe('go/sample.go');
    const status = JSON.parse((await vlt(['coderag', 'status', '--json', '-C', ws.dir])).stdout);
    expect(status.languages.ruby).toBeUndefined();
  });

  it('refuses a second writer while readers keep working', async () => {
    const lock = path.join(ws.dir, '.vlt/index.lock');
    // The test runner itself is a live process: a lock naming it is held.
    writeFileSync(lock, JSON.stringify({ pid: process.pid, hostname: hostname(), startedAt: new Date().toISOString() }));
    try {
      const w = await vlt(['coderag', 'sync', '-C', ws.dir]);
      expect(w.code).toBe(1);
      expect(w.stderr).toMatch(/another vlt process \(pid \d+\) is writing the index/);
      const r = await vlt(['coderag', 'search', 'total', '--json', '-C', ws.dir]);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).length).toBeGreaterThan(0);
    } finally {
      unlinkSync(lock);
    }
  });

  it('status answers from the summary the last commit wrote, byte for byte as from the index, and not from a stale one', async () => {
    const dir = path.join(ws.dir, '.vlt');
    const summary = path.join(dir, 'status.json');
    expect(existsSync(summary)).toBe(true);
    const fast = [await vlt(['coderag', 'status', '-C', ws.dir]), await vlt(['coderag', 'status', '--json', '-C', ws.dir])];
    const saved = readFileSync(summary);
    unlinkSync(summary);
    const full = [await vlt(['coderag', 'status', '-C', ws.dir]), await vlt(['coderag', 'status', '--json', '-C', ws.dir])];
    for (let i = 0; i < 2; i++) {
      expect(fast[i]!.code, fast[i]!.stderr).toBe(0);
      expect(fast[i]!.stdout).toBe(full[i]!.stdout);
      expect(fast[i]!.stderr).toBe(full[i]!.stderr);
    }
    // The fast path reads no database: with index.db's bytes spoiled but its identity kept, it
    // still answers (the full path would call the index corrupt).
    writeFileSync(summary, saved);
    const db = path.join(dir, 'index.db');
    const before = statSync(db);
    const bytes = readFileSync(db);
    const spoiled = Buffer.alloc(bytes.length, 0x41);
    const fd = openSync(db, 'r+');
    writeSync(fd, spoiled, 0, spoiled.length, 0);
    closeSync(fd);
    // In seconds with their fraction: a Date would round the time to another millisecond.
    utimesSync(db, before.atimeMs / 1000, before.mtimeMs / 1000);
    try {
      const r = await vlt(['coderag', 'status', '--json', '-C', ws.dir]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(fast[1]!.stdout);
      // A summary that does not describe index.db (another commit since) is not used.
      utimesSync(db, before.atimeMs / 1000, before.mtimeMs / 1000 + 5);
      const stale = await vlt(['coderag', 'status', '-C', ws.dir]);
      expect(stale.code).toBe(1);
      expect(stale.stderr).toMatch(/corrupt/);
    } finally {
      const fd2 = openSync(db, 'r+');
      writeSync(fd2, bytes, 0, bytes.length, 0);
      closeSync(fd2);
      utimesSync(db, before.atimeMs / 1000, before.mtimeMs / 1000);
    }
  });

  it('detects a corrupt index, says so once, and rebuilds it', async () => {
    writeFileSync(path.join(ws.dir, '.vlt/index.db'), 'this is not a database at all');
    const status = await vlt(['coderag', 'status', '-C', ws.dir]);
    expect(status.code).toBe(1);
    expect(status.stderr).toMatch(/corrupt/);
    const r = await vlt(['coderag', 'init', ws.dir]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.match(/is corrupt/g)?.length).toBe(1);
    expect(JSON.parse((await vlt(['coderag', 'search', 'total', '--json', '-C', ws.dir])).stdout).length).toBeGreaterThan(0);
  });
});

describe('bad input', () => {
  it('skips binary, invalid UTF-8, huge and minified files with reasons, honours .gitignore negations', async () => {
    const dir = tempDir();
    try {
      mkdirSync(path.join(dir, 'src'));
      writeFileSync(path.join(dir, 'src/ok.py'), 'def good_function():\n    return 1\n');
      writeFileSync(path.join(dir, 'src/blob.py'), Buffer.from([0x64, 0x65, 0x66, 0x00, 0x01, 0x02]));
      writeFileSync(path.join(dir, 'src/latin1.py'), Buffer.from('x = "caf\xe9"\n', 'latin1'));
      writeFileSync(path.join(dir, 'src/huge.py'), '');
      truncateSync(path.join(dir, 'src/huge.py'), 50 * 1024 * 1024);
      writeFileSync(path.join(dir, 'src/app.min.js'), 'var a=1;'.repeat(2000));
      writeFileSync(path.join(dir, '.gitignore'), 'logs/\n*.gen.py\n!keep.gen.py\n');
      writeFileSync(path.join(dir, 'src/drop.gen.py'), 'def dropped_function(): pass\n');
      writeFileSync(path.join(dir, 'src/keep.gen.py'), 'def kept_function(): pass\n');
      const r = await vlt(['coderag', 'init', dir, '--json']);
      expect(r.code, r.stderr).toBe(0);
      const s = JSON.parse((await vlt(['coderag', 'status', '--json', '-C', dir])).stdout);
      expect(s.files).toBe(2);
      expect(s.skipped_by_reason).toMatchObject({ binary: 1, 'invalid-utf8': 1, 'too-large': 1, minified: 1, gitignored: 1 });
      const hits = JSON.parse((await vlt(['coderag', 'search', 'kept_function', '--json', '-C', dir])).stdout);
      expect(hits[0].path).toBe('src/keep.gen.py');
      // Which files, not only how many: --list-skipped, in the index and in a dry run.
      const listed = await vlt(['coderag', 'status', '--list-skipped', '-C', dir]);
      expect(listed.stdout).toMatch(/^ {2}src\/blob\.py {2}binary/m);
      expect(listed.stdout).toMatch(/^ {2}src\/app\.min\.js {2}minified/m);
      expect(listed.stdout).toMatch(/^ {2}src\/huge\.py {2}too-large/m);
      const listedJson = JSON.parse((await vlt(['coderag', 'status', '--list-skipped', '--json', '-C', dir])).stdout);
      expect(listedJson.skipped_files.map((f: { path: string }) => f.path).sort()).toEqual(['src/app.min.js', 'src/blob.py', 'src/drop.gen.py', 'src/huge.py', 'src/latin1.py']);
      expect(JSON.parse((await vlt(['coderag', 'status', '--json', '-C', dir])).stdout).skipped_files).toBeUndefined();
      const dry = JSON.parse((await vlt(['coderag', 'init', dir, '--dry-run', '--list-skipped', '--json'])).stdout);
      expect(dry.skippedFiles).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'src/latin1.py', reason: 'invalid-utf8' })]));
      expect((await vlt(['coderag', 'init', dir, '--list-skipped'])).code).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('init --dry-run reports languages, skipped folders and embedding tokens, and writes nothing', async () => {
    const ws = copyFixture('test/fixtures/lang');
    try {
      mkdirSync(path.join(ws.dir, 'node_modules/dep'), { recursive: true });
      writeFileSync(path.join(ws.dir, 'node_modules/dep/index.js'), 'module.exports = 1;\n');
      const r = await vlt(['coderag', 'init', ws.dir, '--dry-run', '--json']);
      expect(r.code, r.stderr).toBe(0);
      const report = JSON.parse(r.stdout);
      // One file per language, grammar or not.
      expect(report.files).toBe(LANGUAGES.length);
      expect(report.languages.go.files).toBe(1);
      expect(report.languages.lua.files).toBe(1);
      expect(report.skippedDirs).toEqual([expect.objectContaining({ path: 'node_modules', reason: 'vendored' })]);
      expect(report.estimatedEmbeddingTokens).toBeGreaterThan(100);
      expect(existsSync(path.join(ws.dir, '.vlt'))).toBe(false);
      const human = await vlt(['coderag', 'init', ws.dir, '--dry-run']);
      expect(human.stdout).toMatch(new RegExp(`would index ${LANGUAGES.length} files`));
      expect(human.stdout).toMatch(/vendored 1: node_modules\//);
    } finally {
      ws.cleanup();
    }
  });

  it('handles an empty repository', async () => {
    const dir = tempDir();
    try {
      expect((await vlt(['coderag', 'init', dir])).code).toBe(0);
      const r = await vlt(['coderag', 'search', 'anything', '-C', dir]);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/no results/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reports a vlt.toml syntax error with its line', async () => {
    const dir = tempDir();
    try {
      writeFileSync(path.join(dir, 'vlt.toml'), '[index]\nmax_file_bytes = 100\nexclude = [unclosed\n');
      const r = await vlt(['coderag', 'init', dir]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/vlt\.toml:3/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('builds the index on first search, so a newcomer\'s first command works', async () => {
    const ws = copyFixture('test/fixtures/lang');
    try {
      const r = await vlt(['coderag', 'search', 'total', '--json', '-C', ws.dir]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/building it first/);
      expect(JSON.parse(r.stdout).length).toBeGreaterThan(0);
    } finally {
      ws.cleanup();
    }
  });

  it('survives kill -9 during init: afterwards the old or the new index loads', { timeout: 180_000 }, async () => {
    const ws = copyFixture('test/fixtures/lang');
    try {
      // Enough files that init runs long enough to be killed at different points.
      for (let i = 0; i < 300; i++) writeFileSync(path.join(ws.dir, `go/gen_${i}.go`), `package sample\n\nfunc Generated${i}(x int) int {\n\treturn x + ${i}\n}\n`);
      expect((await vlt(['coderag', 'init', ws.dir])).code).toBe(0);
      for (let trial = 0; trial < 8; trial++) {
        writeFileSync(path.join(ws.dir, `go/gen_${trial}.go`), `package sample\n\nfunc Changed${trial}() {}\n`);
        const child = vltAsync(['coderag', 'init', ws.dir]);
        const exited = new Promise((r) => child.once('exit', r));
        // Kill points spread from start-up through parsing to the commit.
        await new Promise((r) => setTimeout(r, 30 + trial * 70));
        child.kill('SIGKILL');
        await exited;
        const s = await vlt(['coderag', 'status', '--json', '-C', ws.dir]);
        expect(s.code, s.stderr).toBe(0);
        expect(JSON.parse(s.stdout).files).toBeGreaterThan(300);
      }
      const last = await vlt(['coderag', 'init', ws.dir]);
      expect(last.code, last.stderr).toBe(0);
      expect(readFileSync(path.join(ws.dir, '.vlt/index.db')).subarray(0, 15).toString()).toBe('SQLite format 3');
    } finally {
      ws.cleanup();
    }
  });
});

describe('embeddings through an OpenAI-compatible endpoint', () => {
  let fake: FakeOpenAI;
  let ws: { dir: string; cleanup: () => void };
  beforeAll(async () => {
    fake = await startFakeOpenAI({ dimensions: 16 });
    ws = copyFixture('test/fixtures/lang');
  });
  afterAll(async () => {
    ws.cleanup();
    await fake.close();
  });
  const env = () => ({ VLT_EMBEDDINGS_BASE_URL: fake.baseURL, VLT_EMBEDDINGS_API_KEY: 'test-key', VLT_EMBEDDINGS_MODEL: 'fake-embed' });

  it('embeds every chunk once, serves re-runs from the cache, and re-embeds only changed chunks', async () => {
    const first = JSON.parse((await vlt(['coderag', 'init', ws.dir, '--json'], { env: env() })).stdout);
    expect(first.embedded).toBeGreaterThan(10);
    const status = JSON.parse((await vlt(['coderag', 'status', '--json', '-C', ws.dir], { env: env() })).stdout);
    expect(status.vectors).toMatchObject({ enabled: true, dimensions: 16, model: 'fake-embed' });
    expect(status.vectors.count).toBe(status.chunks);

    const before = fake.counts.embeddings;
    const again = JSON.parse((await vlt(['coderag', 'init', ws.dir, '--json'], { env: env() })).stdout);
    expect(again.embedded).toBe(0);
    expect(fake.counts.embeddings).toBe(before);

    appendFileSync(path.join(ws.dir, 'python/sample.py'), '\n\ndef brand_new_helper():\n    return "fresh"\n');
    const third = JSON.parse((await vlt(['coderag', 'sync', '--json', '-C', ws.dir], { env: env() })).stdout);
    expect(third.filesParsed).toBe(1);
    expect(third.embedded).toBeGreaterThan(0);
    expect(third.embedded).toBeLessThan(first.embedded);
  });

  it('uses the vector retriever in search', async () => {
    const r = await vlt(['coderag', 'search', 'brand new helper', '--json', '--explain', '-C', ws.dir], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    const vector = out.explain.retrievers.find((x: { name: string }) => x.name === 'vector');
    expect(vector.skipped).toBeUndefined();
    expect(vector.top.length).toBeGreaterThan(0);
    expect(out.hits[0].path).toBe('python/sample.py');
  });

  it('keeps the text and symbol index when the endpoint keeps failing, says so, and embeds on the next sync', async () => {
    fake.fail('embeddings', '401', 100);
    appendFileSync(path.join(ws.dir, 'go/sample.go'), '\nfunc AnotherOne() {}\n');
    const r = await vlt(['coderag', 'sync', '-C', ws.dir], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/401|API key/);
    expect(r.stderr, r.stderr).toMatch(/next sync embeds/);
    // The edited symbol is findable at once, without the vectors.
    const found = await vlt(['coderag', 'search', 'AnotherOne', '--json', '-C', ws.dir], { env: env() });
    expect((JSON.parse(found.stdout) as Array<{ symbol?: string }>)[0]?.symbol).toBe('AnotherOne');
    fake.reset();
    const again = await vlt(['coderag', 'sync', '-C', ws.dir], { env: env() });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toMatch(/embedding failed/);
    expect(fake.counts.embeddings).toBeGreaterThan(0);
  });
});
