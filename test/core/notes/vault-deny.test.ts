/**
 * The `[security] deny` list holds in the notes vault as it does for `read_file_range`: a note
 * whose name matches (`id_rsa.md`), or that is a symbolic link to a file that matches
 * (`cert.md` → `prod.pem`), is not read, listed, searched or put into context, and a read of it
 * says ACCESS_DENIED rather than pretending it is missing.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_DENY_PATTERNS } from '../../../src/core/config';
import { Vault } from '../../../src/core/notes/vault';

const KEY = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n';
let ws: string;

beforeEach(() => {
  ws = mkdtempSync(path.join(tmpdir(), 'vlt-vault-deny-'));
  mkdirSync(path.join(ws, 'notes', 'keys'), { recursive: true });
  writeFileSync(path.join(ws, 'prod.pem'), KEY);
  symlinkSync(path.join('..', 'prod.pem'), path.join(ws, 'notes', 'cert.md'));
  writeFileSync(path.join(ws, 'notes', 'id_rsa.md'), KEY);
  // A folder link: the note's own path is harmless, the file it reaches is not.
  mkdirSync(path.join(ws, 'secrets'));
  writeFileSync(path.join(ws, 'secrets', 'server.key'), KEY);
  symlinkSync(path.join('..', '..', 'secrets', 'server.key'), path.join(ws, 'notes', 'keys', 'server.md'));
  writeFileSync(path.join(ws, 'notes', 'deploy.md'), '# Deploy\n\nThe deploy uses a PRIVATE KEY kept outside the repository.\n');
});
afterEach(() => rmSync(ws, { recursive: true, force: true }));

// The vault is the whole workspace, so the links stay inside it (a link out of it is refused anyway).
const vault = () => new Vault(ws, { root: '.', deny: DEFAULT_DENY_PATTERNS });

describe('the deny list in the vault', () => {
  it.each(['notes/cert.md', 'cert', 'notes/id_rsa.md', 'id_rsa', 'notes/keys/server.md'])('refuses to read %s with ACCESS_DENIED', async (ref) => {
    const err = await vault().read(ref).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'ACCESS_DENIED' });
    expect(String((err as Error).message)).toMatch(/deny list/);
    expect(String((err as Error).message)).not.toContain('BEGIN');
  });

  it('leaves denied notes out of the list, search and context', async () => {
    const v = vault();
    expect((await v.list()).map((n) => n.path)).toEqual(['notes/deploy.md']);
    const hits = await v.search('PRIVATE KEY');
    expect(hits.map((h) => h.path)).toEqual(['notes/deploy.md']);
    expect(JSON.stringify(hits)).not.toContain('BEGIN PRIVATE KEY');
    const ctx = await v.context('PRIVATE KEY');
    expect(JSON.stringify(ctx)).not.toContain('BEGIN PRIVATE KEY');
  });

  it('reads them when nothing denies them', async () => {
    const v = new Vault(ws, { root: '.', deny: [] });
    expect((await v.read('notes/cert.md')).content).toContain('BEGIN PRIVATE KEY');
  });
});
