/**
 * Memory tied to code: a thread entry or a note that names a file or a definition may describe
 * code that has changed since it was written. This finds, for one text and the time it was
 * written, the files it names that were modified after that time, so that thread_read,
 * thread_seek, read_note, search_notes and the oracle's evidence can say "the code this talks
 * about changed since".
 *
 * What counts as naming: a workspace path the index holds (`src/auth/session.ts`, in a link, a
 * code span or plain text), and a definition written as code (`` `SessionStore.refresh` ``, or a
 * bare `Type.member` whose first part is capitalised) that exactly one file defines. Ambiguous
 * names are left out rather than guessed. A file's time is the later of what the index saw and
 * what the disk says now.
 */
import * as path from 'node:path';
import type { Engine } from '../engine';
import type { WorkspaceFs } from '../ports';

export interface CodeChange {
  path: string;
  /** When the file was last modified (ISO 8601). */
  changed_at: string;
}

/** Texts longer than this are read up to it: a note's code references sit in its text, not at its end. */
const MAX_TEXT_CHARS = 50_000;
/** The most files one text is checked against. */
const MAX_FILES = 20;
/** Clock slack between the machine that wrote the text and the file system. */
const SLACK_MS = 1000;

const PATH_TOKEN = /(?:^|[\s`'"(\[<])((?:\.\/)?(?:[\w@.-]+\/)+[\w@.-]+\.[A-Za-z0-9]{1,10})(?::\d+)?(?=$|[\s`'")\]>,;:.!?])/gm;
const CODE_SPAN = /`([A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$][\w$]*)*)(?:\(\))?`/g;
const DOTTED = /(?:^|[^\w$.])([A-Z][\w$]*(?:\.|::)[A-Za-z_$][\w$]*)(?=$|[^\w$])/g;

/** The indexed files `text` names, in the order it names them (at most {@link MAX_FILES}). */
export function filesNamedIn(engine: Engine, text: string): string[] {
  const body = text.slice(0, MAX_TEXT_CHARS);
  const out = new Set<string>();
  const add = (p: string | undefined) => {
    if (p && out.size < MAX_FILES) out.add(p);
  };
  for (const m of body.matchAll(PATH_TOKEN)) {
    const rel = path.posix.normalize(m[1]!.replace(/^\.\//, ''));
    if (engine.store.getFile(rel)) add(rel);
  }
  const names = new Set<string>();
  for (const m of body.matchAll(CODE_SPAN)) names.add(m[1]!);
  for (const m of body.matchAll(DOTTED)) names.add(m[1]!);
  for (const name of names) add(definingFile(engine, name));
  return [...out];
}

/** The one file that defines `name` (`Name`, `Type.member`, `Type::member`, `path#Name`), or undefined when none or several do. */
function definingFile(engine: Engine, name: string): string | undefined {
  const qualified = name.replace(/::|#/g, '.');
  const last = qualified.split('.').pop()!;
  // A bare lowercase word in a code span (`true`, `id`) names too much to be a reference.
  if (!qualified.includes('.') && !/[A-Z_]/.test(last.slice(1)) && !/^[A-Z]/.test(last)) return undefined;
  const defs = engine.store.findSymbols(last, { limit: 50 }).filter((s) => !qualified.includes('.') || s.qualifiedName === qualified || s.qualifiedName.endsWith(`.${qualified}`));
  const files = new Set(defs.map((s) => s.path));
  return files.size === 1 ? [...files][0] : undefined;
}

/** The files `text` names that were modified after `writtenAtMs`, newest change first. */
export async function codeChangedSince(engine: Engine, fs: WorkspaceFs | undefined, text: string, writtenAtMs: number): Promise<CodeChange[]> {
  const changed: Array<{ path: string; at: number }> = [];
  for (const rel of filesNamedIn(engine, text)) {
    let at = engine.store.getFile(rel)?.mtimeMs ?? 0;
    if (fs) {
      try {
        at = Math.max(at, (await fs.stat(path.join(engine.root, rel))).mtimeMs);
      } catch {
        // Gone from disk: the index's time stands (the next sync removes it).
      }
    }
    if (at > writtenAtMs + SLACK_MS) changed.push({ path: rel, at });
  }
  return changed.sort((a, b) => b.at - a.at).map((c) => ({ path: c.path, changed_at: new Date(c.at).toISOString() }));
}
