import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { VltError } from '../../../src/core/errors';
import { Vault } from '../../../src/core/notes/vault';
import type { Logger } from '../../../src/core/ports';

let dir: string;
let outside: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'vlt-vault-'));
  outside = mkdtempSync(path.join(tmpdir(), 'vlt-outside-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

function put(rel: string, text: string, root = dir): void {
  const abs = path.join(root, rel);
  mkdirSync(path.dirname(abs), { recursive: true });
  writeFileSync(abs, text);
}

/** A vault with a single writable root at `<dir>/notes`. */
function notesVault(opts: { staleAfterMs?: number; logger?: Logger; now?: () => number } = {}): Vault {
  return new Vault(dir, { root: 'notes', staleAfterMs: opts.staleAfterMs ?? 0, ...(opts.logger ? { logger: opts.logger } : {}), ...(opts.now ? { now: opts.now } : {}) });
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(VltError);
    return (e as VltError).code;
  }
  return 'ok';
}

/** Every link of every note as `source -> resolved target` (null when broken). */
async function linkMap(v: Vault): Promise<string[]> {
  const out: string[] = [];
  for (const n of await v.list()) {
    const note = await v.read(n.path);
    for (const l of note.links) out.push(`${n.path} -> ${l.resolved}`);
  }
  return out.sort();
}

describe('Vault: default layout', () => {
  beforeEach(() => {
    put('README.md', '# Project\n\nSee [guide](docs/guide.md).\n');
    put('docs/guide.md', '---\ntitle: Guide\n---\nHow to use it. Links [[ideas]].\n');
    put('src/code.md', 'not part of the vault');
  });

  it('reads README and docs/ read-only and writes new notes to .vlt/notes/', async () => {
    const v = new Vault(dir, { staleAfterMs: 0 });
    expect((await v.list()).map((n) => [n.path, n.read_only])).toEqual([
      ['README.md', true],
      ['docs/guide.md', true],
    ]);
    const res = await v.write('ideas', '# Ideas\n\nBack to [[Guide]]... and [[guide]].\n');
    expect(res).toMatchObject({ path: 'ideas.md', created: true });
    expect(existsSync(path.join(dir, '.vlt', 'notes', 'ideas.md'))).toBe(true);
    expect((await v.read('README')).links[0]!.resolved).toBe('docs/guide.md');
    expect((await v.read('docs/guide.md')).links[0]!.resolved).toBe('ideas.md');
    expect((await v.backlinks('guide')).map((b) => b.path)).toEqual(['README.md', 'ideas.md']);
  });

  it('refuses to change the read-only docs', async () => {
    const v = new Vault(dir, { staleAfterMs: 0 });
    expect(await codeOf(v.write('docs/new.md', 'x'))).toBe('READ_ONLY');
    expect(await codeOf(v.write('README.md', 'x'))).toBe('READ_ONLY');
    expect(await codeOf(v.delete('docs/guide.md'))).toBe('READ_ONLY');
    expect(await codeOf(v.move('docs/guide.md', 'guide.md'))).toBe('READ_ONLY');
    expect(readFileSync(path.join(dir, 'docs/guide.md'), 'utf8')).toContain('How to use it');
  });

  it('shadows a copy in .vlt/notes/ that sits under a read-only path', async () => {
    put('.vlt/notes/docs/guide.md', 'shadow');
    const v = new Vault(dir, { staleAfterMs: 0 });
    expect((await v.read('docs/guide.md')).content).toContain('How to use it');
    expect((await v.list()).filter((n) => n.path === 'docs/guide.md')).toHaveLength(1);
  });
});

describe('Vault: confinement', () => {
  it('refuses .., absolute paths and symlinks that leave the vault', async () => {
    put('notes/ok.md', 'fine');
    put('secret.md', 'TOP SECRET', outside);
    symlinkSync(path.join(outside, 'secret.md'), path.join(dir, 'notes', 'evil.md'));
    symlinkSync(outside, path.join(dir, 'notes', 'outdir'));
    const v = notesVault();
    expect((await v.list()).map((n) => n.path)).toEqual(['ok.md']);
    expect(await codeOf(v.read('../secret.md'))).toBe('PATH_OUTSIDE_VAULT');
    expect(await codeOf(v.read(path.join(outside, 'secret.md')))).toBe('PATH_OUTSIDE_VAULT');
    expect(await codeOf(v.read('evil.md'))).toBe('PATH_OUTSIDE_VAULT');
    expect(await codeOf(v.write('evil.md', 'overwrite'))).toBe('PATH_OUTSIDE_VAULT');
    expect(await codeOf(v.write('outdir/planted.md', 'x'))).toBe('PATH_OUTSIDE_VAULT');
    expect(await codeOf(v.write('../escape.md', 'x'))).toBe('PATH_OUTSIDE_VAULT');
    expect(await codeOf(v.write('/tmp/abs.md', 'x'))).toBe('PATH_OUTSIDE_VAULT');
    expect(await codeOf(v.move('ok.md', '../../moved.md'))).toBe('PATH_OUTSIDE_VAULT');
    expect(readFileSync(path.join(outside, 'secret.md'), 'utf8')).toBe('TOP SECRET');
    expect(existsSync(path.join(outside, 'planted.md'))).toBe(false);
    expect(existsSync(path.join(dir, 'notes', 'ok.md'))).toBe(true);
  });

  it('follows a symlink that stays inside the vault', async () => {
    put('notes/real/inside.md', '# Inside\n');
    symlinkSync(path.join(dir, 'notes', 'real'), path.join(dir, 'notes', 'alias'));
    const v = notesVault();
    expect((await v.list()).map((n) => n.path)).toEqual(['alias/inside.md', 'real/inside.md']);
    expect(await codeOf(v.write('alias/other.md', 'ok'))).toBe('ok');
  });

  it('refuses a dangling symlink as a write target', async () => {
    mkdirSync(path.join(dir, 'notes'), { recursive: true });
    symlinkSync(path.join(outside, 'not-yet.md'), path.join(dir, 'notes', 'dangling.md'));
    const v = notesVault();
    expect(await codeOf(v.write('dangling.md', 'x'))).toBe('PATH_OUTSIDE_VAULT');
    expect(existsSync(path.join(outside, 'not-yet.md'))).toBe(false);
  });
});

describe('Vault: parsing problems', () => {
  it('reports invalid frontmatter with file and line, and still finds the note by its text', async () => {
    put('notes/bad.md', '---\ntitle: Bad\ntags: [x, y\nmore: 1\n---\nThe word zeppelin is here.\n');
    const warnings: string[] = [];
    const logger: Logger = { debug() {}, info() {}, warn: (m) => warnings.push(m), error() {} };
    const v = notesVault({ logger });
    const issues = await v.issues();
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ path: 'bad.md', line: 4 });
    expect(warnings.some((w) => w.startsWith('bad.md:4: invalid frontmatter'))).toBe(true);
    const hits = await v.search('zeppelin');
    expect(hits.map((h) => h.path)).toEqual(['bad.md']);
    // Reported once per file version, not on every scan.
    await v.list();
    expect(warnings.filter((w) => w.startsWith('bad.md:4')).length).toBe(1);
  });
});

describe('Vault: duplicate names', () => {
  it('resolves a name by fewest folders, then smallest path, wherever the link is', async () => {
    put('notes/zeta/Setup.md', '# deep setup');
    put('notes/beta/Setup.md', '# beta setup');
    put('notes/alpha/Setup.md', '# alpha setup');
    put('notes/zeta/linker.md', 'Go to [[Setup]] or [[beta/Setup]].');
    const v = notesVault();
    expect((await v.read('Setup')).path).toBe('alpha/Setup.md');
    expect((await v.read('zeta/linker.md')).links.map((l) => l.resolved)).toEqual(['alpha/Setup.md', 'beta/Setup.md']);
    put('notes/Setup.md', '# top setup');
    expect((await v.read('setup')).path).toBe('Setup.md');
  });
});

describe('Vault: search, tags, freshness', () => {
  it('searches title, tags, every field and body, with tag and folder filters', async () => {
    put('notes/npc/eldrin.md', '---\ntitle: Eldrin\ntags: [npc]\nlore: His owl is named Hootenanny.\n---\nA ranger.\n');
    put('notes/places/tower.md', '---\ntitle: Tower\ntags: [place]\n---\nEldrin lives in the tower.\n');
    const v = notesVault();
    expect((await v.search('Hootenanny')).map((h) => h.path)).toEqual(['npc/eldrin.md']);
    const hit = (await v.search('Hootenanny'))[0]!;
    expect(hit.snippet).toContain('Hootenanny');
    expect(hit.line).toBe(4);
    expect((await v.search('eldrin')).map((h) => h.path)).toEqual(['npc/eldrin.md', 'places/tower.md']);
    expect((await v.search('eldrin', { tag: 'place' })).map((h) => h.path)).toEqual(['places/tower.md']);
    expect((await v.search('eldrin', { folder: 'npc' })).map((h) => h.path)).toEqual(['npc/eldrin.md']);
    expect(await v.tags()).toEqual([
      { tag: 'npc', count: 1 },
      { tag: 'place', count: 1 },
    ]);
    expect(await codeOf(v.search('   '))).toBe('USAGE');
  });

  it('trusts its index within the freshness window and re-checks mtimes after it', async () => {
    put('notes/a.md', 'alpha');
    let now = 0;
    const v = notesVault({ staleAfterMs: 1000, now: () => now });
    expect((await v.search('alpha')).length).toBe(1);
    put('notes/b.md', 'brandnew');
    writeFileSync(path.join(dir, 'notes/a.md'), 'changed text');
    utimesSync(path.join(dir, 'notes/a.md'), new Date(), new Date(Date.now() + 5000));
    expect((await v.search('brandnew')).length).toBe(0);
    now = 1500;
    expect((await v.search('brandnew')).map((h) => h.path)).toEqual(['b.md']);
    expect((await v.search('alpha')).length).toBe(0);
    rmSync(path.join(dir, 'notes/b.md'));
    v.refresh();
    expect((await v.search('brandnew')).length).toBe(0);
  });
});

/**
 * A generated vault of `n` notes in five folders, each linking to three others in the three
 * styles (bare wikilink, path wikilink with alias and heading, relative Markdown link).
 */
function generateLinkedVault(n: number): void {
  const folder = (i: number) => `f${i % 5}`;
  const name = (i: number) => `note${String(i).padStart(2, '0')}`;
  for (let i = 0; i < n; i++) {
    const a = (i * 7 + 3) % n;
    const b = (i * 11 + 5) % n;
    const c = (i + 1) % n;
    const rel = path.posix.relative(folder(i), `${folder(c)}/${name(c)}.md`);
    put(
      `notes/${folder(i)}/${name(i)}.md`,
      [
        '---',
        `title: Note ${i}`,
        `tags: [t${i % 4}]`,
        '---',
        `# Note ${i}`,
        '',
        `Links to [[${name(a)}]] and [[${folder(b)}/${name(b)}#Details|see ${b}]].`,
        `Next: [next](${rel}).`,
        '',
        '## Details',
        `Body of note ${i}. \`[[${name(a)}]]\` in code is not a link.`,
      ].join('\n'),
    );
  }
}

describe('Vault: move rewrites every link', () => {
  it('keeps every link of a 50-note vault reaching the same note after a move', async () => {
    generateLinkedVault(50);
    const v = notesVault();
    const target = 'f3/note08.md';
    const inbound = await v.backlinks(target);
    expect(inbound.length).toBeGreaterThanOrEqual(3);
    const before = await linkMap(v);
    expect(before.filter((l) => l.endsWith('-> null'))).toEqual([]);

    const res = await v.move(target, 'archive/deep/renamed.md');
    expect(res.to).toBe('archive/deep/renamed.md');
    expect(res.not_rewritten).toEqual([]);
    expect(res.links_rewritten).toBeGreaterThanOrEqual(inbound.length);

    // A fresh vault reads the files from disk: nothing here comes from the mover's memory.
    const fresh = notesVault();
    const after = await linkMap(fresh);
    const expected = before.map((l) => l.replace(/^f3\/note08\.md ->/, 'archive/deep/renamed.md ->').replace(/-> f3\/note08\.md$/, '-> archive/deep/renamed.md')).sort();
    expect(after).toEqual(expected);
    expect((await fresh.backlinks('archive/deep/renamed.md')).map((b) => b.path).sort()).toEqual(inbound.map((b) => b.path).sort());
    expect(existsSync(path.join(dir, 'notes', target))).toBe(false);
    // Code spans were left alone, and aliases and headings were kept.
    const anyInbound = readFileSync(path.join(dir, 'notes', inbound[0]!.path), 'utf8');
    expect(anyInbound).toMatch(/`\[\[note\d\d\]\]`/);
    expect(readFileSync(path.join(dir, 'notes/archive/deep/renamed.md'), 'utf8')).toMatch(/\[next\]\(\.\.\/\.\.\/f\d\/note\d\d\.md\)/);
  });

  it('rewrites a bare name to a path when the name would now reach another note', async () => {
    put('notes/Setup.md', '# top');
    put('notes/guides/Setup.md', '# guides');
    put('notes/linker.md', 'See [[Setup]], [[Setup|alias]] and [[guides/Setup]].');
    const v = notesVault();
    await v.move('Setup.md', 'old/Setup.md');
    const text = readFileSync(path.join(dir, 'notes/linker.md'), 'utf8');
    expect(text).toBe('See [[old/Setup]], [[old/Setup|alias]] and [[guides/Setup]].');
    expect((await notesVault().read('linker.md')).links.map((l) => l.resolved)).toEqual(['old/Setup.md', 'old/Setup.md', 'guides/Setup.md']);
  });

  it('pins links that the moved note would capture under its new name', async () => {
    put('notes/q/r/Bar.md', '# the real bar');
    put('notes/top/Baz.md', '# baz');
    put('notes/user.md', 'Uses [[Bar]] and [[Baz]].');
    const v = notesVault();
    await v.move('top/Baz.md', 'Bar.md');
    expect(readFileSync(path.join(dir, 'notes/user.md'), 'utf8')).toBe('Uses [[q/r/Bar]] and [[Bar]].');
    expect((await notesVault().read('user.md')).links.map((l) => l.resolved)).toEqual(['q/r/Bar.md', 'Bar.md']);
  });

  it('moves into a folder, refuses to overwrite, and reports read-only linkers', async () => {
    put('notes/a.md', '# a');
    put('notes/b.md', '# b');
    const v = notesVault();
    expect((await v.move('a.md', 'sub/')).to).toBe('sub/a.md');
    expect(await codeOf(v.move('b.md', 'sub/a.md'))).toBe('USAGE');
    expect(await codeOf(v.move('missing.md', 'x.md'))).toBe('NOT_FOUND');

    put('docs/ref.md', 'Points at [[ideas]].');
    const d = new Vault(dir, { staleAfterMs: 0 });
    await d.write('ideas.md', '# ideas');
    const res = await d.move('ideas.md', 'renamed-ideas.md');
    expect(res.not_rewritten).toEqual([{ path: 'docs/ref.md', reason: expect.stringMatching(/read-only/) as unknown as string }]);
    expect(readFileSync(path.join(dir, 'docs/ref.md'), 'utf8')).toBe('Points at [[ideas]].');
  });
});

describe('Vault: folder index and delete', () => {
  it('creates an index page linking every note, regenerates it, and never overwrites a hand-written one', async () => {
    put('notes/arch/cache.md', '---\ntitle: Cache design\nsummary: LRU in front of the store.\n---\nBody.');
    put('notes/arch/store.md', '# Store\n\nSQL.js files.');
    put('notes/arch/sub/deep.md', '# Deep');
    const v = notesVault();
    const res = await v.createIndex('arch');
    expect(res).toEqual({ path: 'arch/index.md', notes: 2, created: true });
    const index = await v.read('arch/index.md');
    expect(index.links.map((l) => l.resolved)).toEqual(['arch/cache.md', 'arch/store.md']);
    expect(index.content).toContain('LRU in front of the store.');
    expect(index.content).toContain('sub/ (1 notes)');
    expect((await v.createIndex('arch')).created).toBe(false);
    put('notes/hand/index.md', '# My own index');
    put('notes/hand/x.md', '# x');
    expect(await codeOf(v.createIndex('hand'))).toBe('USAGE');
    expect(await codeOf(v.createIndex('nothing-here'))).toBe('NOT_FOUND');
  });

  it('deletes by exact path only', async () => {
    put('notes/x/keep.md', '# keep');
    const v = notesVault();
    expect(await codeOf(v.delete('keep'))).toBe('NOT_FOUND');
    await v.delete('x/keep');
    expect(await v.list()).toEqual([]);
  });
});

describe('Vault: neighbour enrichment', () => {
  beforeEach(() => {
    put('notes/tavern.md', '---\ntitle: The Prancing Pony\n---\nA tavern in Bree. Eldrin drinks here. See [[Eldrin]], [[Barliman]] and [[Ghost Note]].\n');
    put('notes/eldrin.md', '---\ntitle: Eldrin\nchronicle: A ranger who guards the north road.\nlore: Secret detail nobody needs here.\n---\nVery long body about Eldrin that must not be included in full.\n');
    put('notes/barliman.md', '# Barliman\n\nThe innkeeper, forgetful but kind.\n\nMore paragraphs that are not the summary.\n');
  });

  it('adds linked notes as summaries after the primary match and drops missing links', async () => {
    const v = notesVault();
    const ctx = await v.context('tavern Bree', { k: 1, budgetTokens: 2000 });
    expect(ctx.sections.map((s) => [s.path, s.role])).toEqual([
      ['tavern.md', 'primary'],
      ['eldrin.md', 'neighbour'],
      ['barliman.md', 'neighbour'],
    ]);
    expect(ctx.sources).toEqual(['tavern.md', 'eldrin.md', 'barliman.md']);
    expect(ctx.dropped_links).toEqual(['Ghost Note']);
    expect(ctx.text).toContain('A ranger who guards the north road.');
    expect(ctx.text).toContain('The innkeeper, forgetful but kind.');
    expect(ctx.text).not.toContain('Very long body about Eldrin');
    expect(ctx.text).not.toContain('More paragraphs');
    expect(ctx.truncated).toBe(false);
  });

  it('trims neighbours first when over budget, then cuts the primary', async () => {
    const v = notesVault();
    const tavern = (await v.context('tavern Bree', { k: 1, budgetTokens: 2000 })).sections[0]!;
    const primaryTokens = Math.ceil((tavern.text.length + 60) / 4);
    const tight = await v.context('tavern Bree', { k: 1, budgetTokens: primaryTokens + 5 });
    expect(tight.sections.map((s) => s.role)).toEqual(['primary']);
    expect(tight.truncated).toBe(true);
    expect(tight.sources).toEqual(['tavern.md']);

    put('notes/tavern.md', `---\ntitle: The Prancing Pony\n---\nA tavern in Bree. ${'word '.repeat(2000)} [[Eldrin]]\n`);
    v.refresh();
    const cut = await v.context('tavern Bree', { k: 1, budgetTokens: 300 });
    expect(cut.sections.map((s) => [s.role, s.truncated ?? false])).toEqual([['primary', true]]);
    expect(cut.tokens).toBeLessThanOrEqual(300);
  });
});
