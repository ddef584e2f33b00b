/**
 * The reference tables of the docs are generated from the code they describe, so they cannot
 * drift: the MCP tool table in docs/mcp.md from the tool registry, and docs/cli-reference.md
 * from the CLI's own help text. `UPDATE_DOCS=1 npx vitest run test/arch/generated-docs.test.ts`
 * writes them; otherwise the test fails when they differ.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { helpTexts } from '../../src/cli/main';
import { ALL_TOOLS } from '../../src/core/tools';

const root = path.resolve(__dirname, '../..');

function examplesOf(schema: z.ZodType): unknown[] {
  return ((schema.meta() as { examples?: unknown[] } | undefined)?.examples ?? []) as unknown[];
}

/** The first sentence of a description, at most about 240 characters. */
function firstSentence(text: string): string {
  const m = /^(.+?\.)(\s|$)/s.exec(text);
  const first = (m?.[1] ?? text).replace(/\s+/g, ' ').trim();
  if (first.length <= 240) return first;
  const cut = first.slice(0, 240);
  return `${cut.slice(0, cut.lastIndexOf(' '))} …`;
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function toolTable(): string {
  const rows = ALL_TOOLS.map((t) => {
    const shape = t.inputSchema.shape as Record<string, z.ZodType>;
    const args = Object.entries(shape).map(([name, s]) => (s.safeParse(undefined).success ? `\`${name}\`` : `**\`${name}\`**`));
    const example = examplesOf(t.inputSchema)[0];
    const writes = t.annotations.readOnlyHint ? '' : ' (not read-only)';
    return `| \`${t.name}\` | ${cell(firstSentence(t.description))}${writes} | ${args.join(', ') || '(none)'} | ${example ? `\`${cell(JSON.stringify(example))}\`` : ''} |`;
  });
  return ['| tool | what it does | arguments | example |', '|---|---|---|---|', ...rows].join('\n');
}

function cliReference(): string {
  const parts = [
    '# CLI reference',
    '',
    'Generated from the help of every command (`vlt <command> --help` prints the same); see',
    '[cli.md](cli.md) for how the commands work together. Regenerate with',
    '`UPDATE_DOCS=1 npx vitest run test/arch/generated-docs.test.ts`.',
    '',
  ];
  for (const [cmd, text] of Object.entries(helpTexts())) parts.push(`## \`vlt${cmd ? ` ${cmd}` : ''}\``, '', '```text', text.trimEnd(), '```', '');
  return `${parts.join('\n').trimEnd()}\n`;
}

/** `file` with the text between its markers replaced by `body`. */
function between(file: string, marker: string, body: string): string {
  const begin = `<!-- generated:${marker} -->`;
  const end = `<!-- /generated:${marker} -->`;
  const i = file.indexOf(begin);
  const j = file.indexOf(end);
  if (i < 0 || j < i) throw new Error(`markers ${begin} … ${end} not found`);
  return `${file.slice(0, i + begin.length)}\n${body}\n${file.slice(j)}`;
}

function check(rel: string, want: string): void {
  const file = path.join(root, rel);
  if (process.env.UPDATE_DOCS) writeFileSync(file, want);
  expect(readFileSync(file, 'utf8'), `${rel} is out of date: run UPDATE_DOCS=1 npx vitest run test/arch/generated-docs.test.ts`).toBe(want);
}

describe('generated docs', () => {
  it('every tool has an example call, and its examples are valid arguments', () => {
    for (const t of ALL_TOOLS) {
      const examples = examplesOf(t.inputSchema);
      expect(examples.length, t.name).toBeGreaterThan(0);
      for (const e of examples) expect(t.inputSchema.safeParse(e).success, `${t.name}: ${JSON.stringify(e)}`).toBe(true);
    }
  });

  it("docs/mcp.md's tool table is the registry's", () => {
    const current = readFileSync(path.join(root, 'docs/mcp.md'), 'utf8');
    check('docs/mcp.md', between(current, 'tools', toolTable()));
  });

  it('docs/cli-reference.md is the help of every command', () => {
    check('docs/cli-reference.md', cliReference());
  });
});
