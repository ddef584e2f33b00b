/**
 * ask_oracle and read_file_range through the built `vlt mcp` (SDK Client over stdio), and
 * `vlt oracle` through the built CLI, on a small TypeScript project with notes: real answers
 * with the right files and lines, a follow-up that refers to an earlier tool call through the
 * shared session, confinement of reads, and the CLI's output modes and errors.
 */
import { cpSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AskOracleResult, ReadFileRangeResult } from '../../src/core/tools/oracle-tools';
import type { OracleAnswer } from '../../src/core/oracle/types';
import { tempDir, vlt } from '../helpers/cli';
import { startFakeOpenAI } from '../helpers/fake-openai';
import { call, connectStdio, ensureBuilt, textOf, type StdioSession } from '../helpers/mcp-client';

const FIXTURE = path.resolve(__dirname, '../fixtures/oracle');

function structured<T>(r: Awaited<ReturnType<typeof call>>): T {
  expect(r.isError, textOf(r)).toBeFalsy();
  return r.structuredContent as T;
}

function lineOf(dir: string, rel: string, needle: string): number {
  const i = readFileSync(path.join(dir, rel), 'utf8').split('\n').findIndex((l) => l.includes(needle));
  if (i < 0) throw new Error(`${needle} not in ${rel}`);
  return i + 1;
}

describe('ask_oracle and read_file_range over MCP', () => {
  let ws: string;
  let s: StdioSession;
  beforeAll(async () => {
    ensureBuilt();
    ws = tempDir();
    cpSync(FIXTURE, ws, { recursive: true });
    s = await connectStdio(['mcp', '--workspace', ws]);
  }, 120_000);
  afterAll(async () => {
    await s?.client.close();
    rmSync(ws, { recursive: true, force: true });
  });

  it('lists ask_oracle first, with a schema and annotations', async () => {
    const { tools } = await s.client.listTools();
    expect(tools[0]?.name).toBe('ask_oracle');
    const ask = tools[0]!;
    expect(Object.keys((ask.inputSchema as { properties: object }).properties)).toEqual(expect.arrayContaining(['question', 'sources', 'explain']));
    expect(ask.annotations?.readOnlyHint).toBe(false);
    expect(tools.map((t) => t.name)).toContain('read_file_range');
  });

  it('answers a question with citations of the right file and line', async () => {
    const r = structured<AskOracleResult>(await call(s, 'ask_oracle', { question: 'Where is verifyToken defined?' }));
    expect(r.type).toBe('definition');
    expect(r.files[0]).toBe('src/auth/tokens.ts');
    const def = lineOf(ws, 'src/auth/tokens.ts', 'export function verifyToken');
    const c = r.citations[0]!;
    expect(c.path).toBe('src/auth/tokens.ts');
    expect(c.line).toBeLessThanOrEqual(def);
    expect(r.answer).toContain(c.citation);
  }, 60_000);

  it('answers a follow-up about an earlier find_references call through the shared session', async () => {
    structured(await call(s, 'find_references', { symbol: 'SessionManager', no_lsp: true }));
    const r = structured<AskOracleResult>(await call(s, 'ask_oracle', { question: 'how is it constructed?' }));
    expect(r.rewritten).toContain('SessionManager');
    expect(r.files).toEqual(expect.arrayContaining(['src/auth/session.ts']));
  }, 60_000);

  it('keeps the answer within max_tokens, dropping the explanation first', async () => {
    const r = structured<AskOracleResult>(await call(s, 'ask_oracle', { question: 'How does authentication work?', explain: true, max_tokens: 500 }));
    expect(JSON.stringify(r).length).toBeLessThanOrEqual(500 * 4 + 200);
    expect(r.truncated).toBe(true);
    expect(r.explain).toBeUndefined();
  }, 60_000);

  it('reads a pasted issue report as a report: not declined for the words the project lacks, and located', async () => {
    const report = 'refreshSession returns a token for an expired session\n\nEnvironment: macOS 14, Node 20.11, pyOpenSSL 23.2\n\ncc @ArifAhmed1995';
    const r = structured<AskOracleResult>(await call(s, 'ask_oracle', { question: report, explain: true }));
    expect(r.type).toBe('report');
    expect(r.noContext).toBe(false);
    expect(r.files.slice(0, 3)).toContain('src/auth/session.ts');
  }, 60_000);

  it('says when there is no context, as a result and not an error', async () => {
    const r = structured<AskOracleResult>(await call(s, 'ask_oracle', { question: 'How does the Kubernetes pod scheduler pick a node?' }));
    expect(r.noContext).toBe(true);
    expect(r.files).toEqual([]);
  }, 60_000);

  it('reads exact line ranges with numbers, and refuses paths outside the workspace', async () => {
    const def = lineOf(ws, 'src/auth/tokens.ts', 'export function verifyToken');
    const r = structured<ReadFileRangeResult>(await call(s, 'read_file_range', { path: 'src/auth/tokens.ts', start_line: def, end_line: def + 1 }));
    expect(r.start_line).toBe(def);
    expect(r.end_line).toBe(def + 1);
    expect(r.text.split('\n')[0]).toBe(`${def}│ export function verifyToken(token: string, secret: string, now: number = Date.now()): TokenClaims | null {`);
    for (const bad of ['../../etc/passwd', '/etc/passwd', 'src/../../outside.txt']) {
      const e = await call(s, 'read_file_range', { path: bad, start_line: 1 });
      expect(e.isError, bad).toBe(true);
      expect(textOf(e)).toMatch(/^PATH_OUTSIDE_WORKSPACE/);
    }
    symlinkSync('/etc', path.join(ws, 'etc-link'));
    const link = await call(s, 'read_file_range', { path: 'etc-link/hostname', start_line: 1 });
    expect(link.isError).toBe(true);
    expect(textOf(link)).toMatch(/PATH_OUTSIDE_WORKSPACE|PATH_NOT_FOUND/);
    const past = await call(s, 'read_file_range', { path: 'src/auth/tokens.ts', start_line: 10_000 });
    expect(textOf(past)).toMatch(/^USAGE: .*past its end/);
  }, 60_000);
});

describe('vlt oracle', () => {
  let ws: string;
  beforeAll(() => {
    ensureBuilt();
    ws = tempDir();
    cpSync(FIXTURE, ws, { recursive: true });
  });
  afterAll(() => rmSync(ws, { recursive: true, force: true }));

  it('builds the index first, then prints the evidence brief with citations', async () => {
    const r = await vlt(['-C', ws, 'oracle', 'How does authentication work?'], { timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/no index in .* yet; building it first/);
    expect(r.stdout).toContain('**Evidence brief**');
    expect(r.stdout).toMatch(/\[src\/auth\/tokens\.ts:\d+-\d+\]/);
  }, 90_000);

  it('prints the whole answer as JSON, with --explain details', async () => {
    const r = await vlt(['-C', ws, 'oracle', '--json', '--explain', 'Where is UserService used?'], { timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    const ans = JSON.parse(r.stdout) as OracleAnswer;
    expect(ans.type).toBe('references');
    expect(ans.files).toContain('src/api/routes.ts');
    expect(ans.explain?.runs.map((x) => x.name)).toContain('navigation');
  }, 90_000);

  it('--explain says which test found no relevant context, and that an answerable question has it', async () => {
    const off = await vlt(['-C', ws, 'oracle', '--explain', 'How does the payroll service calculate overtime pay?'], { timeoutMs: 60_000 });
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).toMatch(/^decision: no relevant context: .+$/m);
    const on = await vlt(['-C', ws, 'oracle', '--explain', 'How are tokens signed?'], { timeoutMs: 60_000 });
    expect(on.code, on.stderr).toBe(0);
    expect(on.stdout).toMatch(/^weight on words the code names things with [\d.]+, \d+ of its words \(no-context below 0\.4 with at most one\)/m);
    expect(on.stdout).toMatch(/^decision: context found$/m);
  }, 90_000);

  it('reads a pasted report from stdin with -', async () => {
    const report = path.join(ws, 'report.txt');
    writeFileSync(report, 'requireAuth rejects every bearer token after the refresh change; verifyToken returns null\n');
    const r = await vlt(['-C', ws, 'oracle', '--json', '-'], { timeoutMs: 60_000, stdinFile: report });
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as OracleAnswer).files.slice(0, 3)).toEqual(expect.arrayContaining(['src/api/routes.ts']));
  }, 90_000);

  it('streams a model\'s cited answer to stdout, and falls back to the brief when the model refuses', async () => {
    const fake = await startFakeOpenAI();
    try {
      fake.script.chat.push((req) => {
        const user = String((req.messages ?? []).filter((m) => m.role === 'user').pop()?.content ?? '');
        const cite = /^### (\[[^\]]+\])/m.exec(user)?.[1] ?? '[none]';
        return { content: `Tokens are signed with HMAC and verified before each protected route ${cite}.` };
      });
      const env = { VLT_LLM_BASE_URL: fake.baseURL, VLT_LLM_API_KEY: 'test-key', VLT_LLM_MODEL: 'fake-model' };
      const r = await vlt(['-C', ws, 'oracle', 'How does authentication work?'], { timeoutMs: 60_000, env });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^Tokens are signed with HMAC and verified before each protected route \[[^\]]+:\d+(-\d+)?\]\.\n/);
      expect(fake.counts.chat).toBe(1);

      fake.fail('chat', '400', 5);
      const bad = await vlt(['-C', ws, 'oracle', 'How does authentication work?'], { timeoutMs: 60_000, env });
      expect(bad.code, bad.stderr).toBe(0);
      expect(bad.stdout).toContain('**Evidence brief** (no language model: the language model failed');
      expect(bad.stderr).toMatch(/language model failed/);
    } finally {
      await fake.close();
    }
  }, 120_000);

  it('exits 2 with a clear message on a bad --source', async () => {
    const r = await vlt(['-C', ws, 'oracle', '--source', 'code,wiki', 'anything'], { timeoutMs: 30_000 });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/expected a comma-separated list of code, notes, threads, git; got wiki/);
  }, 60_000);
});
