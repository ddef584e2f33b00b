/**
 * The extension's manifest against the code: every core agent tool is declared as a
 * language-model tool with the definition's own description and input schema (regenerate with
 * UPDATE_MANIFEST=1), every command the code registers is contributed and vice versa, and the
 * extension says how it behaves in Restricted Mode.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonSchemaOf } from '../src/core/llm/tool-schema';
import { allTools } from '../src/core/tools';

const root = path.resolve(__dirname, '..');
const pkgPath = path.join(root, 'package.json');

function expectedTools() {
  return allTools({ memory: true }).map((t) => ({
    name: `vlt_${t.name}`,
    toolReferenceName: t.name,
    displayName: `Oracle: ${t.title}`,
    modelDescription: t.description,
    userDescription: t.title,
    canBeReferencedInPrompt: true,
    icon: '$(search)',
    tags: ['vlt', 'codebase'],
    inputSchema: jsonSchemaOf(t.inputSchema),
  }));
}

describe('the extension manifest', () => {
  it('declares every core tool as a language-model tool, from its one definition', () => {
    const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as { contributes: { languageModelTools?: unknown[] } };
    const want = expectedTools();
    if (process.env.UPDATE_MANIFEST) {
      pkg.contributes.languageModelTools = want;
      writeFileSync(pkgPath, `${JSON.stringify(pkg, null, 2)}\n`);
    }
    expect(pkg.contributes.languageModelTools).toEqual(want);
  });

  it('contributes exactly the commands the extension registers, and declares limited support for untrusted workspaces', () => {
    const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as { contributes: { commands: Array<{ command: string }> }; capabilities?: { untrustedWorkspaces?: { supported?: unknown } }; activationEvents: string[] };
    const source = readFileSync(path.join(root, 'src/vscode/commands.ts'), 'utf8');
    const registered = [...source.matchAll(/'(vlt\.[A-Za-z]+)': \(\)/g)].map((m) => m[1]).sort();
    expect(pkg.contributes.commands.map((c) => c.command).sort()).toEqual(registered);
    expect(pkg.capabilities?.untrustedWorkspaces?.supported).toBe('limited');
    expect(pkg.activationEvents).not.toContain('onStartupFinished');
    expect(pkg.activationEvents.some((e) => e.startsWith('workspaceContains:'))).toBe(true);
  });
});
