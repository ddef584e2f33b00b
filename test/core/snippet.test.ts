/**
 * Search snippets show what matched: the hit's definition, else the lines with the most query
 * terms, not the first lines of a chunk (a licence header, another definition).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/core/engine';
import { hitSnippet, SNIPPET_LINES } from '../../src/core/search/snippet';
import { tokenizeQuery } from '../../src/core/search/tokenizer';
import { nodeWorkspaceFs } from '../../src/node/fs';
import { tempDir } from '../helpers/cli';

const LICENCE = [
  '// Copyright 2010 The Example Authors. All rights reserved.',
  '//',
  '// Licensed under the Apache License, Version 2.0 (the "License");',
  '// you may not use this file except in compliance with the License.',
  '// You may obtain a copy of the License at',
  '//',
  '//     http://www.apache.org/licenses/LICENSE-2.0',
  '//',
  '// Unless required by applicable law or agreed to in writing, software',
  '// distributed under the License is distributed on an "AS IS" BASIS,',
  '// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.',
  '// See the License for the specific language governing permissions and',
  '// limitations under the License.',
];

const CLOCK_GO = [
  ...LICENCE,
  '',
  'package clock',
  '',
  'const (',
  '\tminDuration Duration = -1 << 63',
  '\tmaxDuration Duration = 1<<63 - 1',
  ')',
  '',
  '// A Duration represents the elapsed time between two instants',
  '// as an int64 nanosecond count.',
  'type Duration int64',
  '',
].join('\n');

describe('search hit snippets', () => {
  let dir: string;
  let engine: Engine;
  beforeAll(async () => {
    dir = tempDir();
    mkdirSync(path.join(dir, 'clock'));
    writeFileSync(path.join(dir, 'clock/clock.go'), CLOCK_GO);
    engine = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null, parseWorkers: 1 }, 'write');
    await engine.index();
  });
  afterAll(async () => {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('start at the definition the hit stands for, not at the licence header the chunk starts with', async () => {
    const hit = (await engine.search('Duration', { withSnippetLine: true })).hits.find((h) => h.symbol === 'Duration');
    expect(hit).toBeDefined();
    // The chunk starts with the licence header; the definition is further down.
    expect(hit!.start_line).toBe(1);
    const lines = CLOCK_GO.split('\n');
    expect(hit!.snippet).not.toMatch(/Copyright|License/);
    // The chunk ends soon after the definition, so its doc comment is shown with it.
    expect(hit!.snippet.split('\n').slice(0, 3)).toEqual(['// A Duration represents the elapsed time between two instants', '// as an int64 nanosecond count.', 'type Duration int64']);
    // Numbered: the snippet is the file's lines from snippet_line on.
    expect(hit!.snippet_line).toBe(lines.indexOf('type Duration int64') - 1);
    const n = hit!.snippet.split('\n').length;
    expect(hit!.snippet).toBe(lines.slice(hit!.snippet_line! - 1, hit!.snippet_line! - 1 + n).join('\n'));
  });

  it('keep the `--json` keys unless the line is asked for', async () => {
    const hit = (await engine.search('Duration')).hits[0]!;
    expect(hit).not.toHaveProperty('snippet_line');
  });
});

describe('hitSnippet', () => {
  const text = [...LICENCE, '', 'package retry', '', 'func wait(n int) time.Duration {', '\t// exponential backoff with jitter', '\treturn backoff(n) + jitter()', '}'].join('\n');
  const lines = text.split('\n');

  it('shows the lines with the most query terms when no definition is known', () => {
    const longer = [...lines, ...Array.from({ length: 15 }, (_, i) => `// step ${i}`)];
    const s = hitSnippet({ text: longer.join('\n'), startLine: 101 }, { terms: tokenizeQuery('exponential backoff jitter') });
    expect(s.text.split('\n')[0]).toBe('\t// exponential backoff with jitter');
    expect(s.line).toBe(101 + lines.indexOf('\t// exponential backoff with jitter'));
    expect(s.text.split('\n')).toHaveLength(SNIPPET_LINES);
    expect(s.text).toBe(longer.slice(s.line - 101, s.line - 101 + SNIPPET_LINES).join('\n'));
    // Near the chunk's end the snippet is shorter rather than start with lines above the match.
    const end = hitSnippet({ text, startLine: 101 }, { terms: tokenizeQuery('exponential backoff jitter') });
    expect(end.text).toBe(['\t// exponential backoff with jitter', '\treturn backoff(n) + jitter()', '}'].join('\n'));
  });

  it('prefers the window holding more distinct terms over one repeating a single term', () => {
    const body = ['// backoff', '// backoff', '// backoff', ...Array.from({ length: 20 }, (_, i) => `x${i} := ${i}`), '// backoff and jitter', 'y := 1', ...Array.from({ length: 20 }, (_, i) => `z${i} := ${i}`)];
    const s = hitSnippet({ text: body.join('\n'), startLine: 1 }, { terms: tokenizeQuery('backoff jitter') });
    expect(s.line).toBe(24);
  });

  it('starts at the definition line when given, and keeps the first lines when nothing matches or the chunk is short', () => {
    const body = [...LICENCE, '', 'package retry', '', '// wait sleeps.', 'func wait() {', ...Array.from({ length: 12 }, (_, i) => `\tstep(${i})`), '}'];
    const def = body.indexOf('func wait() {') + 1;
    expect(hitSnippet({ text: body.join('\n'), startLine: 1 }, { line: def, terms: [] })).toEqual({ line: def, text: body.slice(def - 1, def - 1 + SNIPPET_LINES).join('\n') });
    expect(hitSnippet({ text, startLine: 1 }, { terms: tokenizeQuery('nothing here matches') })).toEqual({ line: 1, text: lines.slice(0, SNIPPET_LINES).join('\n') });
    expect(hitSnippet({ text: 'a\nb', startLine: 7 }, { line: 8, terms: ['b'] })).toEqual({ line: 7, text: 'a\nb' });
    // A definition line outside the chunk (a stale symbol table) is ignored.
    expect(hitSnippet({ text, startLine: 1 }, { line: 500, terms: [] }).line).toBe(1);
  });
});
