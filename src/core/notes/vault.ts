/**
 * The notes vault: Markdown notes under one or more roots, indexed in memory (frontmatter,
 * tags, links, BM25F) and kept fresh by file modification times.
 *
 * Layout. Without `[vault] root` the vault is the workspace's documentation, read-only (its
 * `README.md` and `docs/`, under those same paths), plus `.vlt/notes/`, writable, whose notes
 * appear at the top level (`.vlt/notes/ideas.md` is the note `ideas.md`). With `[vault] root`
 * it is that one folder, writable. A path that falls under a read-only part (`docs/…`,
 * `README.md`) always means that part: a file in `.vlt/notes/docs/` is shadowed and ignored.
 *
 * Confinement. Every path a caller gives is checked (no absolute paths, no `..`), and every
 * file touched is resolved through symbolic links and must stay under its root's real path.
 *
 * Secrets. A file the `[security] deny` list names (`*.pem`, `id_rsa*`, `.env*`) is never read,
 * indexed or handed out, whether its own path matches or the path a symbolic link leads to: a
 * read of it is ACCESS_DENIED, and search and context never see it.
 *
 * Names. `[[Name]]` and a read by name resolve by file name, ignoring case; duplicates follow
 * {@link compareByResolutionRule}: fewest folders first, then the smallest path.
 *
 * Freshness. The index is built once per process and refreshed from file mtimes at most every
 * `staleAfterMs` (one second by default), so a search costs no file system walk; changes made
 * through this class are visible at once.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { VltError } from '../errors';
import { silentLogger, type Logger } from '../ports';
import { writeFileAtomic } from '../store/atomic';
import { ensurePrivateDir } from '../store/state-dir';
import { deniedBy } from '../discovery';
import { Bm25Index } from '../memory/bm25';
import { clip } from '../memory/extract';
import { tokenizePath } from '../search/tokenizer';
import { assembleNoteContext, type NoteContext, type NoteContextOptions } from './enrich';
import { isSymlink, mountOutside, outsideVault as outside, safeRealpath, vaultMounts, type VaultMount } from './mounts';
import { parseNote, type NoteIssue, type NoteLink, type ParsedNote } from './parse';
import { compareByResolutionRule, normalizeNotePath, noteFolder, noteName, relativeLink, resolveRelative, resolveWikiIn, wikiTargetFor } from './paths';

/** Notes larger than this are skipped: a multi-megabyte "note" is a data file. */
export const NOTE_MAX_BYTES = 2 * 1024 * 1024;

/** Default freshness window of the in-memory index. */
export const DEFAULT_STALE_AFTER_MS = 1000;

/** Folders never walked: dependencies and tool folders are not notes. */
const SKIP_DIRS = new Set(['node_modules']);

/** Marker in a generated folder index, so that a regeneration never overwrites a hand-written page. */
const INDEX_MARKER = 'generated_by';
const INDEX_MARKER_VALUE = 'vlt notes index';

/** Weights of the note fields in BM25F: a title hit says more than a body hit. */
const FIELD_WEIGHTS = { title: 3, tags: 2.5, path: 1.5, fields: 1.5, body: 1 } as const;

export { vaultMounts, type VaultMount } from './mounts';

export interface VaultOptions {
  /** `[vault] root` resolved to an absolute path, or undefined for the default layout. */
  root?: string | undefined;
  /**
   * The user did not choose where the vault is (an untrusted workspace's vlt.toml or default
   * layout): every operation is refused (ACCESS_DENIED) while a root leads outside the workspace.
   */
  confined?: boolean;
  logger?: Logger;
  /** The `[security] deny` patterns: notes that match, or whose link target matches, are never read. */
  deny?: readonly string[];
  /** How long the in-memory index is trusted before files are checked again; 0 checks on every call. */
  staleAfterMs?: number;
  /** Time source for the freshness window. */
  now?: () => number;
}

export interface NoteInfo {
  path: string;
  title: string;
  tags: string[];
  /** ISO time of the last modification. */
  modified: string;
  bytes: number;
  read_only: boolean;
}

export interface NoteLinkInfo {
  kind: 'wiki' | 'markdown';
  /** As written in the note. */
  target: string;
  heading?: string;
  line: number;
  /** The note it reaches, or null when it reaches none (a broken link). */
  resolved: string | null;
}

export interface Note extends NoteInfo {
  frontmatter: Record<string, unknown>;
  /** Text after the frontmatter. */
  body: string;
  /** The whole file. */
  content: string;
  /** Body and every extra frontmatter field (such as `lore`) in one text. */
  context: string;
  summary: string;
  links: NoteLinkInfo[];
  /** Problems found while parsing (invalid frontmatter), with their file lines. */
  issues: NoteIssue[];
}

export interface NoteSearchHit {
  path: string;
  title: string;
  score: number;
  /** 1-based line of the snippet. */
  line: number;
  snippet: string;
  tags: string[];
}

export interface Backlink {
  /** The note that links. */
  path: string;
  title: string;
  line: number;
  /** The line holding the link, trimmed. */
  context: string;
}

export interface VaultIssue extends NoteIssue {
  path: string;
}

export interface MoveResult {
  from: string;
  to: string;
  /** Notes whose text changed because a link in them was rewritten (the moved note included, under its new path). */
  rewritten: string[];
  links_rewritten: number;
  /** Notes that link to the moved note but could not be changed, with why. */
  not_rewritten: Array<{ path: string; reason: string }>;
}

export interface IndexPageResult {
  path: string;
  notes: number;
  created: boolean;
}

interface NoteRecord {
  path: string;
  abs: string;
  mount: VaultMount;
  mtimeMs: number;
  size: number;
  text: string;
  parsed: ParsedNote;
}

export class Vault {
  readonly mounts: readonly VaultMount[];
  private readonly logger: Logger;
  private readonly staleAfterMs: number;
  private readonly now: () => number;
  private readonly notes = new Map<string, NoteRecord>();
  /** Lower-cased note name → paths, kept sorted by the resolution rule. */
  private readonly byName = new Map<string, string[]>();
  private readonly index = new Bm25Index<string>(FIELD_WEIGHTS);
  /** Target path → links reaching it; rebuilt lazily after any change. */
  private inbound: Map<string, Array<{ source: string; link: NoteLink }>> | undefined;
  private lastScan = Number.NEGATIVE_INFINITY;
  /** Issues already logged, by path and mtime, so that a bad note is reported once per version. */
  private readonly reported = new Set<string>();
  private readonly scanIssues: VaultIssue[] = [];
  /** Notes the deny list keeps out, by logical path, with the pattern that matched. */
  private readonly denied = new Map<string, string>();
  private readonly deny: readonly string[];

  private readonly workspaceRoot: string;
  private readonly confined: boolean;

  constructor(workspaceRoot: string, opts: VaultOptions = {}) {
    this.workspaceRoot = path.resolve(workspaceRoot);
    this.confined = opts.confined === true;
    this.deny = opts.deny ?? [];
    this.mounts = vaultMounts(workspaceRoot, opts.root);
    this.logger = opts.logger ?? silentLogger;
    this.staleAfterMs = Math.max(0, opts.staleAfterMs ?? DEFAULT_STALE_AFTER_MS);
    this.now = opts.now ?? (() => performance.now());
  }

  /** The folder new notes go to, or undefined when the vault is read-only. */
  get writableRoot(): string | undefined {
    return this.mounts.find((m) => m.writable && m.kind === 'dir')?.abs;
  }

  // -----------------------------------------------------------------------------------------
  // Queries
  // -----------------------------------------------------------------------------------------

  /** Notes under `folder` (all notes when omitted), sorted by path. */
  async list(opts: { folder?: string } = {}): Promise<NoteInfo[]> {
    this.ensureFresh();
    const folder = opts.folder === undefined ? '' : normalizeNotePath(opts.folder, { allowEmpty: true });
    const prefix = folder ? `${folder}/` : '';
    return [...this.notes.values()].filter((r) => r.path.startsWith(prefix)).sort((a, b) => (a.path < b.path ? -1 : 1)).map((r) => this.info(r));
  }

  /**
   * One note by path (`guides/setup.md`, `.md` optional) or by name (`setup`, resolved by
   * {@link compareByResolutionRule}). NOT_FOUND when neither matches.
   */
  async read(ref: string): Promise<Note> {
    this.ensureFresh();
    const rec = this.lookup(ref);
    const p = rec.parsed;
    return {
      ...this.info(rec),
      frontmatter: p.frontmatter,
      body: p.body,
      content: rec.text,
      context: p.context,
      summary: p.summary,
      links: p.links.map((l) => ({
        kind: l.kind,
        target: l.target,
        ...(l.heading ? { heading: l.heading } : {}),
        line: l.line,
        resolved: this.resolveLink(rec.path, l) ?? null,
      })),
      issues: p.issues,
    };
  }

  /** BM25F over title, tags, path, frontmatter fields and body; optional tag and folder filters. */
  async search(query: string, opts: { k?: number; tag?: string; folder?: string } = {}): Promise<NoteSearchHit[]> {
    if (!query.trim()) throw new VltError('USAGE', 'the search query is empty');
    this.ensureFresh();
    const k = Math.max(1, Math.min(opts.k ?? 10, 100));
    const tag = opts.tag?.replace(/^#/, '').toLowerCase();
    const folder = opts.folder === undefined ? '' : normalizeNotePath(opts.folder, { allowEmpty: true });
    const prefix = folder ? `${folder}/` : '';
    const filter = tag || prefix ? (p: string) => p.startsWith(prefix) && (!tag || (this.notes.get(p)?.parsed.tags.includes(tag) ?? false)) : undefined;
    // Ties are broken by path so that equal scores come back in a stable order.
    const hits = this.index.search(query, k * 2, filter).sort((a, b) => b.score - a.score || compareByResolutionRule(a.key, b.key)).slice(0, k);
    const terms = this.index.matchedTerms(query);
    return hits.map(({ key, score }) => {
      const rec = this.notes.get(key)!;
      const { line, snippet } = bestLine(rec, terms);
      return { path: key, title: rec.parsed.title, score: Math.round(score * 1e4) / 1e4, line, snippet, tags: rec.parsed.tags };
    });
  }

  /** Notes that link to the note `ref` names: one entry per linking line. */
  async backlinks(ref: string): Promise<Backlink[]> {
    this.ensureFresh();
    const target = this.lookup(ref).path;
    const out: Backlink[] = [];
    const seen = new Set<string>();
    for (const { source, link } of this.inboundLinks().get(target) ?? []) {
      const rec = this.notes.get(source);
      // Two links on one line are one place to look at.
      if (!rec || seen.has(`${source}:${link.line}`)) continue;
      seen.add(`${source}:${link.line}`);
      out.push({ path: source, title: rec.parsed.title, line: link.line, context: clip((rec.text.split('\n')[link.line - 1] ?? '').trim(), 240) });
    }
    return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line));
  }

  /** Every tag with the number of notes carrying it, most used first. */
  async tags(): Promise<Array<{ tag: string; count: number }>> {
    this.ensureFresh();
    const counts = new Map<string, number>();
    for (const r of this.notes.values()) for (const t of r.parsed.tags) counts.set(t, (counts.get(t) ?? 0) + 1);
    return [...counts].map(([tag, count]) => ({ tag, count })).sort((a, b) => b.count - a.count || (a.tag < b.tag ? -1 : 1));
  }

  /** Problems found in notes (invalid frontmatter, unreadable or oversized files), each with file and line. */
  async issues(): Promise<VaultIssue[]> {
    this.ensureFresh();
    const out: VaultIssue[] = [...this.scanIssues];
    for (const r of this.notes.values()) for (const i of r.parsed.issues) out.push({ path: r.path, ...i });
    return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line));
  }

  /**
   * Context for a question: the best matching notes in full (body and extra fields), then the
   * summaries of the notes they link to. See {@link assembleNoteContext} for the budget rule.
   */
  async context(query: string, opts: NoteContextOptions & { k?: number } = {}): Promise<NoteContext> {
    const hits = await this.search(query, { k: opts.k ?? 5 });
    return this.contextFor(hits.map((h) => h.path), opts);
  }

  /** {@link context} for notes chosen by the caller, in the caller's order. */
  async contextFor(paths: readonly string[], opts: NoteContextOptions = {}): Promise<NoteContext> {
    this.ensureFresh();
    const primaries = paths.map((p) => this.lookup(p));
    const primarySet = new Set(primaries.map((r) => r.path));
    const neighbours: NoteRecord[] = [];
    const seen = new Set<string>();
    const dropped = new Set<string>();
    for (const rec of primaries) {
      for (const link of rec.parsed.links) {
        const to = this.resolveLink(rec.path, link);
        if (to === undefined) {
          dropped.add(link.target);
          continue;
        }
        if (primarySet.has(to) || seen.has(to)) continue;
        seen.add(to);
        const n = this.notes.get(to);
        if (n) neighbours.push(n);
      }
    }
    return assembleNoteContext(
      primaries.map((r) => ({ path: r.path, title: r.parsed.title, text: r.parsed.context })),
      neighbours.map((r) => ({ path: r.path, title: r.parsed.title, text: r.parsed.summary })),
      [...dropped],
      opts,
    );
  }

  // -----------------------------------------------------------------------------------------
  // Changes
  // -----------------------------------------------------------------------------------------

  /** Creates or replaces a note with `content` (frontmatter included). `.md` is added when missing. */
  async write(ref: string, content: string): Promise<{ path: string; created: boolean; issues: NoteIssue[] }> {
    if (typeof content !== 'string') throw new VltError('USAGE', 'note content must be text');
    if (Buffer.byteLength(content, 'utf8') > NOTE_MAX_BYTES) throw new VltError('USAGE', `note content is larger than ${NOTE_MAX_BYTES / 1024 / 1024} MiB`);
    this.ensureFresh();
    const notePath = normalizeNotePath(ref, { ensureMd: true });
    const mount = this.writableMountFor(notePath);
    const abs = this.confine(mount, notePath);
    const created = !this.notes.has(notePath) && !fs.existsSync(abs);
    await this.writeFile(mount, abs, content);
    const rec = this.ingest(notePath, mount, abs);
    return { path: notePath, created, issues: rec?.parsed.issues ?? [] };
  }

  /** Deletes a note, by exact path. */
  async delete(ref: string): Promise<{ path: string }> {
    this.ensureFresh();
    const notePath = normalizeNotePath(ref, { ensureMd: true });
    const rec = this.notes.get(notePath);
    if (!rec) throw new VltError('NOT_FOUND', `no note ${notePath}; deleting needs the exact path (see list_notes)`);
    this.writableMountFor(notePath);
    const abs = this.confine(rec.mount, notePath);
    try {
      await fs.promises.unlink(abs);
    } catch (e) {
      throw new VltError('IO', `cannot delete ${notePath}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`, { path: notePath }, { cause: e });
    }
    this.forget(notePath);
    return { path: notePath };
  }

  /**
   * Moves (renames) a note and rewrites every link that reached it, so that each link still
   * reaches the same note: wikilinks keep the bare name when it still resolves to the moved
   * note and get its path otherwise; Markdown links get the new relative path. The moved
   * note's own relative links are adjusted to its new folder, and links that would silently
   * start to reach the moved note under its new name are pinned to their old target's path.
   * The new file is written first and the old one removed last, so a crash in between leaves
   * a duplicate, never a loss.
   */
  async move(fromRef: string, toRef: string): Promise<MoveResult> {
    this.ensureFresh();
    const from = normalizeNotePath(fromRef, { ensureMd: true });
    const src = this.notes.get(from);
    if (!src) throw new VltError('NOT_FOUND', `no note ${from}; moving needs the exact path (see list_notes)`);
    this.writableMountFor(from);
    let to = normalizeNotePath(toRef, { allowEmpty: true });
    // A destination folder (`archive/` or '') keeps the file name.
    if (to === '' || /[/\\]$/.test(toRef.trim())) to = to ? `${to}/${path.posix.basename(from)}` : path.posix.basename(from);
    else to = normalizeNotePath(to, { ensureMd: true });
    if (to === from) return { from, to, rewritten: [], links_rewritten: 0, not_rewritten: [] };
    const destMount = this.writableMountFor(to);
    const destAbs = this.confine(destMount, to);
    if (this.notes.has(to) || fs.existsSync(destAbs)) throw new VltError('USAGE', `cannot move ${from} to ${to}: a note already exists there`);
    this.confine(src.mount, from);

    // Resolution before and after, over the same links: a link is rewritten exactly when its
    // target (before) is the moved note, or when the new name would capture it (after).
    const after = this.simulateNames(from, to);
    const edits = new Map<string, Array<{ start: number; end: number; text: string }>>();
    const notRewritten: MoveResult['not_rewritten'] = [];
    let count = 0;
    for (const rec of this.notes.values()) {
      const sourceAfter = rec.path === from ? to : rec.path;
      for (const link of rec.parsed.links) {
        const before = this.resolveLink(rec.path, link);
        let text: string | undefined;
        if (before === from) text = this.linkTextFor(link, sourceAfter, to, after);
        else if (before !== undefined && link.kind === 'markdown' && rec.path === from && noteFolder(from) !== noteFolder(to)) text = this.linkTextFor(link, sourceAfter, before, after);
        else if (before !== undefined && link.kind === 'wiki' && resolveWikiIn(after, link.target) !== before) text = this.linkTextFor(link, sourceAfter, before, after);
        if (text === undefined) continue;
        if (!rec.mount.writable) {
          if (!notRewritten.some((n) => n.path === rec.path)) notRewritten.push({ path: rec.path, reason: 'the note is in a read-only part of the vault' });
          continue;
        }
        const list = edits.get(rec.path) ?? [];
        list.push({ start: link.targetStart, end: link.targetEnd, text });
        edits.set(rec.path, list);
        count++;
      }
    }

    const moved = applyEdits(src.text, edits.get(from) ?? []);
    await this.writeFile(destMount, destAbs, moved);
    const rewritten: string[] = [];
    if (edits.has(from)) rewritten.push(to);
    for (const [p, list] of edits) {
      if (p === from) continue;
      const rec = this.notes.get(p)!;
      await this.writeFile(rec.mount, this.confine(rec.mount, p), applyEdits(rec.text, list));
      rewritten.push(p);
    }
    try {
      await fs.promises.unlink(this.confine(src.mount, from));
    } catch (e) {
      throw new VltError('IO', `moved ${from} to ${to} but could not remove the old file: ${(e as NodeJS.ErrnoException).code ?? String(e)}`, { path: from }, { cause: e });
    }
    this.forget(from);
    this.ingest(to, destMount, destAbs);
    for (const p of rewritten) if (p !== to) this.reload(p);
    return { from, to, rewritten: rewritten.sort(), links_rewritten: count, not_rewritten: notRewritten };
  }

  /**
   * Writes `<folder>/index.md`: a link to every note in the folder (and to each subfolder's
   * index or notes), with each note's summary. Regenerating replaces an index this method
   * wrote; a hand-written `index.md` is never overwritten.
   */
  async createIndex(folderRef: string): Promise<IndexPageResult> {
    this.ensureFresh();
    const folder = normalizeNotePath(folderRef, { allowEmpty: true });
    const indexPath = folder ? `${folder}/index.md` : 'index.md';
    const mount = this.writableMountFor(indexPath);
    const existing = this.notes.get(indexPath);
    if (existing && existing.parsed.frontmatter[INDEX_MARKER] !== INDEX_MARKER_VALUE) {
      throw new VltError('USAGE', `${indexPath} exists and was not generated by vlt; rename it or delete it first`);
    }
    const prefix = folder ? `${folder}/` : '';
    const direct: NoteRecord[] = [];
    const subfolders = new Map<string, number>();
    for (const r of this.notes.values()) {
      if (!r.path.startsWith(prefix) || r.path === indexPath) continue;
      const rest = r.path.slice(prefix.length);
      const slash = rest.indexOf('/');
      if (slash === -1) direct.push(r);
      else subfolders.set(rest.slice(0, slash), (subfolders.get(rest.slice(0, slash)) ?? 0) + 1);
    }
    if (direct.length === 0 && subfolders.size === 0) throw new VltError('NOT_FOUND', `folder ${folder || '(vault root)'} holds no notes`);
    direct.sort((a, b) => a.parsed.title.localeCompare(b.parsed.title, 'en') || (a.path < b.path ? -1 : 1));
    const names = this.simulateNames(undefined, indexPath);
    const title = folder ? path.posix.basename(folder) : 'Notes';
    const lines = ['---', `title: ${JSON.stringify(`${title} index`)}`, `${INDEX_MARKER}: ${INDEX_MARKER_VALUE}`, '---', '', `# ${title}`, ''];
    for (const r of direct) {
      const target = wikiTargetFor(r.path, names);
      const label = r.parsed.title !== noteName(r.path) ? `|${r.parsed.title.replace(/[|\]]/g, ' ')}` : '';
      const summary = r.parsed.summary ? ` — ${clip(r.parsed.summary, 160)}` : '';
      lines.push(`- [[${target}${label}]]${summary}`);
    }
    if (subfolders.size) {
      lines.push('', '## Folders', '');
      for (const [sub, n] of [...subfolders].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
        const subIndex = `${prefix}${sub}/index.md`;
        lines.push(this.notes.has(subIndex) ? `- [[${prefix}${sub}/index|${sub}]] (${n} notes)` : `- ${sub}/ (${n} notes)`);
      }
    }
    const abs = this.confine(mount, indexPath);
    await this.writeFile(mount, abs, `${lines.join('\n')}\n`);
    this.ingest(indexPath, mount, abs);
    return { path: indexPath, notes: direct.length, created: !existing };
  }

  /** Re-reads changed files now, whatever the freshness window says. */
  refresh(): void {
    this.scan();
  }

  // -----------------------------------------------------------------------------------------
  // Internals
  // -----------------------------------------------------------------------------------------

  private info(r: NoteRecord): NoteInfo {
    return { path: r.path, title: r.parsed.title, tags: r.parsed.tags, modified: new Date(r.mtimeMs).toISOString(), bytes: r.size, read_only: !r.mount.writable };
  }

  /** Exact path, path plus `.md`, then name (or path suffix) by the resolution rule. */
  private lookup(ref: string): NoteRecord {
    const norm = normalizeNotePath(ref);
    const direct = this.notes.get(norm) ?? this.notes.get(`${norm}.md`);
    if (direct) return direct;
    const byName = resolveWikiIn(this.byName, norm);
    const rec = byName === undefined ? undefined : this.notes.get(byName);
    if (rec) return rec;
    const secret = this.deniedRef(norm);
    if (secret) {
      throw new VltError('ACCESS_DENIED', `note ${JSON.stringify(ref)} matches "${secret.pattern}" in the [security] deny list (secrets), by its name or the file it links to; tools do not read it`, { path: secret.path, pattern: secret.pattern });
    }
    // A file the walk skipped because it leaves the vault is refused as such, not as missing.
    for (const candidate of [norm, `${norm}.md`]) {
      const mount = this.mountFor(candidate);
      if (mount) this.confine(mount, candidate);
    }
    throw new VltError('NOT_FOUND', `no note named ${JSON.stringify(ref)}; use list_notes or search_notes to find it`);
  }

  /**
   * The deny pattern a note matches: by its path in the vault, by its path in the workspace, or
   * by the real file a symbolic link (of the file or of a folder above it) leads to; a target
   * outside the workspace is judged by its file name.
   */
  private deniedPattern(logical: string, abs: string): string | undefined {
    if (this.deny.length === 0) return undefined;
    const candidates = [logical];
    const inWorkspace = relativeInside(this.workspaceRoot, abs);
    if (inWorkspace) candidates.push(inWorkspace);
    const real = safeRealpath(abs);
    if (real && real !== abs) candidates.push(relativeInside(safeRealpath(this.workspaceRoot) ?? this.workspaceRoot, real) ?? path.basename(real));
    for (const c of candidates) {
      const pattern = deniedBy(c, this.deny);
      if (pattern) return pattern;
    }
    return undefined;
  }

  /** The denied note a reference names (by path or by name), or the pattern a path itself matches. */
  private deniedRef(norm: string): { path: string; pattern: string } | undefined {
    for (const p of [norm, `${norm}.md`]) {
      const pattern = this.denied.get(p) ?? deniedBy(p, this.deny);
      if (pattern) return { path: p, pattern };
    }
    if (norm.includes('/')) return undefined;
    const name = noteName(norm).toLowerCase();
    for (const [p, pattern] of this.denied) if (noteName(p).toLowerCase() === name) return { path: p, pattern };
    return undefined;
  }

  private resolveLink(sourcePath: string, link: NoteLink): string | undefined {
    if (link.kind === 'markdown') {
      const p = resolveRelative(noteFolder(sourcePath), link.target);
      return p !== undefined && this.notes.has(p) ? p : undefined;
    }
    const found = resolveWikiIn(this.byName, link.target);
    return found !== undefined && this.notes.has(found) ? found : undefined;
  }

  private inboundLinks(): Map<string, Array<{ source: string; link: NoteLink }>> {
    if (this.inbound) return this.inbound;
    const map = new Map<string, Array<{ source: string; link: NoteLink }>>();
    for (const rec of this.notes.values()) {
      for (const link of rec.parsed.links) {
        const to = this.resolveLink(rec.path, link);
        if (to === undefined) continue;
        const list = map.get(to) ?? [];
        list.push({ source: rec.path, link });
        map.set(to, list);
      }
    }
    this.inbound = map;
    return map;
  }

  /** The name table as it would be with `remove` gone and `add` present. */
  private simulateNames(remove: string | undefined, add: string): Map<string, string[]> {
    const names = new Map<string, string[]>();
    for (const [k, v] of this.byName) names.set(k, v.filter((p) => p !== remove));
    const key = noteName(add).toLowerCase();
    names.set(key, [...(names.get(key) ?? []), add].sort(compareByResolutionRule));
    return names;
  }

  /** The new target text of `link` (in a note that will live at `sourcePath`) so that it reaches `target`. */
  private linkTextFor(link: NoteLink, sourcePath: string, target: string, names: Map<string, string[]>): string {
    if (link.kind === 'markdown') {
      const dest = relativeLink(noteFolder(sourcePath), target) + (link.heading !== undefined ? `#${link.heading}` : '');
      // CommonMark needs angle brackets around a destination with spaces or parentheses.
      return /[\s()<>]/.test(dest) ? `<${dest}>` : dest;
    }
    const withMd = /\.md$/i.test(link.target);
    const bare = wikiTargetFor(target, names);
    return withMd ? `${bare}.md` : bare;
  }

  private writableMountFor(notePath: string): VaultMount {
    const mount = this.mountFor(notePath);
    if (!mount) throw new VltError('READ_ONLY', `${notePath} is outside every writable part of the vault`);
    if (!mount.writable) {
      const where = mount.kind === 'file' ? mount.logical : `${mount.logical}/`;
      throw new VltError('READ_ONLY', `${notePath} is in ${where}, which the vault only reads (the workspace's own docs); write new notes elsewhere, e.g. "${path.posix.basename(notePath)}"`);
    }
    return mount;
  }

  /** The mount a logical path belongs to: a read-only mount's namespace first, then the top. */
  private mountFor(notePath: string): VaultMount | undefined {
    const lower = notePath.toLowerCase();
    for (const m of this.mounts) {
      if (m.kind === 'file' && lower === m.logical.toLowerCase()) return m;
      if (m.kind === 'dir' && m.logical && (lower === m.logical.toLowerCase() || lower.startsWith(`${m.logical.toLowerCase()}/`))) return m;
    }
    return this.mounts.find((m) => m.kind === 'dir' && m.logical === '');
  }

  /**
   * The absolute file of a logical path, after checking that it, or its nearest existing
   * ancestor, resolves (through any symbolic link) to a place under the mount's real root.
   */
  private confine(mount: VaultMount, notePath: string): string {
    if (mount.kind === 'file') return mount.abs;
    const rel = mount.logical ? notePath.slice(mount.logical.length + 1) : notePath;
    const abs = path.join(mount.abs, ...rel.split('/'));
    let rootReal: string;
    try {
      rootReal = fs.realpathSync.native(mount.abs);
    } catch {
      // The root does not exist yet (a first note): nothing below it can be a link.
      return abs;
    }
    let probe = abs;
    for (;;) {
      let real: string | undefined;
      try {
        real = fs.realpathSync.native(probe);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'ENOTDIR') {
          // A dangling symbolic link is refused too: writing through it would create its target.
          if (isSymlink(probe)) throw outside(notePath);
          const parent = path.dirname(probe);
          if (parent === probe) return abs;
          probe = parent;
          continue;
        }
        throw new VltError('IO', `cannot resolve ${notePath}: ${code ?? String(e)}`, { path: notePath }, { cause: e });
      }
      if (real !== rootReal && !real.startsWith(rootReal + path.sep)) throw outside(notePath);
      return abs;
    }
  }

  private async writeFile(mount: VaultMount, abs: string, content: string): Promise<void> {
    // The default writable notes live in the private state folder: create it private.
    const state = path.join(this.workspaceRoot, '.vlt');
    if (mount.abs === state || mount.abs.startsWith(state + path.sep)) await ensurePrivateDir(state);
    try {
      await fs.promises.mkdir(path.dirname(abs), { recursive: true });
    } catch (e) {
      throw new VltError('IO', `cannot create the folder of ${abs}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`, { path: abs }, { cause: e });
    }
    // The folder may have been created through a link planted since the check; check again.
    const rootReal = safeRealpath(mount.abs);
    const dirReal = safeRealpath(path.dirname(abs));
    if (rootReal && dirReal && dirReal !== rootReal && !dirReal.startsWith(rootReal + path.sep)) throw outside(abs);
    await writeFileAtomic(abs, Buffer.from(content, 'utf8'));
  }

  /** Every operation starts here: the confinement check, then the freshness window. */
  private ensureFresh(): void {
    // Checked every time: a link that appears later (a pull) must not lead the vault out.
    const out = this.confined ? mountOutside(this.workspaceRoot, this.mounts) : undefined;
    if (out) {
      throw new VltError(
        'ACCESS_DENIED',
        `the notes vault root ${out.shown} leads outside the workspace (to ${out.real}); a repository's settings and links may not point the vault there. Run \`vlt trust\` if you trust this repository, or set [vault] root in your own config.toml`,
        { root: out.real },
      );
    }
    if (this.now() - this.lastScan >= this.staleAfterMs) this.scan();
  }

  /** Walks every mount, re-parsing files whose size or mtime changed and dropping vanished ones. */
  private scan(): void {
    const seen = new Set<string>();
    this.scanIssues.length = 0;
    this.denied.clear();
    for (const mount of this.mounts) {
      if (mount.kind === 'file') {
        this.visit(mount, mount.logical, mount.abs, seen);
        continue;
      }
      const rootReal = safeRealpath(mount.abs);
      if (!rootReal) continue;
      const visited = new Set<string>([rootReal]);
      const walk = (dir: string, logicalDir: string): void => {
        let entries: fs.Dirent[];
        try {
          entries = fs.readdirSync(dir, { withFileTypes: true });
        } catch {
          return;
        }
        for (const e of entries) {
          if (e.name.startsWith('.') || SKIP_DIRS.has(e.name)) continue;
          const abs = path.join(dir, e.name);
          const logical = logicalDir ? `${logicalDir}/${e.name}` : e.name;
          let isDir = e.isDirectory();
          let isMd = e.isFile() && /\.md$/i.test(e.name);
          if (e.isSymbolicLink()) {
            // A link is followed only when it stays inside the root, and a folder only once.
            const real = safeRealpath(abs);
            if (!real || (real !== rootReal && !real.startsWith(rootReal + path.sep))) continue;
            try {
              const st = fs.statSync(real);
              isDir = st.isDirectory();
              isMd = st.isFile() && /\.md$/i.test(e.name);
            } catch {
              continue;
            }
            if (isDir) {
              if (visited.has(real)) continue;
              visited.add(real);
            }
          }
          if (isDir) walk(abs, logical);
          else if (isMd) {
            // A file under a read-only namespace belongs to that mount; a copy here is shadowed.
            if (this.mountFor(logical) !== mount) continue;
            this.visit(mount, logical, abs, seen);
          }
        }
      };
      walk(mount.abs, mount.logical);
    }
    for (const p of [...this.notes.keys()]) if (!seen.has(p)) this.forget(p);
    this.lastScan = this.now();
  }

  private visit(mount: VaultMount, logical: string, abs: string, seen: Set<string>): void {
    const pattern = this.deniedPattern(logical, abs);
    if (pattern) {
      this.denied.set(logical, pattern);
      return;
    }
    let st: fs.Stats;
    try {
      st = fs.statSync(abs);
    } catch {
      return;
    }
    if (!st.isFile()) return;
    if (st.size > NOTE_MAX_BYTES) {
      this.scanIssues.push({ path: logical, line: 1, message: `skipped: larger than ${NOTE_MAX_BYTES / 1024 / 1024} MiB` });
      return;
    }
    seen.add(logical);
    const known = this.notes.get(logical);
    if (known && known.mtimeMs === st.mtimeMs && known.size === st.size) return;
    this.ingest(logical, mount, abs, st);
  }

  /** Reads and indexes one file; returns its record, or undefined when it cannot be read. */
  private ingest(logical: string, mount: VaultMount, abs: string, st?: fs.Stats): NoteRecord | undefined {
    let text: string;
    try {
      st ??= fs.statSync(abs);
      const bytes = fs.readFileSync(abs);
      text = decodeUtf8(bytes, () => this.scanIssues.push({ path: logical, line: 1, message: 'not valid UTF-8; invalid bytes were replaced' }));
    } catch (e) {
      this.logger.warn(`notes: cannot read ${logical}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
      this.forget(logical);
      return undefined;
    }
    const parsed = parseNote(text, noteName(logical));
    const rec: NoteRecord = { path: logical, abs, mount, mtimeMs: st.mtimeMs, size: st.size, text, parsed };
    const isNew = !this.notes.has(logical);
    this.notes.set(logical, rec);
    if (isNew) {
      const key = noteName(logical).toLowerCase();
      this.byName.set(key, [...(this.byName.get(key) ?? []), logical].sort(compareByResolutionRule));
    }
    this.index.set(logical, {
      title: parsed.title,
      tags: parsed.tags.join(' '),
      path: tokenizePath(logical).join(' '),
      fields: parsed.fieldsText,
      body: parsed.body,
    });
    this.inbound = undefined;
    for (const issue of parsed.issues) {
      const key = `${logical}:${rec.mtimeMs}:${issue.line}`;
      if (this.reported.has(key)) continue;
      this.reported.add(key);
      this.logger.warn(`${logical}:${issue.line}: ${issue.message}`);
    }
    return rec;
  }

  private reload(logical: string): void {
    const rec = this.notes.get(logical);
    if (rec) this.ingest(logical, rec.mount, rec.abs);
  }

  private forget(logical: string): void {
    if (!this.notes.delete(logical)) return;
    const key = noteName(logical).toLowerCase();
    const rest = (this.byName.get(key) ?? []).filter((p) => p !== logical);
    if (rest.length) this.byName.set(key, rest);
    else this.byName.delete(key);
    this.index.delete(logical);
    this.inbound = undefined;
  }
}

function applyEdits(text: string, edits: Array<{ start: number; end: number; text: string }>): string {
  let out = text;
  for (const e of [...edits].sort((a, b) => b.start - a.start)) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}

/**
 * The line that holds the most query terms, frontmatter included (a match may be in `lore`);
 * the first line of the body when none does.
 */
function bestLine(rec: NoteRecord, terms: string[]): { line: number; snippet: string } {
  const lines = rec.text.split('\n');
  const bodyStartLine = rec.text.slice(0, rec.parsed.bodyOffset).split('\n').length;
  let best = -1;
  let bestScore = 0;
  for (let i = 0; i < lines.length; i++) {
    const lower = (lines[i] ?? '').toLowerCase();
    if (!lower.trim() || /^(?:---|\.\.\.)\s*$/.test(lower)) continue;
    if (best === -1 && i >= bodyStartLine - 1) best = i;
    let score = 0;
    for (const t of terms) if (lower.includes(t)) score++;
    if (score > bestScore) {
      bestScore = score;
      best = i;
    }
  }
  if (best === -1) return { line: 1, snippet: rec.parsed.title };
  return { line: best + 1, snippet: clip((lines[best] ?? '').trim(), 200) };
}

function decodeUtf8(bytes: Uint8Array, onInvalid: () => void): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    onInvalid();
    return new TextDecoder('utf-8').decode(bytes);
  }
}

/** `abs` relative to `root`, `/`-separated, or undefined when it is not below it. */
function relativeInside(root: string, abs: string): string | undefined {
  const rel = path.relative(root, abs);
  if (rel === '' || rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) return undefined;
  return rel.split(path.sep).join('/');
}
