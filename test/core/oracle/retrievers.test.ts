/**
 * The navigation path's choice among an ambiguous name's candidates: the one declaration beside
 * fields of the same name is evidence; several declarations in different files are not, since
 * nothing chooses between them.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../../src/core/engine';
import { analyzeQuestion } from '../../../src/core/oracle/analyze';
import { NavigationRetriever } from '../../../src/core/oracle/retrievers';
import { nodeWorkspaceFs } from '../../../src/node/fs';

const FILES: Record<string, string> = {
  // One operator, declared by two overload signatures and its implementation…
  'src/ops/timeout.ts': [
    'export function timeout(ms: number): string;',
    'export function timeout(config: { each: number }): string;',
    'export function timeout(arg: number | { each: number }): string {',
    "  return typeof arg === 'number' ? `after ${arg}` : `each ${arg.each}`;",
    '}',
    '',
  ].join('\n'),
  // …and fields of the same name in two config types.
  'src/ajax/types.ts': 'export interface AjaxConfig {\n  timeout: number;\n}\n\nexport interface AjaxRequest {\n  timeout?: number;\n}\n',
  // Two classes of one name in two folders: nothing says which one a question means.
  'src/io/reader.ts': 'export class Reader {\n  read(): string {\n    return "io";\n  }\n}\n',
  'src/text/reader.ts': 'export class Reader {\n  read(): string {\n    return "text";\n  }\n}\n',
};

let dir: string;
let engine: Engine;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'vlt-retrievers-'));
  for (const [rel, text] of Object.entries(FILES)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
  engine = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null }, 'write');
  await engine.index();
});

afterAll(async () => {
  await engine?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function definitions(question: string): Promise<string[]> {
  const results = await new NavigationRetriever({ engine }).retrieve({ question: analyzeQuestion(question), limit: 20, signal: new AbortController().signal });
  return results.filter((r) => r.metadata.definition === true).map((r) => `${r.path}:${r.startLine}`);
}

describe('the navigation path on an ambiguous name', () => {
  it('is ambiguous to navigation: the fields are candidates too', async () => {
    const def = await engine.navigator({}).definition('timeout', { noLsp: true });
    expect(def.ambiguous).toBe(true);
    expect(new Set(def.locations.map((l) => l.path))).toEqual(new Set(['src/ops/timeout.ts', 'src/ajax/types.ts']));
  });

  it('takes the one declaration beside fields of the same name as the definition', async () => {
    const defs = await definitions('When timeout() fires, what does the subscriber receive?');
    expect(defs.length).toBeGreaterThan(0);
    expect(defs.every((d) => d.startsWith('src/ops/timeout.ts:'))).toBe(true);
  });

  it('takes none of several declarations in different files', async () => {
    const def = await engine.navigator({}).definition('Reader', { noLsp: true });
    expect(def.ambiguous).toBe(true);
    expect(await definitions('How does Reader read its input?')).toEqual([]);
  });
});
