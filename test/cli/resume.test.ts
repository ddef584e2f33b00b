/**
 * A build killed part way resumes: a long `vlt coderag init` commits what it has indexed as it
 * goes (`[index] checkpoint_seconds`), so kill -9 leaves a loadable index with part of the
 * files, and the next `init` parses only the rest and says it resumed. A forced run (`sync
 * --force`, every file parsed again) killed part way resumes after the files it saved: the next
 * sync parses the rest again, although none of them changed.
 */
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, vlt, vltAsync } from '../helpers/cli';

const FILES = 4000;

describe('a build killed part way', () => {
  let ws: string;
  beforeAll(() => {
    ws = tempDir('vlt-resume-');
    writeFileSync(path.join(ws, 'vlt.toml'), '[index]\ncheckpoint_seconds = 1\n');
    for (let i = 0; i < FILES; i++) {
      const dir = path.join(ws, `pkg${i % 40}`);
      mkdirSync(dir, { recursive: true });
      const fns = [0, 1, 2].map((j) => `def handler_${i}_${j}(request):\n    """Handles request ${i}.${j}."""\n    value = request.get("k${j}")\n    return value * ${j + 1}\n`);
      writeFileSync(path.join(dir, `mod${i}.py`), fns.join('\n\n'));
    }
  });
  afterAll(() => rmSync(ws, { recursive: true, force: true }));

  it('leaves a loadable index with what it had saved, and the next init parses only the rest', async () => {
    const child = vltAsync(['-C', ws, 'coderag', 'init', '-q']);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // Killed once it has saved a first part (the index file appears with the first save).
    const db = path.join(ws, '.vlt', 'index.db');
    for (let i = 0; i < 600 && !existsSync(db); i++) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(db)).toBe(true);
    child.kill('SIGKILL');
    await exited;

    const status = await vlt(['-C', ws, 'coderag', 'status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    const saved = (JSON.parse(status.stdout) as { files: number }).files;
    expect(saved).toBeGreaterThan(0);
    expect(saved).toBeLessThan(FILES);
    // A search answers from the part saved, and says so.
    const partial = await vlt(['-C', ws, 'coderag', 'search', 'handler_0_0', '--json']);
    expect(partial.code, partial.stderr).toBe(0);
    expect(partial.stderr).toContain(`partial: the index holds the ${saved} files a build saved`);
    expect((JSON.parse(partial.stdout) as Array<{ symbol?: string }>)[0]?.symbol).toBe('handler_0_0');

    const again = await vlt(['-C', ws, 'coderag', 'init', '--json']);
    expect(again.code, again.stderr).toBe(0);
    const report = JSON.parse(again.stdout) as { resumed?: number; filesParsed: number; filesUnchanged: number };
    expect(report.resumed).toBe(saved);
    expect(report.filesUnchanged).toBeGreaterThanOrEqual(saved);
    expect(report.filesParsed).toBeLessThanOrEqual(FILES - saved + 1);
    const line = await vlt(['-C', ws, 'coderag', 'sync']);
    expect(line.stdout).not.toMatch(/resumed/);
    const done = await vlt(['-C', ws, 'coderag', 'status', '--json']);
    expect((JSON.parse(done.stdout) as { files: number }).files).toBe(FILES);
    // What the killed run saved and what the resumed one added are both found, by name and by words.
    for (const name of ['handler_0_0', `handler_${FILES - 1}_2`]) {
      const found = await vlt(['-C', ws, 'coderag', 'search', name, '--json']);
      expect((JSON.parse(found.stdout) as Array<{ symbol?: string }>)[0]?.symbol).toBe(name);
      expect(found.stderr).not.toContain('partial:');
    }
    const def = await vlt(['-C', ws, 'coderag', 'def', 'handler_7_1', '--json']);
    expect(def.code, def.stderr).toBe(0);
    expect(def.stdout).toContain('pkg7/mod7.py');
  }, 180_000);

  it('a forced sync killed part way is finished by the next sync, which parses again only the files it had not saved', async () => {
    const db = path.join(ws, '.vlt', 'index.db');
    const before = statSync(db).mtimeMs;
    const child = vltAsync(['-C', ws, 'coderag', 'sync', '--force', '-q']);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // Killed once a checkpoint has saved part of the forced run (the index file is rewritten).
    for (let i = 0; i < 600 && statSync(db).mtimeMs === before; i++) await new Promise((r) => setTimeout(r, 50));
    expect(statSync(db).mtimeMs).toBeGreaterThan(before);
    child.kill('SIGKILL');
    await exited;

    const again = await vlt(['-C', ws, 'coderag', 'sync', '--json']);
    expect(again.code, again.stderr).toBe(0);
    const report = JSON.parse(again.stdout) as { filesParsed: number; filesUnchanged: number };
    // Nothing changed on disk, yet the files the forced run had not reached are parsed again.
    expect(report.filesParsed).toBeGreaterThan(0);
    expect(report.filesParsed).toBeLessThan(FILES);
    expect(report.filesParsed + report.filesUnchanged).toBe(FILES);
    const after = JSON.parse((await vlt(['-C', ws, 'coderag', 'sync', '--json'])).stdout) as { filesParsed: number };
    expect(after.filesParsed).toBe(0);
  }, 180_000);
});

describe('sync --force', () => {
  it('parses every file again though none changed, and a plain sync afterwards parses none', async () => {
    const dir = tempDir('vlt-force-');
    try {
      for (let i = 0; i < 5; i++) writeFileSync(path.join(dir, `m${i}.py`), `def f${i}():\n    return ${i}\n`);
      expect((await vlt(['-C', dir, 'coderag', 'init', '-q'])).code).toBe(0);
      const forced = await vlt(['-C', dir, 'coderag', 'sync', '--force', '--json']);
      expect(forced.code, forced.stderr).toBe(0);
      expect(JSON.parse(forced.stdout)).toMatchObject({ filesParsed: 5, filesUnchanged: 0 });
      expect(JSON.parse((await vlt(['-C', dir, 'coderag', 'sync', '--json'])).stdout)).toMatchObject({ filesParsed: 0, filesUnchanged: 5 });
      const found = await vlt(['-C', dir, 'coderag', 'search', 'f3', '--json']);
      expect((JSON.parse(found.stdout) as Array<{ symbol?: string }>)[0]?.symbol).toBe('f3');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
