/**
 * End to end: the built `vlt` binary's thread, notes and session commands against a temporary
 * workspace, with the fake OpenAI server as the language model where one is needed.
 * Run `npm run build` first.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai';
import { CLI, tempDir, vlt, type CliResult } from '../helpers/cli';

// Each spawn of the CLI costs a Node start-up and the bundle's compilation; a loaded CI box needs room.
vi.setConfig({ testTimeout: 120_000 });

let fake: FakeOpenAI;
let dir: string;

beforeAll(async () => {
  fake = await startFakeOpenAI();
});

afterAll(async () => {
  await fake.close();
});

beforeEach(() => {
  fake.reset();
  dir = tempDir('vlt-memory-cli-');
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

const run = (args: string[], env: Record<string, string> = {}) => vlt(['-C', dir, ...args], { env });
const llmEnv = () => ({ VLT_LLM_BASE_URL: fake.baseURL, VLT_LLM_API_KEY: 'test-key', VLT_LLM_MODEL: 'fake-chat' });

function parse<T>(r: CliResult): T {
  expect(r.stderr, r.stderr).not.toMatch(/^vlt:/m);
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as T;
}

/** Runs the CLI with `input` on stdin. */
function withStdin(args: string[], input: string): Promise<CliResult> {
  const child = spawn(process.execPath, [CLI, '-C', dir, ...args], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdin.end(input);
  return new Promise((resolve) => child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr })));
}

describe('vlt thread', () => {
  it('pushes, reads with an extractive summary, lists and seeks', async () => {
    expect((await run(['thread', 'push', 'auth', 'We decided to use JWT in src/auth/jwt.ts'])).stdout).toBe('pushed #1 to auth\n');
    const pushed = parse<{ seq: number; author: string }>(await run(['thread', 'push', 'auth', 'Refresh tokens later', '--author', 'claude-code', '--json']));
    expect(pushed).toMatchObject({ seq: 2, author: 'claude-code' });
    expect((await withStdin(['thread', 'push', 'auth'], 'From stdin: rotate keys monthly.\n')).code).toBe(0);

    const view = parse<{ entry_count: number; summary: { kind: string; text: string }; entries: Array<{ author: string; text: string }> }>(await run(['thread', 'read', 'auth', '--json']));
    expect(view.entry_count).toBe(3);
    expect(view.summary.kind).toBe('extractive');
    expect(view.summary.text).toContain('src/auth/jwt.ts');
    expect(view.entries.map((e) => e.author)).toEqual(['user', 'claude-code', 'user']);
    expect(view.entries[2]!.text).toBe('From stdin: rotate keys monthly.\n');

    const human = await run(['thread', 'read', 'auth']);
    expect(human.stdout).toMatch(/^# auth {2}\(3 entries, extractive summary/);
    expect(human.stdout).toContain('#2 [');

    expect(parse<{ threads: Array<{ thread: string; entry_count: number }> }>(await run(['thread', 'list', '--json'])).threads).toMatchObject([{ thread: 'auth', entry_count: 3 }]);
    const { hits } = parse<{ hits: Array<{ seq: number }> }>(await run(['thread', 'seek', 'rotate', 'keys', '--json']));
    expect(hits[0]!.seq).toBe(3);
  });

  it('is lazy: ten pushes call no model, a read calls it once, three more pushes are folded in alone', async () => {
    for (let i = 1; i <= 10; i++) expect((await run(['thread', 'push', 'lazy', `entry number ${i}`], llmEnv())).code).toBe(0);
    expect(fake.counts.chat).toBe(0);
    fake.script.chat.push({ content: 'FIRST SUMMARY' }, { content: 'SECOND SUMMARY' });
    expect(parse<{ summary: { text: string; kind: string } }>(await run(['thread', 'read', 'lazy', '--json'], llmEnv())).summary).toMatchObject({ text: 'FIRST SUMMARY', kind: 'llm' });
    expect(fake.counts.chat).toBe(1);
    for (let i = 11; i <= 13; i++) await run(['thread', 'push', 'lazy', `entry number ${i}`], llmEnv());
    expect(fake.counts.chat).toBe(1);
    const second = parse<{ summary: { text: string; newly_summarized: number } }>(await run(['thread', 'read', 'lazy', '--json'], llmEnv()));
    expect(second.summary).toMatchObject({ text: 'SECOND SUMMARY', newly_summarized: 3 });
    expect(fake.counts.chat).toBe(2);
    const prompt = JSON.stringify(fake.calls[1]!.body);
    expect(prompt).toContain('entry number 13');
    expect(prompt).toContain('FIRST SUMMARY');
    expect(prompt).not.toContain('entry number 10');
  }, 120_000);

  it('loses nothing when 10 processes push to one thread at once', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => run(['thread', 'push', 'race', `racer ${i}`])));
    expect(results.map((r) => r.code)).toEqual(Array(10).fill(0));
    const view = parse<{ entries: Array<{ seq: number; text: string }> }>(await run(['thread', 'read', 'race', '--json']));
    expect(view.entries.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(view.entries.map((e) => e.text).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `racer ${i}`).sort());
  }, 120_000);

  it('maps errors to exit codes with one clear line', async () => {
    const missing = await run(['thread', 'read', 'nope']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^vlt: no thread nope/m);
    const badName = await run(['thread', 'push', 'bad name', 'x']);
    expect(badName.code).toBe(2);
    expect(badName.stderr).toMatch(/invalid thread name/);
    expect((await run(['thread', 'push'])).code).toBe(2);
  });
});

describe('vlt notes', () => {
  beforeEach(() => {
    writeFileSync(path.join(dir, 'README.md'), '# Demo\n\nRead [the guide](docs/guide.md).\n');
    mkdirSync(path.join(dir, 'docs'));
    writeFileSync(path.join(dir, 'docs', 'guide.md'), '---\ntitle: Guide\ntags: [howto]\n---\nUse the quokka command.\n');
  });

  it('writes, lists, reads, searches, moves (rewriting links), indexes and deletes', async () => {
    expect((await run(['notes', 'write', 'ideas/cache', '--text', '# Cache\n\nAn LRU, see [[Guide]]. #perf'])).stdout).toBe('created ideas/cache.md\n');
    expect((await withStdin(['notes', 'write', 'ideas/links.md'], '# Links\n\n[[cache]] and [c](cache.md).\n')).code).toBe(0);
    const list = parse<{ notes: Array<{ path: string; read_only: boolean }> }>(await run(['notes', 'list', '--json'])).notes;
    expect(list.map((n) => [n.path, n.read_only])).toEqual([
      ['README.md', true],
      ['docs/guide.md', true],
      ['ideas/cache.md', false],
      ['ideas/links.md', false],
    ]);
    expect((await run(['notes', 'read', 'cache'])).stdout).toBe('# Cache\n\nAn LRU, see [[Guide]]. #perf\n');
    expect(parse<{ hits: Array<{ path: string }> }>(await run(['notes', 'search', 'quokka', '--json'])).hits.map((h) => h.path)).toEqual(['docs/guide.md']);
    expect(parse<{ backlinks: Array<{ path: string }> }>(await run(['notes', 'backlinks', 'Guide', '--json'])).backlinks.map((b) => b.path)).toEqual(['README.md', 'ideas/cache.md']);
    expect(parse<{ tags: Array<{ tag: string }> }>(await run(['notes', 'tags', '--json'])).tags.map((t) => t.tag)).toEqual(['howto', 'perf']);

    const moved = parse<{ to: string; rewritten: string[] }>(await run(['notes', 'mv', 'ideas/cache.md', 'archive/lru.md', '--json']));
    expect(moved).toMatchObject({ to: 'archive/lru.md', rewritten: ['ideas/links.md'] });
    expect(readFileSync(path.join(dir, '.vlt/notes/ideas/links.md'), 'utf8')).toBe('# Links\n\n[[lru]] and [c](../archive/lru.md).\n');

    expect(parse<{ path: string; notes: number }>(await run(['notes', 'index', 'archive', '--json']))).toMatchObject({ path: 'archive/index.md', notes: 1 });
    expect((await run(['notes', 'rm', 'archive/lru.md'])).stdout).toBe('deleted archive/lru.md\n');
    expect((await run(['notes', 'read', 'lru'])).code).toBe(1);
  }, 120_000);

  it('refuses paths outside the vault and writes to the read-only docs', async () => {
    const up = await run(['notes', 'read', '../../etc/passwd']);
    expect(up.code).toBe(1);
    expect(up.stderr).toMatch(/^vlt: note path .* contains ".."/m);
    const abs = await run(['notes', 'write', '/tmp/x.md', '--text', 'x']);
    expect(abs.code).toBe(1);
    expect(abs.stderr).toMatch(/is absolute/);
    const ro = await run(['notes', 'write', 'docs/new.md', '--text', 'x']);
    expect(ro.code).toBe(1);
    expect(ro.stderr).toMatch(/only reads/);
  });

  it('reports invalid frontmatter with file and line, and still finds the note', async () => {
    writeFileSync(path.join(dir, 'docs', 'broken.md'), '---\ntitle: x\n  bad: [\n---\nThe narwhal text.\n');
    const list = await run(['notes', 'list']);
    expect(list.code).toBe(0);
    expect(list.stderr).toMatch(/docs\/broken\.md:\d+: invalid frontmatter/);
    const issues = parse<Array<{ path: string; line: number }>>(await run(['notes', 'issues', '--json']));
    expect(issues[0]).toMatchObject({ path: 'docs/broken.md' });
    expect(issues[0]!.line).toBeGreaterThanOrEqual(2);
    expect(parse<{ hits: Array<{ path: string }> }>(await run(['notes', 'search', 'narwhal', '--json', '-q'])).hits.map((h) => h.path)).toEqual(['docs/broken.md']);
  });

  it('uses [vault] root from vlt.toml as a single writable folder', async () => {
    writeFileSync(path.join(dir, 'vlt.toml'), '[vault]\nroot = "kb"\n');
    expect((await run(['notes', 'write', 'a', '--text', '# A'])).code).toBe(0);
    expect(readFileSync(path.join(dir, 'kb', 'a.md'), 'utf8')).toBe('# A');
    expect(parse<{ notes: Array<{ path: string }> }>(await run(['notes', 'list', '--json'])).notes.map((n) => n.path)).toEqual(['a.md']);
  });
});

describe('vlt --session', () => {
  it('records memory commands in the shared session context', async () => {
    await run(['thread', 'push', 'auth', 'AuthMiddleware checks JWTs', '--session', 'work']);
    await run(['thread', 'seek', 'AuthMiddleware', '--session', 'work']);
    const shown = parse<{ state: { last_exchange: number }; focus: { symbols: string[] }; events: Array<{ kind: string; tool: string }> }>(await run(['session', 'show', '--session', 'work', '--json']));
    expect(shown.state.last_exchange).toBe(2);
    expect(shown.events.map((e) => `${e.kind}:${e.tool}`)).toEqual(['tool_call:thread_push', 'tool_result:thread_push', 'tool_call:thread_seek', 'tool_result:thread_seek']);
    expect(shown.focus.symbols).toContain('AuthMiddleware');
    expect((await run(['session', 'search', 'AuthMiddleware', '--session', 'work'])).stdout).toMatch(/exchange 1 tool_call thread_push/);
    expect((await run(['session', 'show', '--session', 'other'])).stdout).toBe('session other is empty\n');
  });
});
