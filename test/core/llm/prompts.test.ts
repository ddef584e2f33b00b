import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PromptLibrary, placeholdersOf, renderTemplate, type PromptName } from '../../../src/core/llm/prompts';

const PROMPTS = path.resolve(__dirname, '../../../prompts');

describe('renderTemplate', () => {
  it('fills placeholders, with or without spaces, and inserts values verbatim', () => {
    expect(renderTemplate('a {{x}} b {{ y }} c {{x}}', { x: 1, y: '{{x}}' })).toBe('a 1 b {{x}} c 1');
  });

  it('refuses a placeholder without a value', () => {
    expect(() => renderTemplate('hello {{name}}', {}, 'greeting.md')).toThrow(/greeting\.md uses \{\{name\}\}/);
  });

  it('lists placeholders in order of first use', () => {
    expect(placeholdersOf('{{b}} {{a}} {{b}}')).toEqual(['b', 'a']);
  });
});

describe('shipped prompts', () => {
  const lib = new PromptLibrary(PROMPTS);
  // The oracle's templates are rendered through their message builders in test/core/oracle/prompts.test.ts.
  const samples: Partial<Record<PromptName, Record<string, string | number>>> = {
    'thread-summary': {
      thread: 'auth-refactor',
      previous_summary: '- Chose JWT over sessions (stateless API).',
      entries: '#4 [2025-01-02 10:00 claude-code]\nMoved token checks into `AuthMiddleware` in src/auth/middleware.ts.',
      count: 1,
    },
    compression: {
      previous_summary: '(none: this is the first compression)',
      exchanges: '[exchange 1 · question · user]\nWhere is UserService defined?',
      symbols: 'UserService',
      files: 'src/user/service.ts',
      decisions: '- We decided to keep the repository pattern.',
      target_tokens: 3200,
    },
    librarian: { writable: '(the vault root)', read_only: 'README.md, docs/', max_turns: 10 },
  };

  it('use exactly the placeholders the engine fills', () => {
    for (const [name, values] of Object.entries(samples)) {
      expect(placeholdersOf(lib.template(name as PromptName)).sort()).toEqual(Object.keys(values).sort());
    }
  });

  for (const name of Object.keys(samples) as PromptName[]) {
    it(`renders ${name}.md`, () => {
      const text = lib.render(name, samples[name]!);
      expect(text).not.toMatch(/\{\{/);
      expect(text).toMatchSnapshot();
    });
  }

  it('names the missing file when a prompt is absent', () => {
    expect(() => new PromptLibrary('/nonexistent-prompts').template('librarian')).toThrow(/nonexistent-prompts\/librarian\.md/);
  });
});
