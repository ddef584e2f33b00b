/**
 * Prompt templates: Markdown files in `prompts/` with `{{placeholder}}` slots. Prompts are data,
 * reviewed as diffs of that folder, never strings buried in code.
 *
 * The engine does not guess where the folder is (it differs between the sources, the CLI
 * bundle and the VS Code extension); each host passes it in.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { VltError } from '../errors';

/** The prompts the engine ships; each is `prompts/<name>.md`. */
export type PromptName = 'thread-summary' | 'compression' | 'librarian' | 'oracle-system' | 'oracle-synthesis' | 'oracle-no-context' | 'oracle-rewrite' | 'oracle-agent' | 'oracle-rerank';

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/**
 * Fills every `{{name}}` of `template` from `values`. A placeholder without a value is an
 * error, not an empty string: a prompt that silently lost its input produces confident
 * nonsense. Values are inserted as they are, never re-scanned for placeholders.
 */
export function renderTemplate(template: string, values: Readonly<Record<string, string | number>>, name = 'template'): string {
  return template.replace(PLACEHOLDER, (_, key: string) => {
    const v = values[key];
    if (v === undefined) throw new VltError('INTERNAL', `prompt ${name} uses {{${key}}} but no value was given for it`);
    return String(v);
  });
}

/** The placeholder names a template uses, in order of first use. */
export function placeholdersOf(template: string): string[] {
  return [...new Set([...template.matchAll(PLACEHOLDER)].map((m) => m[1] ?? ''))];
}

/** Loads prompt templates from one folder, once each, and renders them. */
export class PromptLibrary {
  private readonly cache = new Map<string, string>();

  /** @param dir the folder holding `<name>.md` templates (the package's `prompts/`). */
  constructor(readonly dir: string) {}

  /** The raw template text; throws INTERNAL naming the file when it is missing. */
  template(name: PromptName): string {
    let text = this.cache.get(name);
    if (text === undefined) {
      const file = path.join(this.dir, `${name}.md`);
      try {
        text = readFileSync(file, 'utf8');
      } catch (e) {
        throw new VltError('INTERNAL', `prompt template ${file} cannot be read: ${(e as NodeJS.ErrnoException).code ?? String(e)}`, { path: file }, { cause: e });
      }
      this.cache.set(name, text);
    }
    return text;
  }

  render(name: PromptName, values: Readonly<Record<string, string | number>>): string {
    return renderTemplate(this.template(name), values, `${name}.md`).trim();
  }
}
