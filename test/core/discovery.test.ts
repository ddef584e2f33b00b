import { chmod, mkdir, mkdtemp, rm, symlink, truncate, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultConfig, loadConfig, type VltConfig } from '../../src/core/config';
import {
  classifyContent,
  discoverFiles,
  readDiscoveredFile,
  type DiscoveryResult,
} from '../../src/core/discovery';
import { VltError } from '../../src/core/errors';
import type { ProgressEvent, WorkspaceFs } from '../../src/core/ports';
import { nodeWorkspaceFs } from '../../src/node/fs';

let tmp: string;
let root: string;

beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'vlt-discovery-'));
  root = join(tmp, 'ws');
  await mkdir(root);
});

afterEach(async () => {
  // Restore permissions first so that the clean-up itself cannot fail.
  await chmod(join(root, 'locked'), 0o755).catch(() => undefined);
  await rm(tmp, { recursive: true, force: true });
});

/** Creates files (and their directories) under the workspace root. */
async function files(tree: Record<string, string | Uint8Array>): Promise<void> {
  for (const [rel, content] of Object.entries(tree)) {
    const abs = join(root, rel);
    await mkdir(dirname(abs), { recursive: true });
    await writeFile(abs, content);
  }
}

function config(index: Partial<VltConfig['index']> = {}): VltConfig {
  const c = defaultConfig();
  Object.assign(c.index, index);
  return c;
}

function paths(r: DiscoveryResult): string[] {
  return r.files.map((f) => f.path);
}

function reasonOf(r: DiscoveryResult, path: string): string | undefined {
  return r.skipped.find((s) => s.path === path)?.reason ?? r.skippedDirs.find((s) => s.path === path)?.reason;
}

interface Faults {
  /** Error code thrown by readDir/stat/readFile/realpath for a workspace-relative path. */
  errors?: Record<string, string>;
  /** Called after readDir of a directory succeeded, before its entries are returned. */
  afterReadDir?: (rel: string) => Promise<void>;
}

/** Wraps the real file system, injecting errors and recording which files were read. */
function faultyFs(faults: Faults): WorkspaceFs & { reads: string[] } {
  const rel = (abs: string): string => abs.slice(root.length + 1).split('\\').join('/');
  const fail = (abs: string): void => {
    const code = faults.errors?.[rel(abs)];
    if (code) throw Object.assign(new Error(`${code}: ${abs}`), { code });
  };
  const reads: string[] = [];
  return {
    reads,
    async readDir(abs) {
      fail(abs);
      const entries = await nodeWorkspaceFs.readDir(abs);
      await faults.afterReadDir?.(rel(abs));
      return entries;
    },
    async stat(abs) {
      fail(abs);
      return nodeWorkspaceFs.stat(abs);
    },
    async realpath(abs) {
      fail(abs);
      return nodeWorkspaceFs.realpath(abs);
    },
    async readFile(abs) {
      fail(abs);
      const bytes = await nodeWorkspaceFs.readFile(abs);
      reads.push(rel(abs));
      return bytes;
    },
  };
}

async function vltErrorOf(p: Promise<unknown>): Promise<VltError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(VltError);
    return e as VltError;
  }
  throw new Error('expected a VltError');
}

describe('walking', () => {
  it('finds source files with workspace-relative paths, sorted, with stat data', async () => {
    await files({
      'src/b.ts': 'export const b = 1;\n',
      'src/a.ts': 'export const a = 1;\n',
      'README.md': '# hi\n',
      'main.go': 'package main\n',
      'data.json': '{}',
      'notes.txt': 'x',
    });
    const r = await discoverFiles(root, config(), nodeWorkspaceFs);
    expect(paths(r)).toEqual(['README.md', 'main.go', 'src/a.ts', 'src/b.ts']);
    const a = r.files.find((f) => f.path === 'src/a.ts');
    expect(a).toMatchObject({ absPath: join(root, 'src', 'a.ts'), language: 'typescript', size: 20 });
    expect(a?.mtimeMs).toBeGreaterThan(0);
    // Unknown extensions are counted, not listed.
    expect(r.unsupportedCount).toBe(2);
    expect(r.skipped).toEqual([]);
  });

  it('returns empty results for an empty repository', async () => {
    const r = await discoverFiles(root, config(), nodeWorkspaceFs);
    expect(r).toEqual({ files: [], skipped: [], skippedDirs: [], unsupportedCount: 0, unsupportedByExt: {}, listed: [], goVendorDirs: [] });
  });

  it('throws PATH_NOT_FOUND for a missing root and NOT_A_DIRECTORY for a file', async () => {
    expect((await vltErrorOf(discoverFiles(join(root, 'nope'), config(), nodeWorkspaceFs))).code).toBe('PATH_NOT_FOUND');
    await files({ 'f.ts': '' });
    expect((await vltErrorOf(discoverFiles(join(root, 'f.ts'), config(), nodeWorkspaceFs))).code).toBe('NOT_A_DIRECTORY');
  });

  it('never enters VCS or Vlt state directories and does not report them', async () => {
    await files({
      '.git/hooks/x.py': '',
      '.vlt/cache.ts': '',
      '.hg/a.py': '',
      '.svn/a.py': '',
      'keep.py': '',
    });
    const r = await discoverFiles(root, config(), nodeWorkspaceFs);
    expect(paths(r)).toEqual(['keep.py']);
    expect(r.skippedDirs).toEqual([]);
  });

  it('is deterministic', async () => {
    const tree: Record<string, string> = {};
    for (let d = 0; d < 8; d++) for (let f = 0; f < 8; f++) tree[`d${d}/sub/f${f}.py`] = 'x = 1\n';
    await files(tree);
    const a = await discoverFiles(root, config(), nodeWorkspaceFs);
    const b = await discoverFiles(root, config(), nodeWorkspaceFs);
    expect(a).toEqual(b);
    expect(paths(a)).toEqual([...paths(a)].sort());
  });

  it('stops with CANCELLED when the signal aborts', async () => {
    await files({ 'a/b.ts': '', 'c.ts': '' });
    const ac = new AbortController();
    ac.abort();
    expect((await vltErrorOf(discoverFiles(root, config(), nodeWorkspaceFs, { signal: ac.signal }))).code).toBe('CANCELLED');
  });

  it('reports progress', async () => {
    const tree: Record<string, string> = {};
    for (let i = 0; i < 600; i++) tree[`d${i % 7}/f${i}.rs`] = '';
    await files(tree);
    const events: ProgressEvent[] = [];
    const r = await discoverFiles(root, config(), nodeWorkspaceFs, { onProgress: (e) => events.push(e) });
    expect(r.files).toHaveLength(600);
    expect(events.length).toBeGreaterThanOrEqual(3);
    expect(events.every((e) => e.phase === 'discover')).toBe(true);
    expect(events.at(-1)).toEqual({ phase: 'discover', done: 600, total: 600 });
  });
});

describe('ignore rules', () => {
  it('honours nested .gitignore files with negations', async () => {
    await files({
      '.gitignore': '*.gen.ts\nbuild/\n# comment\n/only-root.py\n',
      'a.gen.ts': '',
      'a.ts': '',
      'only-root.py': '',
      'build/out.js': '',
      'sub/.gitignore': '!keep.gen.ts\nlocal.py\n',
      'sub/keep.gen.ts': '',
      'sub/other.gen.ts': '',
      'sub/local.py': '',
      'sub/only-root.py': '',
      'sub/build/x.js': '',
      'sub/deeper/keep.gen.ts': '',
      'sub/deeper/local.py': '',
      'other/local.py': '',
    });
    const r = await discoverFiles(root, config(), nodeWorkspaceFs);
    expect(paths(r)).toEqual(['a.ts', 'other/local.py', 'sub/deeper/keep.gen.ts', 'sub/keep.gen.ts', 'sub/only-root.py']);
    expect(r.skipped).toEqual([
      { path: 'a.gen.ts', reason: 'gitignored' },
      { path: 'only-root.py', reason: 'gitignored' },
      { path: 'sub/deeper/local.py', reason: 'gitignored' },
      { path: 'sub/local.py', reason: 'gitignored' },
      { path: 'sub/other.gen.ts', reason: 'gitignored' },
    ]);
    expect(r.skippedDirs).toEqual([
      { path: 'build', reason: 'gitignored' },
      { path: 'sub/build', reason: 'gitignored' },
    ]);
  });

  it('honours .git/info/exclude below any .gitignore', async () => {
    await files({
      '.git/info/exclude': 'secret/\n*.py\n',
      '.gitignore': '!wanted.py\n',
      'secret/a.ts': '',
      'x.py': '',
      'wanted.py': '',
    });
    const r = await discoverFiles(root, config(), nodeWorkspaceFs);
    expect(paths(r)).toEqual(['wanted.py']);
    expect(reasonOf(r, 'secret')).toBe('gitignored');
    expect(reasonOf(r, 'x.py')).toBe('gitignored');
  });

  it('applies include, exclude and languages from vlt.toml', async () => {
    await files({
      'vlt.toml': '[index]\ninclude = ["src/**", "tools/*.py"]\nexclude = ["**/*.test.ts", "fixtures"]\nlanguages = ["typescript", "python"]\n',
      'src/a.ts': '',
      'src/a.test.ts': '',
      'src/lib/b.ts': '',
      'src/lib/c.go': '',
      'src/fixtures/f.ts': '',
      'tools/gen.py': '',
      'tools/deep/no.py': '',
      'docs/x.ts': '',
      'top.ts': '',
    });
    const r = await discoverFiles(root, await loadConfig(root, {}), nodeWorkspaceFs);
    expect(paths(r)).toEqual(['src/a.ts', 'src/lib/b.ts', 'tools/gen.py']);
    expect(r.skipped).toEqual([
      { path: 'src/a.test.ts', reason: 'excluded' },
      { path: 'src/lib/c.go', reason: 'language-disabled', detail: 'go' },
      { path: 'tools/deep/no.py', reason: 'excluded', detail: 'not included' },
      { path: 'top.ts', reason: 'excluded', detail: 'not included' },
    ]);
    expect(r.skippedDirs).toEqual([
      { path: 'docs', reason: 'excluded', detail: 'not included' },
      { path: 'src/fixtures', reason: 'excluded' },
    ]);
  });
});

describe('vendored and generated directories', () => {
  it('skips dependency and build-output directories, some only in context', async () => {
    await files({
      'node_modules/lib/index.js': '',
      'third_party/x.c': '',
      '.venv/lib/site.py': '',
      'pkg/__pycache__/m.py': '',
      'web/package.json': '{}',
      'web/dist/app.js': '',
      'web/build/app.js': '',
      'web/src/app.ts': '',
      'crate/Cargo.toml': '',
      'crate/target/debug/build.rs': '',
      'crate/src/lib.rs': '',
      // Without a package.json or Cargo.toml beside them these are ordinary directories.
      'go/build/build.go': '',
      'other/target/t.rs': '',
      'other/dist/d.py': '',
    });
    const r = await discoverFiles(root, config(), nodeWorkspaceFs);
    expect(paths(r)).toEqual(['crate/src/lib.rs', 'go/build/build.go', 'other/dist/d.py', 'other/target/t.rs', 'web/src/app.ts']);
    expect(r.skippedDirs.map((d) => [d.path, d.reason])).toEqual([
      ['.venv', 'vendored'],
      ['crate/target', 'vendored'],
      ['node_modules', 'vendored'],
      ['pkg/__pycache__', 'vendored'],
      ['third_party', 'vendored'],
      ['web/build', 'vendored'],
      ['web/dist', 'vendored'],
    ]);
  });

  it('skips Go vendor and testdata directories like the go tool', async () => {
    await files({
      'src/go.mod': 'module std\n',
      'src/vendor/golang.org/x/net/a.go': '',
      'src/cmd/vendor/github.com/x/b.go': '',
      'src/cmd/go/main.go': '',
      'src/cmd/go/testdata/script/x.go': '',
      'src/testdata/x.go': '',
      'src/compress/testdata/e.txt': '',
      // Outside a Go module and with no .go file beside it, testdata is ordinary.
      'py/testdata/case.py': '',
      'py/test_x.py': '',
    });
    const r = await discoverFiles(root, config(), nodeWorkspaceFs);
    expect(paths(r)).toEqual(['py/test_x.py', 'py/testdata/case.py', 'src/cmd/go/main.go']);
    expect(r.skippedDirs.map((d) => [d.path, d.reason])).toEqual([
      ['src/cmd/go/testdata', 'testdata'],
      ['src/cmd/vendor', 'vendored'],
      ['src/compress/testdata', 'testdata'],
      ['src/testdata', 'testdata'],
      ['src/vendor', 'vendored'],
    ]);
  });

  it('walks a Go module\'s vendor directory that has its modules.txt, for its Go files only, as navigation-only', async () => {
    await files({
      'src/go.mod': 'module std\n',
      'src/vendor/modules.txt': '# golang.org/x/net v0.0.0\n',
      'src/vendor/golang.org/x/net/a.go': '',
      'src/vendor/golang.org/x/net/README.md': '# x/net\n',
      'src/vendor/golang.org/x/net/testdata/t.go': '',
      'src/vendor/golang.org/x/net/vendor/nested.go': '',
      'src/cmd/go.mod': 'module cmd\n',
      'src/cmd/vendor/github.com/x/b.go': '',
      'src/net/http/server.go': '',
      'web/vendor/lib.js': '',
    });
    const r = await discoverFiles(root, config(), nodeWorkspaceFs);
    expect(r.files.map((f) => [f.path, f.vendored === true])).toEqual([
      ['src/net/http/server.go', false],
      ['src/vendor/golang.org/x/net/a.go', true],
    ]);
    expect(r.goVendorDirs).toEqual(['src/vendor']);
    expect(r.skipped).toContainEqual(expect.objectContaining({ path: 'src/vendor/golang.org/x/net/README.md', reason: 'vendored' }));
    expect(r.skippedDirs.map((d) => [d.path, d.reason])).toEqual([
      ['src/cmd/vendor', 'vendored'],
      ['src/vendor/golang.org/x/net/testdata', 'testdata'],
      ['src/vendor/golang.org/x/net/vendor', 'vendored'],
      ['web/vendor', 'vendored'],
    ]);
  });

  it('walks a vendored directory that include names explicitly', async () => {
    await files({
      'vendor/mylib/a.php': '',
      'vendor/other/b.php': '',
      'app/c.php': '',
      'app/vendor/d.php': '',
    });
    const r = await discoverFiles(root, config({ include: ['vendor/mylib/**', 'app/**'] }), nodeWorkspaceFs);
    expect(paths(r)).toEqual(['app/c.php', 'vendor/mylib/a.php']);
    expect(reasonOf(r, 'app/vendor')).toBe('vendored');
    expect(reasonOf(r, 'vendor/other')).toBe('excluded');
  });
});

describe('file checks during discovery', () => {
  it('skips files over max_file_bytes without reading them, even a 50 MB one', async () => {
    await files({ 'small.py': 'x = 1\n', 'medium.py': 'y'.repeat(2000) });
    await writeFile(join(root, 'huge.c'), '');
    await truncate(join(root, 'huge.c'), 50 * 1024 * 1024);
    const fs = faultyFs({});
    const r = await discoverFiles(root, config({ maxFileBytes: 1000 }), fs);
    expect(paths(r)).toEqual(['small.py']);
    expect(r.skipped.map((s) => [s.path, s.reason])).toEqual([
      ['huge.c', 'too-large'],
      ['medium.py', 'too-large'],
    ]);
    expect(r.skipped[0]?.detail).toContain('52428800');
    // Discovery is stat-only: no source file is read.
    expect(fs.reads).toEqual([]);
  });

  it('skips .min.js files by name', async () => {
    await files({ 'app.min.js': 'x', 'lib-min.js': 'y', 'app.js': 'z' });
    const r = await discoverFiles(root, config(), nodeWorkspaceFs);
    expect(paths(r)).toEqual(['app.js']);
    expect(r.skipped.map((s) => s.reason)).toEqual(['minified', 'minified']);
  });
});

describe('symlinks', () => {
  it('follows links inside the workspace and stops at loops and at the workspace boundary', async () => {
    await files({ 'src/a.ts': '', 'src/nested/b.ts': '' });
    await mkdir(join(tmp, 'elsewhere'));
    await writeFile(join(tmp, 'elsewhere', 'secret.ts'), '');
    await symlink('..', join(root, 'src', 'nested', 'up')); // loops back to src
    await symlink(root, join(root, 'src', 'rootlink')); // loops back to the root
    await symlink(join(tmp, 'elsewhere'), join(root, 'outdir'));
    await symlink(join(tmp, 'elsewhere', 'secret.ts'), join(root, 'outfile.ts'));
    await symlink('src/a.ts', join(root, 'alias.ts'));
    await symlink('src/nested', join(root, 'aliasdir'));
    await symlink('missing.ts', join(root, 'broken.ts'));
    await symlink('missing.txt', join(root, 'broken.txt'));

    const r = await discoverFiles(root, config(), nodeWorkspaceFs);
    expect(paths(r)).toEqual(['alias.ts', 'aliasdir/b.ts', 'src/a.ts', 'src/nested/b.ts']);
    expect(r.files.find((f) => f.path === 'alias.ts')?.absPath).toBe(join(root, 'alias.ts'));
    expect(r.skipped).toEqual([
      { path: 'broken.ts', reason: 'unreadable', detail: 'broken symlink' },
      { path: 'outfile.ts', reason: 'excluded', detail: 'outside workspace' },
    ]);
    expect(r.skippedDirs.map((d) => [d.path, d.reason, d.detail?.slice(0, 10)])).toEqual([
      ['aliasdir/up', 'symlink-loop', 'links back'],
      ['outdir', 'excluded', 'outside wo'],
      ['src/nested/up', 'symlink-loop', 'links back'],
      ['src/rootlink', 'symlink-loop', 'links back'],
    ]);
    expect(r.unsupportedCount).toBe(1);
  });

  it('skips a link whose target the deny list names, though its own name is harmless', async () => {
    await files({ 'prod.pem': '-----BEGIN PRIVATE KEY-----\n', 'src/a.ts': '' });
    await mkdir(join(root, 'notes'));
    await symlink('../prod.pem', join(root, 'notes', 'cert.md'));
    await symlink('../prod.pem', join(root, 'src', 'key.ts'));
    const r = await discoverFiles(root, config(), nodeWorkspaceFs, { alsoList: /\.md$/ });
    expect(paths(r)).toEqual(['src/a.ts']);
    expect(r.listed).not.toContain('notes/cert.md');
    expect(r.skipped).toContainEqual({ path: 'src/key.ts', reason: 'denied', detail: '*.pem' });
  });

  it('reports a self-referencing symlink chain as a loop', async () => {
    await symlink('b.ts', join(root, 'a.ts'));
    await symlink('a.ts', join(root, 'b.ts'));
    const r = await discoverFiles(root, config(), nodeWorkspaceFs);
    expect(r.files).toEqual([]);
    expect(r.skipped.map((s) => [s.path, s.reason])).toEqual([
      ['a.ts', 'symlink-loop'],
      ['b.ts', 'symlink-loop'],
    ]);
  });
});

describe('file-system faults', () => {
  it('reports permission errors as unreadable instead of throwing', async () => {
    await files({ 'ok.ts': '', 'locked/a.ts': '', 'bad.ts': '', 'dir/x.py': '' });
    const fs = faultyFs({ errors: { 'bad.ts': 'EACCES', dir: 'EACCES' } });
    const r = await discoverFiles(root, config(), fs);
    expect(paths(r)).toEqual(['locked/a.ts', 'ok.ts']);
    expect(r.skipped).toEqual([{ path: 'bad.ts', reason: 'unreadable', detail: 'permission denied (EACCES)' }]);
    expect(r.skippedDirs).toEqual([{ path: 'dir', reason: 'unreadable', detail: 'permission denied (EACCES)' }]);
  });

  it('copes with chmod 000 on the real file system', async () => {
    await files({ 'ok.ts': '', 'locked/a.ts': '' });
    await chmod(join(root, 'locked'), 0o000);
    const r = await discoverFiles(root, config(), nodeWorkspaceFs);
    expect(paths(r)).toContain('ok.ts');
    if (process.getuid?.() === 0) {
      // Root ignores permission bits, so the directory is read normally.
      expect(paths(r)).toContain('locked/a.ts');
    } else {
      expect(r.skippedDirs).toEqual([{ path: 'locked', reason: 'unreadable', detail: 'permission denied (EACCES)' }]);
    }
  });

  it('reports a file deleted between readdir and stat', async () => {
    await files({ 'src/gone.ts': '', 'src/stay.ts': '' });
    const fs = faultyFs({
      afterReadDir: async (rel) => {
        if (rel === 'src') await unlink(join(root, 'src', 'gone.ts'));
      },
    });
    const r = await discoverFiles(root, config(), fs);
    expect(paths(r)).toEqual(['src/stay.ts']);
    expect(r.skipped).toEqual([{ path: 'src/gone.ts', reason: 'unreadable', detail: 'deleted during scan' }]);
  });

  it('reports a directory deleted between listing and reading', async () => {
    await files({ 'a/x.ts': '', 'b.ts': '' });
    const fs = faultyFs({ errors: { a: 'ENOENT' } });
    const r = await discoverFiles(root, config(), fs);
    expect(paths(r)).toEqual(['b.ts']);
    expect(r.skippedDirs).toEqual([{ path: 'a', reason: 'unreadable', detail: 'deleted during scan' }]);
  });

  it('throws IO when the root itself cannot be listed', async () => {
    const fs = faultyFs({});
    const broken: WorkspaceFs = {
      ...fs,
      readDir: () => Promise.reject(Object.assign(new Error('EACCES'), { code: 'EACCES' })),
    };
    expect((await vltErrorOf(discoverFiles(root, config(), broken))).code).toBe('IO');
  });
});

describe('classifyContent', () => {
  const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

  it('accepts ordinary source and returns its text without a BOM', () => {
    expect(classifyContent('a.ts', enc('\uFEFFexport const a = 1;\n'))).toEqual({ ok: true, text: 'export const a = 1;\n' });
  });

  it('detects binary content by a NUL byte in the first 8 KiB', () => {
    const bytes = enc('int main() { return 0; }\n\0\0\x01');
    expect(classifyContent('a.c', bytes)).toMatchObject({ ok: false, reason: 'binary' });
    const late = new Uint8Array(10_000).fill(0x61);
    late[9000] = 0;
    // Only the first 8 KiB are sniffed, so a late NUL (valid UTF-8) does not make a file binary.
    expect(classifyContent('a.c', late)).toMatchObject({ ok: true });
  });

  it('detects invalid UTF-8', () => {
    expect(classifyContent('a.py', Uint8Array.from([0x78, 0x3d, 0xc3, 0x28, 0x0a]))).toEqual({
      ok: false,
      reason: 'invalid-utf8',
      detail: 'not valid UTF-8',
    });
  });

  it('detects minified JavaScript by line length, only for js-like languages', () => {
    const longLine = `var a=${'1+'.repeat(3000)}1;`;
    expect(classifyContent('bundle.js', enc(longLine))).toMatchObject({ ok: false, reason: 'minified' });
    const wide = Array.from({ length: 20 }, () => 'x'.repeat(600)).join('\n');
    expect(classifyContent('wide.ts', enc(wide))).toMatchObject({ ok: false, reason: 'minified', detail: 'average line length 600' });
    expect(classifyContent('table.go', enc(`package t\nvar x = "${'a'.repeat(6000)}"\n`))).toMatchObject({ ok: true });
    // One long token among ordinary test code is not minification (zod's string tests hold a 32K-character JWT).
    const ordinary = Array.from({ length: 900 }, (_, i) => `  expect(parse(input${i})).toBe(${i});`);
    ordinary.splice(300, 0, `  const jwt = "${'e'.repeat(32_000)}";`);
    expect(classifyContent('string.test.ts', enc(ordinary.join('\n')))).toMatchObject({ ok: true });
    expect(classifyContent('app.min.js', enc('x'))).toMatchObject({ ok: false, reason: 'minified' });
  });

  it('marks generated files by header markers and keeps their text (the indexer applies [index] generated)', () => {
    const go = '// Code generated by "stringer -type=Op"; DO NOT EDIT.\n\npackage ssa\n';
    expect(classifyContent('op_string.go', enc(go))).toEqual({ ok: true, text: go, generated: '// Code generated by "stringer -type=Op"; DO NOT EDIT.' });
    const afterLicense = '// Copyright 2022 The Go Authors.\n// license\n\n// Code generated by mkbuiltin.go. DO NOT EDIT.\n\npackage x\n';
    expect(classifyContent('b.go', enc(afterLicense))).toMatchObject({ ok: true, generated: expect.stringMatching(/generated/i) });
    expect(classifyContent('x.js', enc('/**\n * @generated SignedSource<<abc>>\n */\nmodule.exports = 1;\n'))).toMatchObject({
      generated: expect.stringMatching(/generated/i),
    });
    expect(classifyContent('x.cs', enc('// <auto-generated>\nclass A {}\n'))).toMatchObject({ ok: true, generated: expect.stringMatching(/generated/i) });
    expect(classifyContent('x.ts', enc('// This file is automatically generated. Do not edit.\nexport {};\n'))).toMatchObject({
      generated: expect.stringMatching(/generated/i),
    });
    expect(classifyContent('x_pb2.py', enc('# Generated by the protocol buffer compiler.  DO NOT EDIT!\n'))).toMatchObject({
      generated: expect.stringMatching(/generated/i),
    });
    expect(classifyContent('x.php', enc('<?php\n\n// @generated by tool\nclass A {}\n'))).toMatchObject({ ok: true, generated: expect.stringMatching(/generated/i) });
  });

  it('does not mistake code that writes a marker for a generated file', () => {
    const gen = 'package main\n\nfunc main() {\n\tfmt.Println("// Code generated by gen. DO NOT EDIT.")\n}\n';
    expect(classifyContent('gen.go', enc(gen))).toEqual({ ok: true, text: gen });
    // A marker in a comment below the first line of code is not a header.
    const later = 'package tool\n\n// Files we write start with "Code generated by tool. DO NOT EDIT."\nconst x = 1\n';
    expect(classifyContent('tool.go', enc(later))).toEqual({ ok: true, text: later });
  });

  it('enforces maxFileBytes when asked', () => {
    expect(classifyContent('a.ts', enc('abcdef'), { maxFileBytes: 3 })).toMatchObject({ ok: false, reason: 'too-large' });
  });
});

describe('readDiscoveredFile', () => {
  it('reads and classifies the files discovery returned', async () => {
    await files({
      'ok.py': 'print(1)\n',
      'bin.c': Uint8Array.from([0x7f, 0x45, 0x4c, 0x46, 0x00, 0x01]),
      'latin1.py': Uint8Array.from([0x23, 0x20, 0xe9, 0x0a]),
      'zz_generated.go': '// Code generated by controller-gen. DO NOT EDIT.\n\npackage v1\n',
      'bundle.js': `!function(){${'a();'.repeat(2000)}}();`,
    });
    const r = await discoverFiles(root, config(), nodeWorkspaceFs);
    expect(r.files).toHaveLength(5);
    const outcomes = await Promise.all(r.files.map(async (f) => [f.path, await readDiscoveredFile(nodeWorkspaceFs, f)] as const));
    expect(outcomes.map(([p, c]) => [p, c.ok ? (c.generated ? 'ok, generated' : 'ok') : c.reason])).toEqual([
      ['bin.c', 'binary'],
      ['bundle.js', 'minified'],
      ['latin1.py', 'invalid-utf8'],
      ['ok.py', 'ok'],
      ['zz_generated.go', 'ok, generated'],
    ]);
    expect(outcomes[3]?.[1]).toEqual({ ok: true, text: 'print(1)\n' });
  });

  it('turns a file deleted since discovery into unreadable', async () => {
    await files({ 'a.ts': 'x' });
    const [file] = (await discoverFiles(root, config(), nodeWorkspaceFs)).files;
    await unlink(join(root, 'a.ts'));
    expect(await readDiscoveredFile(nodeWorkspaceFs, file!)).toEqual({ ok: false, reason: 'unreadable', detail: 'deleted during scan' });
  });
});

describe('performance', () => {
  it('discovers 5,000 files quickly', async () => {
    const tree: Record<string, string> = {};
    for (let d = 0; d < 50; d++) for (let f = 0; f < 100; f++) tree[`pkg${d}/sub${f % 5}/file${f}.go`] = 'package x\n';
    await files(tree);
    await files({ '.gitignore': '*.tmp\n' });
    await discoverFiles(root, config(), nodeWorkspaceFs); // Warm the OS caches and the JIT.
    const t0 = performance.now();
    const r = await discoverFiles(root, config(), nodeWorkspaceFs);
    const ms = performance.now() - t0;
    expect(r.files).toHaveLength(5000);
    // The target is well under 200 ms; the bound is loose so a busy CI machine does not flake.
    expect(ms).toBeLessThan(1000);
  });
});

describe('extensions two languages share', () => {
  it('reads a .pl file as Prolog when it holds Prolog directives, else as Perl', async () => {
    await files({
      'lib/lists.pl': ':- module(lists_extra, [sum_list/2]).\n\nsum_list(L, S) :- foldl(plus, L, 0, S).\n',
      'bin/wrap.pl': '#!/usr/bin/perl\nuse strict;\nsub wrap { return 1 }\n',
      'lib/Util.pm': 'package Util;\n1;\n',
    });
    const r = await discoverFiles(root, config(), nodeWorkspaceFs);
    expect(r.files.map((f) => [f.path, f.language])).toEqual([
      ['bin/wrap.pl', 'perl'],
      ['lib/Util.pm', 'perl'],
      ['lib/lists.pl', 'prolog'],
    ]);
  });

  it('reads an extensionless script by its #! line or Emacs mode line', async () => {
    await files({ 'bin/deploy': '#!/usr/bin/env bash\necho hi\n', 'bash_completion': '#   -*- shell-script -*-\n_f() { :; }\n', 'LICENSE': 'MIT\n' });
    const r = await discoverFiles(root, config(), nodeWorkspaceFs);
    expect(r.files.map((f) => [f.path, f.language])).toEqual([
      ['bash_completion', 'bash'],
      ['bin/deploy', 'bash'],
    ]);
    expect(r.unsupportedByExt).toEqual({ LICENSE: 1 });
  });
});
