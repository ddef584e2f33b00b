/**
 * The oracle's diagnostics path with the real typescript-language-server: a question about what
 * fails in a file it names leads with the type error at its line, the server's code in the
 * evidence, and is never "no relevant context" (the diagnostics vouch for it); a question that names no file, or asks no failure, does not run the path.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/core/engine';
import type { LanguageServers } from '../../src/core/intel/lsp';
import { Oracle } from '../../src/core/oracle/oracle';
import { silentLogger } from '../../src/core/ports';
import { nodeWorkspaceFs } from '../../src/node/fs';
import { createLanguageServers } from '../../src/node/lsp';
import { copyFixture } from '../helpers/cli';

describe('the oracle reads diagnostics for a failure question', () => {
  let ws: { dir: string; cleanup: () => void };
  let engine: Engine;
  let lsp: LanguageServers;
  let oracle: Oracle;

  beforeAll(async () => {
    ws = copyFixture('test/fixtures/lsp/ts-project');
    engine = await Engine.open(ws.dir, { fs: nodeWorkspaceFs, embeddingProvider: null }, 'write');
    await engine.index();
    lsp = createLanguageServers({ root: ws.dir, logger: silentLogger, readyTimeoutMs: 60_000 });
    oracle = new Oracle({ engine, intel: { lsp } });
  }, 120_000);

  afterAll(async () => {
    await lsp?.dispose();
    await engine?.close();
    ws?.cleanup();
  });

  it("leads with the file's type error, cited at its line with the server's code", async () => {
    const ans = await oracle.ask('Why does broken.ts fail to compile?', { noLlm: true, noLog: true, explain: true });
    expect(ans.noContext, ans.explain?.threshold.why).toBe(false);
    const run = ans.explain!.runs.find((r) => r.name === 'diagnostics')!;
    expect(run.status).toBe('ok');
    // The diagnostic and the code search's chunk of the file are one piece of evidence, which leads.
    expect(ans.citations[0]).toMatchObject({ path: 'broken.ts', source: 'lsp' });
    expect(ans.answer).toMatch(/^1\. \[broken\.ts:[\d-]+\].*error 2322 \(typescript\) at line 4: Type 'number' is not assignable to type 'string'/m);
    expect(ans.explain!.threshold.vouched).toBe('the language server reports 1 diagnostic in broken.ts');
    expect(ans.details).toMatch(/the language server's diagnostics \(\d+ found/);
  }, 90_000);

  it('does not run for a question that names no file or asks about no failure', async () => {
    const noFile = await oracle.ask('Why does the label fail to compile?', { noLlm: true, noLog: true, explain: true });
    expect(noFile.explain!.runs.find((r) => r.name === 'diagnostics')).toMatchObject({ status: 'skipped', reason: 'the question names no file' });
    const noFailure = await oracle.ask('What does geometry.ts export?', { noLlm: true, noLog: true, explain: true });
    expect(noFailure.explain!.runs.find((r) => r.name === 'diagnostics')?.status).toBe('skipped');
  }, 90_000);
});

describe('citations checked when the answer is returned', () => {
  it('marks the cited files changed since they were indexed, in the citations and under the answer', async () => {
    const ws = copyFixture('test/fixtures/lsp/ts-project');
    const engine = await Engine.open(ws.dir, { fs: nodeWorkspaceFs, embeddingProvider: null }, 'write');
    try {
      await engine.index();
      const oracle = new Oracle({ engine });
      const before = await oracle.ask('How does add work?', { noLlm: true, noLog: true });
      const math = before.citations.find((c) => c.path === 'math.ts');
      expect(math).toBeDefined();
      expect(math?.changed).toBeUndefined();
      expect(before.answer).not.toMatch(/Changed since it was indexed/);
      // An edit after indexing, with no sync: the answer still cites math.ts, now marked.
      const file = path.join(ws.dir, 'math.ts');
      writeFileSync(file, `// a new first line\n${readFileSync(file, 'utf8')}`);
      const after = await oracle.ask('How does add work?', { noLlm: true, noLog: true });
      expect(after.citations.find((c) => c.path === 'math.ts')?.changed).toBe(true);
      expect(after.citations.filter((c) => c.path !== 'math.ts').every((c) => c.changed === undefined)).toBe(true);
      expect(after.answer).toMatch(/\*Changed since it was indexed, so the cited lines may have moved: \[math\.ts:[\d-]+\]/);
    } finally {
      await engine.close();
      ws.cleanup();
    }
  }, 60_000);
});
