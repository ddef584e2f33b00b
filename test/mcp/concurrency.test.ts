/**
 * Concurrency: many MCP calls in flight at once against one server must each get the answer
 * the same call gets alone. Ten HTTP sessions on one `vlt serve` (ten spawned stdio servers
 * would test the machine more than the server), and one stdio connection carrying ten
 * interleaved streams of calls.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFixture, vlt } from '../helpers/cli';
import { alive, call, connectHttp, connectStdio, ensureBuilt, startServe, stopServe, textOf, writeBigGo, type McpSession, type Served } from '../helpers/mcp-client';
import { mixedCalls, type GeneratedCall } from '../helpers/mcp-fuzz';

const CLIENTS = 10;
const CALLS_EACH = 50;

/** What a call answered, in the form two answers are compared in. */
interface Answer {
  isError: boolean;
  structured?: unknown;
  text: string;
}

function answerOf(r: CallToolResult): Answer {
  return r.isError ? { isError: true, text: textOf(r) } : { isError: false, structured: r.structuredContent, text: textOf(r) };
}

const keyOf = (c: GeneratedCall) => JSON.stringify([c.name, c.args]);

describe('concurrent MCP calls', () => {
  let ws: { dir: string; cleanup: () => void };
  let served: Served;
  let token: string;
  /** Each stream of calls: one per concurrent client (or worker). */
  const streams = Array.from({ length: CLIENTS }, (_, i) => mixedCalls(31_000 + i, CALLS_EACH));
  /** The answer of each distinct call, made alone on an otherwise idle server. */
  const alone = new Map<string, Answer>();

  beforeAll(async () => {
    ensureBuilt();
    ws = copyFixture('test/fixtures/lang');
    writeBigGo(ws.dir);
    expect((await vlt(['coderag', 'init', ws.dir])).code).toBe(0);
    served = await startServe(['--workspace', ws.dir, '--mcp-port', '0']);
    token = readFileSync(served.token_file!, 'utf8').trim();
    const solo = await connectHttp(served.url, token);
    for (const c of streams.flat()) {
      const k = keyOf(c);
      if (!alone.has(k)) alone.set(k, answerOf(await call(solo, c.name, c.args)));
    }
    await solo.transport.terminateSession();
    await solo.client.close();
  }, 180_000);

  afterAll(async () => {
    if (served) await stopServe(served);
    ws?.cleanup();
  });

  /** Runs stream i on session s, one call after another; returns the calls whose answer differs from the one alone. */
  async function runStream(s: McpSession, i: number): Promise<string[]> {
    const diffs: string[] = [];
    for (const c of streams[i]!) {
      let got: Answer;
      try {
        got = answerOf(await call(s, c.name, c.args));
      } catch (e) {
        diffs.push(`stream ${i}: ${keyOf(c)} threw ${(e as Error).message}`);
        continue;
      }
      const want = alone.get(keyOf(c))!;
      if (!isDeepStrictEqual(got, want)) diffs.push(`stream ${i}: ${keyOf(c)}\n  alone: ${JSON.stringify(want).slice(0, 300)}\n  now:   ${JSON.stringify(got).slice(0, 300)}`);
    }
    return diffs;
  }

  it('the calls are mostly real searches with hits, so that equal answers mean something', () => {
    const answers = [...alone.values()];
    const withHits = answers.filter((a) => !a.isError && Array.isArray((a.structured as { hits?: unknown[] }).hits) && (a.structured as { hits: unknown[] }).hits.length > 0);
    expect(alone.size).toBeGreaterThan(60);
    expect(withHits.length).toBeGreaterThan(alone.size / 2);
    expect(answers.some((a) => a.isError)).toBe(true);
    expect(answers.some((a) => !a.isError && (a.structured as { files?: number }).files !== undefined)).toBe(true);
  });

  it(`${CLIENTS} HTTP sessions × ${CALLS_EACH} mixed calls at once on one vlt serve: no errors, every answer as alone`, async () => {
    const clients = await Promise.all(Array.from({ length: CLIENTS }, () => connectHttp(served.url, token)));
    expect(new Set(clients.map((c) => c.transport.sessionId)).size).toBe(CLIENTS);
    const t0 = performance.now();
    const diffs = (await Promise.all(clients.map((c, i) => runStream(c, i)))).flat();
    const ms = performance.now() - t0;
    expect(diffs).toEqual([]);
    for (const c of clients) expect(c.errors).toEqual([]);
    expect(alive(served.pid)).toBe(true);
    await Promise.all(clients.map(async (c) => {
      await c.transport.terminateSession();
      await c.client.close();
    }));
    console.log(`http: ${CLIENTS * CALLS_EACH} calls from ${CLIENTS} sessions in ${ms.toFixed(0)} ms`);
  }, 120_000);

  it(`one stdio connection with ${CLIENTS} interleaved streams × ${CALLS_EACH} calls: every answer as alone (and as over HTTP)`, async () => {
    const s = await connectStdio(['mcp', '--workspace', ws.dir]);
    try {
      const t0 = performance.now();
      const diffs = (await Promise.all(streams.map((_, i) => runStream(s, i)))).flat();
      const ms = performance.now() - t0;
      expect(diffs).toEqual([]);
      expect(s.errors).toEqual([]);
      expect(alive(s.pid)).toBe(true);
      console.log(`stdio: ${CLIENTS * CALLS_EACH} interleaved calls in ${ms.toFixed(0)} ms`);
    } finally {
      await s.client.close();
    }
  }, 120_000);
});
