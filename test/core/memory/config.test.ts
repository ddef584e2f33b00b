import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SESSION_BUDGET_TOKENS, defaultConfig, loadConfig, parseConfigText } from '../../../src/core/config';

describe('vlt.toml [vault] and [session]', () => {
  it('defaults to the docs layout and a 16K budget', () => {
    const c = defaultConfig();
    expect(c.vault).toEqual({ root: undefined, confined: false });
    expect(c.session).toEqual({ budgetTokens: DEFAULT_SESSION_BUDGET_TOKENS });
    expect(DEFAULT_SESSION_BUDGET_TOKENS).toBe(16_000);
  });

  it('resolves the vault root against the workspace and reads the budget', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'vlt-cfg-'));
    try {
      writeFileSync(path.join(dir, 'vlt.toml'), '[vault]\nroot = "notes"\n\n[session]\nbudget_tokens = 32000\n');
      const c = await loadConfig(dir, {});
      expect(c.vault.root).toBe(path.join(dir, 'notes'));
      expect(c.session.budgetTokens).toBe(32_000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rejects unknown keys and out-of-range budgets with the key named', () => {
    expect(() => parseConfigText('[vault]\nroots = "x"\n')).toThrow(/unknown key 'vault.roots'/);
    expect(() => parseConfigText('[session]\nbudget_tokens = 10\n')).toThrow(/session\.budget_tokens/);
    expect(() => parseConfigText('[vault]\nroot = ""\n')).toThrow(/vault\.root/);
  });
});
