/**
 * The oracle end to end on a small TypeScript project with notes: analysis, retrieval,
 * fusion, context, the extractive brief, the honest "no context" reply, the language-model
 * path against the scripted fake server (streaming, 429, exhausted 500s), slow and failing
 * paths, follow-up questions through the shared session, and freshness.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/core/config';
import { Engine } from '../../../src/core/engine';
import { OpenAIChatModel } from '../../../src/core/llm/openai-chat';
import { PromptLibrary } from '../../../src/core/llm/prompts';
import { Memory } from '../../../src/core/memory';
import { silentLogger } from '../../../src/core/ports';
import { Oracle } from '../../../src/core/oracle/oracle';
import type { AgentTool } from '../../../src/core/oracle/agent';
import type { OracleEvent, Retriever } from '../../../src/core/oracle/types';
import { nodeWorkspaceFs } from '../../../src/node/fs';
import { startFakeOpenAI, type FakeChatRequest, type FakeOpenAI } from '../../helpers/fake-openai';

const FIXTURE = path.resolve(__dirname, '../../fixtures/oracle');
const PROMPTS = path.resolve(__dirname, '../../../prompts');

let dir: string;
let engine: Engine;
let memory: Memory;
let fake: FakeOpenAI;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'vlt-oracle-'));
  cpSync(FIXTURE, dir, { recursive: true });
  const writer = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null }, 'write');
  await writer.index();
  await writer.close();
  engine = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null }, 'read');
  memory = await Memory.open(dir, { config: await loadConfig(dir, {}), logger: silentLogger });
  fake = await startFakeOpenAI();
});

afterAll(async () => {
  await memory?.close();
  await engine?.close();
  await fake?.close();
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => fake.reset());

function lineOf(rel: string, needle: string): number {
  const lines = readFileSync(path.join(dir, rel), 'utf8').split('\n');
  const i = lines.findIndex((l) => l.includes(needle));
  if (i < 0) throw new Error(`${needle} not in ${rel}`);
  return i + 1;
}

function extractive(extra: Partial<ConstructorParameters<typeof Oracle>[0]> = {}): Oracle {
  return new Oracle({ engine, fs: nodeWorkspaceFs, memory, ...extra });
}

function withModel(extra: Partial<ConstructorParameters<typeof Oracle>[0]> = {}): Oracle {
  const chat = new OpenAIChatModel({ baseUrl: fake.baseURL, model: 'fake-model', maxRetries: 2, timeoutMs: 5000 });
  return new Oracle({ engine, fs: nodeWorkspaceFs, memory, chat, prompts: new PromptLibrary(PROMPTS), ...extra });
}

/** The evidence blocks' citations the model was shown, from the last user message. */
function citationsShown(req: FakeChatRequest): string[] {
  const text = String((req.messages ?? []).filter((m) => m.role === 'user').pop()?.content ?? '');
  return [...text.matchAll(/\[((?:src|test)\/[^\]\s]+:\d+(?:-\d+)?)\]/g)].map((m) => `[${m[1]}]`);
}

describe('the extractive oracle (no language model)', () => {
  it('answers a definition question with the definition first, cited at its lines', async () => {
    const ans = await extractive().ask('Where is verifyToken defined?', { noLog: true });
    expect(ans.type).toBe('definition');
    expect(ans.mode).toBe('extractive');
    expect(ans.noContext).toBe(false);
    const def = lineOf('src/auth/tokens.ts', 'export function verifyToken');
    const first = ans.citations[0]!;
    expect(first.path).toBe('src/auth/tokens.ts');
    expect(first.line).toBeLessThanOrEqual(def);
    expect(ans.answer).toContain(first.citation);
    expect(ans.answer).toContain('export function verifyToken');
    expect(ans.files[0]).toBe('src/auth/tokens.ts');
  });

  it('answers "where is X used" with the places that use it', async () => {
    const ans = await extractive().ask('Where is UserService used?', { noLog: true });
    expect(ans.type).toBe('references');
    expect(ans.files).toContain('src/api/routes.ts');
    expect(ans.files).toContain('src/users/service.ts');
    const use = lineOf('src/api/routes.ts', 'new UserService()');
    expect(ans.citations.some((c) => c.path === 'src/api/routes.ts' && c.line !== undefined && Math.abs(c.line - use) <= 3)).toBe(true);
  });

  it('answers a conceptual question from code and notes, with the repository-map slice', async () => {
    const ans = await extractive().ask('How does authentication work?', { noLog: true, explain: true });
    expect(ans.type).toBe('conceptual');
    expect(ans.files.slice(0, 4)).toEqual(expect.arrayContaining(['src/auth/tokens.ts']));
    expect(ans.citations.some((c) => c.citation === '[note:docs/auth.md]')).toBe(true);
    // How it was found is apart from the answer: the repository map and what was searched.
    expect(ans.answer).not.toContain('**Where this sits**');
    expect(ans.details).toContain('**Where this sits**');
    expect(ans.details).toMatch(/src\/auth\/tokens\.ts:\n(?:\s+L\d+ .*\n)*?\s+L\d+ export function signToken/);
    expect(ans.details).toMatch(/^Searched: code search \(\d+ found/m);
    // --explain shows every path, the fusion and the context with token counts.
    const e = ans.explain!;
    expect(e.runs.map((r) => r.name)).toEqual(['code', 'scoped', 'navigation', 'tests', 'locate', 'diagnostics', 'structure', 'notes', 'threads', 'graph', 'git']);
    expect(e.runs.find((r) => r.name === 'locate')).toMatchObject({ status: 'skipped', reason: 'only for reports (an issue, a change description, a traceback or an error message)' });
    expect(e.runs.find((r) => r.name === 'scoped')!.reason).toBe('no directory named by the question or its words');
    expect(e.runs.find((r) => r.name === 'tests')!.status).toBe('skipped');
    expect(e.ranked.length).toBeGreaterThan(2);
    expect(e.context.tokens).toBeLessThanOrEqual(e.context.budget);
    expect(e.context.items.every((i) => i.tokens > 0)).toBe(true);
  });

  it('boosts tests for a behavioural question', async () => {
    const ans = await extractive().ask('What should happen when a token has expired?', { noLog: true, explain: true });
    expect(ans.type).toBe('behavioural');
    expect(ans.files.slice(0, 3)).toContain('test/tokens.test.ts');
    const testHit = ans.explain!.ranked.find((r) => r.citation.startsWith('[test/tokens.test.ts'));
    expect(testHit?.features.testForBehaviour).toBeGreaterThan(0);
  });

  it('says honestly when the project has nothing on the question, and lists what it searched', async () => {
    const ans = await extractive().ask('How does the Kubernetes pod scheduler pick a node?', { noLog: true, explain: true });
    expect(ans.noContext).toBe(true);
    expect(ans.citations).toEqual([]);
    expect(ans.files).toEqual([]);
    expect(ans.answer.toLowerCase()).toContain('no relevant project context');
    expect(ans.answer).toContain('code');
    // "Kubernetes" is named like code but nothing in the project mentions it.
    expect(ans.explain!.threshold.unknownSymbols).toEqual(['Kubernetes']);
  });

  it('also says so for a lower-case subject the project never mentions', async () => {
    const ans = await extractive().ask('How are user passwords hashed with bcrypt and argon2 before they are stored?', { noLog: true, explain: true });
    expect(ans.noContext).toBe(true);
    const t = ans.explain!.threshold;
    expect(t.unknownSymbols).toEqual([]);
    expect(t.absent).toBeGreaterThanOrEqual(t.maxAbsent);
  });

  it('searches inside the directory a word of the question names', async () => {
    const ans = await extractive().ask('How do users get looked up by email?', { noLog: true, explain: true });
    const scoped = ans.explain!.runs.find((r) => r.name === 'scoped')!;
    expect(scoped.status).toBe('ok');
    expect(scoped.results.every((r) => r.citation.startsWith('[src/users/'))).toBe(true);
    expect(scoped.results.length).toBeGreaterThan(0);
    expect(ans.files[0]).toBe('src/users/service.ts');
  });

  it('answers about a directory the question names from the files in it', async () => {
    const ans = await extractive().ask('What does the auth module consist of?', { noLog: true, explain: true });
    expect(ans.type).toBe('structural');
    expect(ans.files.slice(0, 2).sort()).toEqual(['src/auth/session.ts', 'src/auth/tokens.ts']);
    // The file with more definitions first: tokens.ts has three, session.ts two.
    expect(ans.explain!.runs.find((r) => r.name === 'structure')!.results.map((r) => r.citation)).toEqual([
      `[src/auth/tokens.ts:${lineOf('src/auth/tokens.ts', 'export interface TokenClaims')}]`,
      `[src/auth/session.ts:${lineOf('src/auth/session.ts', 'export const SESSION_TTL_MS')}]`,
    ]);
  });

  it('ranks the files a pasted stack trace implicates', async () => {
    const report = [
      'After upgrading, every request to /login returns 500. Log:',
      'TypeError: Cannot read properties of undefined (reading \'split\')',
      `    at verifyToken (src/auth/tokens.ts:${lineOf('src/auth/tokens.ts', "token.split('.')")}:23)`,
      `    at requireAuth (src/api/routes.ts:${lineOf('src/api/routes.ts', 'if (!verifyToken')}:8)`,
      '    at Server.handle (node:internal/http:120:5)',
      'It started after the session refactor. Users report being logged out immediately and the middleware rejects every token, even fresh ones issued a second before.',
      'Steps: log in, call any protected route with the bearer token from the login response, observe the 500.',
    ].join('\n');
    const ans = await extractive().ask(report, { noLog: true, explain: true });
    expect(ans.noContext).toBe(false);
    expect(ans.files.slice(0, 3)).toEqual(expect.arrayContaining(['src/auth/tokens.ts', 'src/api/routes.ts']));
    // The locate path read the report as one: the two frames' files first, each shown from the
    // frame's line (two lines before it, for context).
    const located = ans.explain!.runs.find((r) => r.name === 'locate')!;
    expect(located.status).toBe('ok');
    const firstTwo = located.results.slice(0, 2).map((r) => r.citation);
    expect(firstTwo.map((c) => c.replace(/:.*/, '')).sort()).toEqual(['[src/api/routes.ts', '[src/auth/tokens.ts']);
    expect(firstTwo.find((c) => c.startsWith('[src/auth/tokens.ts:'))).toMatch(new RegExp(`^\\[src/auth/tokens\\.ts:${lineOf('src/auth/tokens.ts', "token.split('.')") - 2}-`));
  });

  it('consults only the sources asked for', async () => {
    const ans = await extractive().ask('How does authentication work?', { noLog: true, sources: ['notes'], explain: true });
    expect(ans.citations.length).toBeGreaterThan(0);
    expect(ans.citations.every((c) => c.source === 'note')).toBe(true);
    expect(ans.explain!.runs.find((r) => r.name === 'code')!.reason).toBe('source not selected');
  });

  it('skips a path that hangs, reports it, and still answers within the path timeout', async () => {
    const hang: Retriever = { name: 'slow', family: 'code', applies: () => true, retrieve: () => new Promise(() => {}) };
    const broken: Retriever = { name: 'broken', family: 'code', applies: () => true, retrieve: () => Promise.reject(new Error('disk on fire')) };
    const oracle = extractive({ pathTimeoutMs: 300, paths: (d) => [...d, hang, broken] });
    const t0 = Date.now();
    const ans = await oracle.ask('Where is verifyToken defined?', { noLog: true, explain: true });
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(ans.files[0]).toBe('src/auth/tokens.ts');
    const runs = ans.explain!.runs;
    expect(runs.find((r) => r.name === 'slow')).toMatchObject({ status: 'timeout' });
    expect(runs.find((r) => r.name === 'broken')).toMatchObject({ status: 'failed' });
    expect(runs.find((r) => r.name === 'broken')!.reason).toContain('disk on fire');
  });

  it('rejects an empty question as a usage error', async () => {
    await expect(extractive().ask('   ')).rejects.toMatchObject({ code: 'USAGE' });
  });

  it('re-reads evidence from a file changed since indexing and marks it stale', async () => {
    const file = path.join(dir, 'src/users/service.ts');
    const before = readFileSync(file, 'utf8');
    try {
      writeFileSync(file, before.replace('Looks users up and checks their passwords.', 'Looks users up (EDITED LIVE) and checks their passwords.'));
      const ans = await extractive().ask('Where is UserService defined?', { noLog: true });
      expect(ans.answer).toContain('EDITED LIVE');
      expect(ans.answer).toContain('changed since it was indexed');
    } finally {
      writeFileSync(file, before);
    }
  });
});

describe('the oracle with a language model (scripted fake server)', () => {
  it('streams a cited answer built from the assembled context', async () => {
    let shown: string[] = [];
    fake.script.chat.push((req) => {
      shown = citationsShown(req);
      return { content: `Tokens are HMAC-signed and checked for expiry by verifyToken ${shown[0]}.` };
    });
    const events: OracleEvent[] = [];
    const ans = await withModel().ask('How does authentication work?', { noLog: true, onEvent: (e) => events.push(e) });
    expect(fake.counts.chat).toBe(1);
    expect(ans.degraded).toBeUndefined();
    expect(ans.mode).toBe('llm');
    expect(shown.length).toBeGreaterThan(0);
    expect(ans.answer).toContain(shown[0]!);
    expect(ans.citations.map((c) => c.citation)).toContain(shown[0]!);
    const text = events.filter((e): e is Extract<OracleEvent, { type: 'text' }> => e.type === 'text').map((e) => e.text).join('');
    expect(text).toBe(ans.answer);
    // The request streamed, as the chat sidebar needs.
    expect((fake.calls.find((c) => c.endpoint === 'chat')!.body as FakeChatRequest).stream).toBe(true);
  });

  it('retries a 429 and answers', async () => {
    fake.fail('chat', '429', 1);
    fake.script.chat.push((req) => ({ content: `It is verified in ${citationsShown(req)[0]}.` }));
    const ans = await withModel().ask('How does authentication work?', { noLog: true });
    expect(fake.counts.chat).toBe(2);
    expect(ans.mode).toBe('llm');
  });

  it('degrades to the extractive brief, clearly marked, when the model keeps failing', async () => {
    fake.fail('chat', '500', 10);
    const ans = await withModel().ask('How does authentication work?', { noLog: true });
    expect(fake.counts.chat).toBe(3);
    expect(ans.mode).toBe('extractive');
    expect(ans.degraded).toMatch(/language model failed/);
    expect(ans.answer).toContain('Evidence brief');
    expect(ans.files).toContain('src/auth/tokens.ts');
  });

  it('calls no model when there is no context', async () => {
    const ans = await withModel().ask('How does the Kubernetes pod scheduler pick a node?', { noLog: true });
    expect(ans.noContext).toBe(true);
    expect(fake.counts.chat).toBe(0);
  });

  it('shows the evidence instead of an answer that cites nothing from it', async () => {
    fake.script.chat.push({ content: 'Authentication uses OAuth [src/oauth/provider.ts:10].' });
    const ans = await withModel().ask('How does authentication work?', { noLog: true });
    expect(ans.mode).toBe('extractive');
    expect(ans.degraded).toContain('without citing');
    expect(ans.answer).not.toContain('src/oauth/provider.ts');
  });

  // A near miss: every word is the project's (refreshSession, expiresAt), so the lexical tests
  // find context; only a reader of the evidence sees that only a still-valid token is refreshed.
  const NEAR_MISS = 'How are expired tokens refreshed by the session?';

  it('finds context for a near miss without a model (the lexical tests cannot tell)', async () => {
    const ans = await extractive().ask(NEAR_MISS, { noLog: true });
    expect(ans.noContext).toBe(false);
  });

  it('answers no context, in the model\'s words, when the model finds nothing in the evidence that answers', async () => {
    const said = 'Refreshing an expired token is not found in the provided context.';
    fake.script.chat.push({ content: said });
    const ans = await withModel().ask(NEAR_MISS, { noLog: true, explain: true });
    expect(fake.counts.chat).toBe(1);
    expect(ans).toMatchObject({ noContext: true, mode: 'llm', model: 'fake-model', answer: said, citations: [], files: [] });
    expect(ans.degraded).toBeUndefined();
    expect(ans.explain!.threshold.why).toBe('fake-model found nothing in the evidence that answers it');
  });

  it('keeps an answer that cites evidence while saying part of the question was not found', async () => {
    fake.script.chat.push((req) => ({ content: `Only a still-valid token is refreshed ${citationsShown(req)[0]}; refreshing an expired one is not found in the provided context.` }));
    const ans = await withModel().ask(NEAR_MISS, { noLog: true });
    expect(ans.noContext).toBe(false);
    expect(ans.citations.length).toBe(1);
  });

  it('shows the evidence, not a no-context answer, when the model says "not found" but cites what is not there', async () => {
    fake.script.chat.push({ content: 'Refreshing an expired token is not found in the provided context, see [src/auth/expired.ts:3].' });
    const ans = await withModel().ask(NEAR_MISS, { noLog: true });
    expect(ans.noContext).toBe(false);
    expect(ans.mode).toBe('extractive');
    expect(ans.degraded).toContain('without citing');
  });
});

describe('reranking by the model (llm_rerank)', () => {
  it('reorders the head of the ranking by the model\'s ratings, then answers', async () => {
    let rated = '';
    fake.script.chat.push(
      (req) => {
        const text = String(req.messages?.[0]?.content ?? '');
        const docs = [...text.matchAll(/^\[(\d+)\]\n(\[[^\]]+\])/gm)].map((m) => ({ index: Number(m[1]), citation: m[2]! }));
        const pick = docs.find((d) => d.citation.startsWith('[src/users/'))!;
        rated = pick.citation;
        return { content: JSON.stringify(docs.map((d) => ({ index: d.index, score: d === pick ? 10 : 1 }))) };
      },
      (req) => ({ content: `Passwords are checked by UserService ${citationsShown(req)[0]}.` }),
    );
    const ans = await withModel({ llmRerank: true }).ask('How are passwords checked at login?', { noLog: true, explain: true });
    expect(fake.counts.chat).toBe(2);
    expect(rated).toMatch(/^\[src\/users\/service\.ts:/);
    expect(ans.explain!.ranked[0]!.citation).toBe(rated);
    expect(ans.explain!.ranked[0]!.features.rerank).toBe(10);
    expect(ans.mode).toBe('llm');
  });

  it('keeps the feature ranking when the ratings cannot be read', async () => {
    fake.script.chat.push({ content: 'I think the second one.' }, (req) => ({ content: `See ${citationsShown(req)[0]}.` }));
    const plain = await extractive().ask('How are passwords checked at login?', { noLog: true, explain: true });
    const ans = await withModel({ llmRerank: true }).ask('How are passwords checked at login?', { noLog: true, explain: true });
    expect(ans.explain!.ranked.map((r) => r.citation)).toEqual(plain.explain!.ranked.map((r) => r.citation));
    expect(ans.mode).toBe('llm');
  });
});

describe('agent mode', () => {
  it('lets the model call tools, answers citing what they found, and keeps the calls in the session', async () => {
    const calls: unknown[] = [];
    const readRange: AgentTool = {
      name: 'read_file_range',
      description: 'Read lines of a workspace file.',
      parameters: { type: 'object', properties: { path: { type: 'string' }, start_line: { type: 'number' } }, required: ['path', 'start_line'] },
      run: (args) => {
        calls.push(args);
        return Promise.resolve(JSON.stringify({ path: 'src/users/service.ts', start_line: 20, end_line: 22, text: 'checkPassword(user: User, password: string): boolean {' }));
      },
    };
    fake.script.chat.push(
      { tool_calls: [{ function: { name: 'read_file_range', arguments: { path: 'src/users/service.ts', start_line: 20 } } }] },
      { content: 'The password is compared with its hash in UserService.checkPassword [src/users/service.ts:20].' },
    );
    const oracle = withModel({ agentTools: () => [readRange] });
    const ans = await oracle.ask('How are passwords checked at login?', { agent: true, session: 'agent-s', noLog: false });
    expect(ans.mode).toBe('agent');
    expect(calls).toEqual([{ path: 'src/users/service.ts', start_line: 20 }]);
    expect(ans.citations.map((c) => c.citation)).toEqual(['[src/users/service.ts:20]']);
    const events = await memory.session('agent-s').events();
    const call = events.find((e) => e.kind === 'tool_call');
    expect(call?.tool).toBe('read_file_range');
    expect(call?.author).toBe('oracle-agent');
    expect(events.find((e) => e.kind === 'tool_result')?.text).toContain('checkPassword');
  });

  it('answers no context when the model, with its tools, finds nothing that answers', async () => {
    fake.script.chat.push({ content: 'Refreshing an expired token is Not Found in the provided\ncontext.' });
    const ans = await withModel({ agentTools: () => [] }).ask('How are expired tokens refreshed by the session?', { agent: true, noLog: true });
    expect(ans).toMatchObject({ noContext: true, mode: 'agent', citations: [] });
    expect(ans.degraded).toBeUndefined();
  });
});

describe('the oracle in a conversation', () => {
  it('logs each exchange to the dated thread and the session, and carries the focus into a follow-up', async () => {
    const oracle = extractive();
    const first = await oracle.ask('Where is verifyToken defined?', { session: 'conv', author: 'agent-x@1' });
    expect(first.sources.length).toBeGreaterThan(0);
    const threads = await memory.threads.list();
    const dated = threads.find((t) => t.thread.startsWith('oracle-session-'));
    expect(dated).toBeDefined();
    const view = await memory.threads.read(dated!.thread);
    const entries = view.entries.map((e) => `${e.author}: ${e.text}`).join('\n');
    expect(entries).toContain('agent-x@1: Where is verifyToken defined?');
    expect(entries).toContain('Sources: [src/auth/tokens.ts:');

    const follow = await oracle.ask('what calls it?', { session: 'conv', explain: true });
    expect(follow.rewritten).toBeDefined();
    expect(follow.rewritten).toContain('what calls it?');
    expect(follow.rewritten).toContain('verifyToken');
    expect(follow.files).toEqual(expect.arrayContaining(['src/api/routes.ts']));
  });
});
