/**
 * A vault the user did not place (an untrusted workspace's `[vault] root`, or its default layout)
 * must stay inside the workspace: a root, `docs/` or `README.md` that leads outside, by setting
 * or by symbolic link, makes every vault operation fail with ACCESS_DENIED and touches nothing
 * outside. A vault the user placed (their own config, or a trusted workspace) may be anywhere.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Vault } from '../../../src/core/notes/vault';

let dir: string;
let ws: string;
let outside: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'vlt-vault-confine-'));
  ws = path.join(dir, 'ws');
  outside = path.join(dir, 'outside');
  mkdirSync(ws);
  mkdirSync(outside);
  writeFileSync(path.join(outside, 'private.md'), '# Private\n\nsecret plans\n');
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function refused(v: Vault): Promise<void> {
  await expect(v.list()).rejects.toMatchObject({ code: 'ACCESS_DENIED' });
  await expect(v.read('private.md')).rejects.toMatchObject({ code: 'ACCESS_DENIED' });
  await expect(v.search('secret plans')).rejects.toMatchObject({ code: 'ACCESS_DENIED' });
  await expect(v.write('planted.md', '# planted\n')).rejects.toMatchObject({ code: 'ACCESS_DENIED' });
  await expect(v.delete('private.md')).rejects.toMatchObject({ code: 'ACCESS_DENIED' });
  expect(existsSync(path.join(outside, 'private.md'))).toBe(true);
  expect(existsSync(path.join(outside, 'planted.md'))).toBe(false);
}

describe('a confined vault', () => {
  it('refuses a root outside the workspace', async () => {
    await refused(new Vault(ws, { root: outside, confined: true }));
    await refused(new Vault(ws, { root: '../outside', confined: true }));
  });

  it('refuses a root inside the workspace that is a link leading out of it', async () => {
    symlinkSync(outside, path.join(ws, 'notes'));
    await refused(new Vault(ws, { root: path.join(ws, 'notes'), confined: true }));
  });

  it('refuses the default layout when docs/ or README.md lead out of the workspace', async () => {
    symlinkSync(outside, path.join(ws, 'docs'));
    await expect(new Vault(ws, { confined: true }).list()).rejects.toMatchObject({ code: 'ACCESS_DENIED', message: expect.stringMatching(/vlt trust/) });
    rmSync(path.join(ws, 'docs'));
    symlinkSync(path.join(outside, 'private.md'), path.join(ws, 'README.md'));
    await expect(new Vault(ws, { confined: true }).read('README.md')).rejects.toMatchObject({ code: 'ACCESS_DENIED' });
  });

  it('works inside the workspace, including a root that does not exist yet', async () => {
    const v = new Vault(ws, { root: path.join(ws, 'notes', 'new'), confined: true });
    expect(await v.list()).toEqual([]);
    await v.write('idea.md', '# Idea\n');
    expect((await v.list()).map((n) => n.path)).toEqual(['idea.md']);
    const d = new Vault(ws, { confined: true });
    await d.write('mine.md', '# Mine\n');
    expect(existsSync(path.join(ws, '.vlt', 'notes', 'mine.md'))).toBe(true);
  });
});

describe('a vault the user placed', () => {
  it('may live outside the workspace', async () => {
    const v = new Vault(ws, { root: outside });
    expect((await v.read('private.md')).body).toContain('secret plans');
  });
});
