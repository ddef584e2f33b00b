/**
 * Reports versus questions (src/core/oracle/report.ts), and what the oracle does with a report:
 * the `locate` path runs, and words the project lacks (the reporter's names, environment,
 * people, log noise) never decline it. The texts are shaped like real issue reports and commit
 * messages: an @mention, an environment list, the reporter's own code, a test runner's output.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../../src/core/engine';
import { analyzeQuestion } from '../../../src/core/oracle/analyze';
import { dedupeSpans, featureRerank, fuseRuns, leadEvidence, pathWeights } from '../../../src/core/oracle/fuse';
import { Oracle } from '../../../src/core/oracle/oracle';
import { classifyReport, isReportFormWord } from '../../../src/core/oracle/report';
import type { RetrieverRun } from '../../../src/core/oracle/types';
import { nodeWorkspaceFs } from '../../../src/node/fs';

describe('classifyReport', () => {
  const kind = (text: string) => classifyReport(text, text.split(/\s+/).length > 60)?.kind;

  it('reads commit messages as change descriptions, whatever their form', () => {
    for (const text of [
      'fix(types): export CJS types from ESM',
      'feat: add `afterResponse` hook',
      'Fix `signal` merging when using both instance and request options',
      'Fixed `res.redirect()` on windows due to `join()` usage. Closes #123',
      "don't call done twice for thrown errors inside parameterized routes",
      '[2609] fix ReDoS vulnerability in email regex',
      'Issue 1144: Fix type annotations for --config option',
      'Revert "Update Webpack + deps, remove now unnecessary polyfills"',
      'sphinx extension fix',
      'Use session cookies when following redirects',
    ]) expect(kind(text), text).toBe('change');
  });

  it('reads issue reports, feature requests and error output', () => {
    expect(kind('The tokens expire early.\n\n### Steps to reproduce\n1. sign in\n2. wait\n\n### Expected behavior\nThe session lasts an hour.')).toBe('issue');
    expect(kind('signToken does not work with a custom clock, it returns a token that is already expired')).toBe('issue');
    expect(kind('It would be nice to have a way to refresh a session without signing in again.')).toBe('feature');
    expect(kind('TypeError: Cannot read properties of undefined (reading "id")\n    at verifyToken (src/auth/tokens.ts:12:5)')).toBe('traceback');
    expect(kind('After the upgrade every request logs\nTypeError: verifyToken is not a function')).toBe('error');
  });

  it('leaves questions alone, however they are worded', () => {
    for (const text of [
      'How does authentication work?',
      'Where is UserService used?',
      'Why did repo.ts change?',
      'Is there a way to connect the Stripe payment gateway so customers can pay by card?',
      'What does the error "token expired" mean?',
      "I'm trying to understand how sessions expire. How does the session store decide?",
    ]) expect(kind(text), text).toBeUndefined();
  });

  it('knows the words that say what kind of report a text is', () => {
    for (const w of ['Fix', 'fixed', 'typo', 'bug', 'linting']) expect(isReportFormWord(w)).toBe(true);
    for (const w of ['token', 'session', 'redirect']) expect(isReportFormWord(w)).toBe(false);
  });

  it('gives the analyzer its type and reason, for --explain', () => {
    const q = analyzeQuestion('Fix Firefox compatibility for the `onDownloadProgress` option');
    expect(q.type).toBe('report');
    expect(q.typeReason).toMatch(/change description/);
    // A capitalised word in a report is the reporter's browser, not a symbol of the project.
    expect(q.symbols).not.toContain('Firefox');
    expect(q.symbols).toContain('onDownloadProgress');
  });
});

describe('the oracle on reports', () => {
  let dir: string;
  let engine: Engine;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'vlt-report-'));
    cpSync(path.resolve(__dirname, '../../fixtures/oracle'), dir, { recursive: true });
    const writer = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null }, 'write');
    await writer.index();
    await writer.close();
    engine = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null }, 'read');
  });
  afterAll(async () => {
    await engine?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const ask = (text: string) => new Oracle({ engine }).ask(text, { noLlm: true, noLog: true, explain: true });

  it('answers a real-looking issue report with a mention, an environment, own code and a log, and runs locate for it', async () => {
    const report = [
      'verifyToken accepts a token signed with another secret',
      '',
      'When I call verifyToken with a token that signToken made under an old secret, it still passes.',
      '',
      '```python',
      'def test_all_even(even_stevens):',
      '    assert is_even(even_stevens)',
      '```',
      '',
      '___________________________ test_rotation ___________________________',
      'E   AssertionError: expected rejection',
      '',
      'Environment: macOS 14.2, MarkupSafe 2.1.3, pyOpenSSL 23.2, PyYAML 6.0, hostname MacBook-Pro',
      '',
      'cc @ArifAhmed1995',
    ].join('\n');
    const ans = await ask(report);
    expect(ans.type).toBe('report');
    expect(ans.noContext, ans.explain?.threshold.why).toBe(false);
    expect(ans.files).toContain('src/auth/tokens.ts');
    expect(ans.explain!.runs.find((r) => r.name === 'locate')?.status).toBe('ok');
  });

  it('answers a commit message that carries words the project never uses', async () => {
    const ans = await ask('Fix refreshSession on Windows with Python3.7 and pyOpenSSL, reported by @someone (closes #42)');
    expect(ans.type).toBe('report');
    expect(ans.noContext, ans.explain?.threshold.why).toBe(false);
    expect(ans.files.slice(0, 3)).toContain('src/auth/session.ts');
  });

  it('answers a report with no specific word from what was found, not with a refusal', async () => {
    const ans = await ask('Small fix to the session');
    expect(ans.noContext, ans.explain?.threshold.why).toBe(false);
  });

  it('declines a report whose specific words the project never holds', async () => {
    const ans = await ask('LaTeX writer: fix babel language mapping for biblatex citations');
    expect(ans.type).toBe('report');
    expect(ans.noContext).toBe(true);
    expect(ans.explain!.threshold.why).toMatch(/none of its specific words occurs in the project/);
  });
});

describe('fusion for reports', () => {
  const run = (name: string, paths: string[]): RetrieverRun => ({
    name,
    family: 'code',
    status: 'ok',
    ms: 1,
    results: paths.map((p, i) => ({ key: `code:${p}:1-9`, source: p.startsWith('test/') ? 'test' : 'code', path: p, startLine: 1, endLine: 9, content: 'x', score: 10 - i, method: name, citation: `[${p}:1-9]`, metadata: {} })),
  });

  it("puts the locate path's files first for a report, and search's first hits for a question in words", () => {
    const runs = [run('code', ['test/a.test.ts', 'docs/a.md', 'src/b.ts']), run('locate', ['src/b.ts', 'src/c.ts'])];
    const report = analyzeQuestion('Fix the retry count when the server answers 503');
    expect(report.type).toBe('report');
    const ranked = leadEvidence(featureRerank(dedupeSpans(fuseRuns(runs, pathWeights(report))), report, 0), report);
    expect(ranked.map((e) => e.result.path).slice(0, 2)).toEqual(['src/b.ts', 'src/c.ts']);
    // A question in words: search's first hits lead, in search's order.
    const question = analyzeQuestion('How are retries counted?');
    const asked = leadEvidence(featureRerank(dedupeSpans(fuseRuns(runs, pathWeights(question))), question, 0), question);
    expect(asked.map((e) => e.result.path).slice(0, 3)).toEqual(['test/a.test.ts', 'docs/a.md', 'src/b.ts']);
    // A statement of behaviour reads as a search: search leads it too, locate keeps its usual weight.
    const statement = analyzeQuestion('parse the retry count out of the server answer');
    expect(statement.report?.kind).toBe('statement');
    expect(pathWeights(statement).locate).toBe(pathWeights(question).locate);
    expect(pathWeights(report).locate).toBeGreaterThan(pathWeights(question).locate ?? 1);
  });
});
