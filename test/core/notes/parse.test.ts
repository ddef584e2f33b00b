import { describe, expect, it } from 'vitest';
import { maskCode, parseNote } from '../../../src/core/notes/parse';
import { compareByResolutionRule, normalizeNotePath, relativeLink, resolveRelative } from '../../../src/core/notes/paths';
import { VltError } from '../../../src/core/errors';

describe('parseNote: frontmatter', () => {
  it('indexes every field and fuses extra fields such as lore into the context', () => {
    const text = ['---', 'title: Eldrin', 'tags: [npc, elf]', 'lore: His pet owl is named Hoot.', 'status: alive', '---', '# Eldrin', '', 'A ranger of the north.', ''].join('\n');
    const n = parseNote(text, 'eldrin');
    expect(n.issues).toEqual([]);
    expect(n.title).toBe('Eldrin');
    expect(n.tags).toEqual(['npc', 'elf']);
    expect(n.frontmatter).toMatchObject({ lore: 'His pet owl is named Hoot.', status: 'alive' });
    expect(n.fieldsText).toBe('lore: His pet owl is named Hoot.\nstatus: alive');
    expect(n.context).toContain('A ranger of the north.');
    expect(n.context).toContain('lore: His pet owl is named Hoot.');
    expect(n.body.startsWith('# Eldrin')).toBe(true);
  });

  it('reports invalid frontmatter with its file line and still indexes the note as text', () => {
    const text = ['---', 'title: Broken', 'tags: [a, b', 'other: 1', '---', 'Body mentions quasar.'].join('\n');
    const n = parseNote(text, 'broken');
    expect(n.issues.length).toBeGreaterThan(0);
    expect(n.issues[0]!.message).toMatch(/invalid frontmatter/);
    // The unclosed flow sequence is detected where the next key starts: file line 4.
    expect(n.issues[0]!.line).toBe(4);
    expect(n.frontmatter).toEqual({});
    expect(n.body).toContain('title: Broken');
    expect(n.body).toContain('quasar');
  });

  it('reports a duplicate key at the line of the duplicate', () => {
    const n = parseNote(['---', 'a: 1', 'b: 2', 'a: 3', '---', 'x'].join('\n'), 'dup');
    expect(n.issues).toHaveLength(1);
    expect(n.issues[0]!.line).toBe(4);
    expect(n.issues[0]!.message).toMatch(/unique/);
  });

  it('reports frontmatter that is not a mapping, and an unclosed block', () => {
    expect(parseNote('---\n- a\n- b\n---\nx', 'list').issues[0]!.message).toMatch(/key: value/);
    const unclosed = parseNote('---\ntitle: x\nno end', 'u');
    expect(unclosed.issues[0]).toMatchObject({ line: 1 });
    expect(unclosed.body).toContain('no end');
  });

  it('handles a BOM and CRLF line ends', () => {
    const n = parseNote('\ufeff---\r\ntitle: Crlf\r\n---\r\nBody\r\n', 'c');
    expect(n.title).toBe('Crlf');
    expect(n.issues).toEqual([]);
  });
});

describe('parseNote: links, tags, title, summary', () => {
  const text = [
    '# Heading Title',
    '',
    'First paragraph talks about [[Setup]] and [[guides/Install|the installer]] and [[Deploy#Rollback]].',
    'Also ![[Diagram]] and [spec](../specs/api%20v2.md#auth) and [site](https://example.com/a.md) and [top](#local).',
    '',
    '```',
    '[[NotALink]] #notatag',
    '```',
    'Inline `[[AlsoNot]]` code. Tags: #alpha #beta/gamma (#delta) but not a#b nor #123.',
    '## Sub heading',
  ].join('\n');
  const n = parseNote(text, 'note');

  it('finds wikilinks with alias, heading and embed, and markdown links to .md files only', () => {
    expect(n.links.map((l) => [l.kind, l.target, l.heading ?? null, l.label ?? null, l.embed, l.line])).toEqual([
      ['wiki', 'Setup', null, null, false, 3],
      ['wiki', 'guides/Install', null, 'the installer', false, 3],
      ['wiki', 'Deploy', 'Rollback', null, false, 3],
      ['wiki', 'Diagram', null, null, true, 4],
      ['markdown', '../specs/api v2.md', 'auth', 'spec', false, 4],
    ]);
  });

  it('records the exact span of each link target for rewriting', () => {
    for (const l of n.links) {
      const raw = text.slice(l.targetStart, l.targetEnd);
      if (l.kind === 'wiki') expect(raw).toBe(l.target);
      else expect(raw).toBe('../specs/api%20v2.md#auth');
    }
  });

  it('collects inline tags outside code and headings', () => {
    expect(n.tags).toEqual(['alpha', 'beta/gamma', 'delta']);
  });

  it('takes the first heading as title and the first paragraph as summary', () => {
    expect(n.title).toBe('Heading Title');
    expect(n.summary).toMatch(/^First paragraph talks about/);
    expect(n.summary).not.toContain('NotALink');
  });

  it('prefers a summary or chronicle field for the summary', () => {
    expect(parseNote('---\nchronicle: The short story.\n---\nLong body.', 'x').summary).toBe('The short story.');
    expect(parseNote('---\nsummary: S.\nchronicle: C.\n---\nLong body.', 'x').summary).toBe('S.');
  });

  it('falls back to the file name for a title', () => {
    expect(parseNote('just text', 'my-note').title).toBe('my-note');
  });

  it('masks code without moving offsets', () => {
    const src = 'a `b` c\n```\nx\n```\nd';
    const m = maskCode(src);
    expect(m).toHaveLength(src.length);
    expect(m.split('\n')).toHaveLength(src.split('\n').length);
    expect(m).not.toContain('b');
    expect(m).not.toContain('x');
    expect(m.endsWith('d')).toBe(true);
  });
});

describe('note paths', () => {
  const code = (f: () => unknown): string => {
    try {
      f();
    } catch (e) {
      return (e as VltError).code;
    }
    return 'ok';
  };

  it('refuses .., absolute paths, hidden segments and control characters', () => {
    expect(code(() => normalizeNotePath('../etc/passwd'))).toBe('PATH_OUTSIDE_VAULT');
    expect(code(() => normalizeNotePath('a/../../b.md'))).toBe('PATH_OUTSIDE_VAULT');
    expect(code(() => normalizeNotePath('a\\..\\..\\b.md'))).toBe('PATH_OUTSIDE_VAULT');
    expect(code(() => normalizeNotePath('/etc/passwd'))).toBe('PATH_OUTSIDE_VAULT');
    expect(code(() => normalizeNotePath('C:\\x.md'))).toBe('PATH_OUTSIDE_VAULT');
    expect(code(() => normalizeNotePath('.git/config'))).toBe('USAGE');
    expect(code(() => normalizeNotePath('a\u0000b'))).toBe('USAGE');
    expect(code(() => normalizeNotePath(''))).toBe('USAGE');
  });

  it('normalises separators and appends .md on request', () => {
    expect(normalizeNotePath('./a//b\\c', { ensureMd: true })).toBe('a/b/c.md');
    expect(normalizeNotePath('a/B.MD', { ensureMd: true })).toBe('a/B.MD');
  });

  it('orders duplicate names by depth, then by path', () => {
    expect(['z/y/Setup.md', 'b/Setup.md', 'a/Setup.md', 'Setup.md'].sort(compareByResolutionRule)).toEqual(['Setup.md', 'a/Setup.md', 'b/Setup.md', 'z/y/Setup.md']);
  });

  it('resolves and builds relative links', () => {
    expect(resolveRelative('a/b', '../c.md')).toBe('a/c.md');
    expect(resolveRelative('a', '../../c.md')).toBeUndefined();
    expect(resolveRelative('a/b', '/top.md')).toBe('top.md');
    expect(relativeLink('a/b', 'a/c.md')).toBe('../c.md');
    expect(relativeLink('', 'x/y.md')).toBe('x/y.md');
  });
});
