/**
 * Universal Ctags as a provider of the navigation chain (`TagsProvider`): one `ctags` run
 * over the indexed files, its JSON output kept as a name → tags map, persisted under `.vlt/`
 * with the index generation it was made for (ctags-cache.ts), so that later processes reuse it
 * until the index changes, and a one-shot command reads only the names it looks up.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type { Tag, TagsProvider } from '../core/intel/navigate';
import type { Logger } from '../core/ports';
import { writeFileAtomic } from '../core/store/atomic';
import { encodeTags, readAllTags, readTagsIndex, readTagsOf, TAGS_CACHE_FILE, type TagsIndex } from './ctags-cache';

export interface CtagsOptions {
  root: string;
  /** Workspace-relative paths to tag (the indexed files). */
  files: () => string[];
  /** Changes whenever the index changes; the cache is keyed by it. */
  generation: () => number;
  logger: Logger;
  /** The ctags program; `ctags` on PATH by default. */
  command?: string;
  /** Upper bound for one ctags run. */
  timeoutMs?: number;
  /**
   * The user trusts the workspace. Untrusted, ctags reads no option files: Universal Ctags
   * loads `.ctags.d/*.ctags` from the folder it runs in, which is the workspace.
   */
  trusted?: boolean;
}

/** The cache of an earlier layout (one JSON document), removed when the new one is written. */
const OLD_CACHE_FILE = 'ctags.json';

/** Runs `ctags --version` once: is it Universal Ctags (the only one with JSON output)? */
async function probe(command: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    let out = '';
    const child = spawn(command, ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] });
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ENOENT' ? `${command} is not installed` : `${command} cannot run: ${e.message}`));
    child.on('close', () => resolve(/Universal Ctags/.test(out) ? undefined : `${command} is not Universal Ctags (no JSON output)`));
  });
}

export class CtagsProvider implements TagsProvider {
  private why: Promise<string | undefined> | undefined;
  private byName: Map<string, Tag[]> | undefined;
  private builtFor = -1;
  private building: Promise<Map<string, Tag[]>> | undefined;
  /** The ctags process running now, stopped by {@link dispose}. */
  private child: ChildProcess | undefined;
  private disposed = false;
  /** Ends the pauses of a warm-up's load: a lookup is waiting for it. */
  private neededNow: (() => void) | undefined;

  constructor(private readonly opts: CtagsOptions) {}

  unavailable(): Promise<string | undefined> {
    this.why ??= probe(this.opts.command ?? 'ctags');
    return this.why;
  }

  /**
   * Loads the tags now (running ctags when no cache of this index generation exists), so that
   * the first lookup does not wait for them; a failure is left for a lookup to report.
   */
  async warm(pause?: () => Promise<void>): Promise<void> {
    if (await this.unavailable()) return;
    const gen = this.opts.generation();
    if (this.byName && this.builtFor === gen) return;
    if (!this.building) {
      // Reading and decoding the tags is one long block (tens of megabytes of JSON on a large
      // workspace): `pause` lets the caller hold it back until its requests are answered,
      // unless a lookup needs the tags meanwhile.
      const needed = new Promise<void>((resolve) => (this.neededNow = resolve));
      const hold = pause ? () => Promise.race([pause(), needed]) : undefined;
      this.building = this.load(gen, hold).finally(() => {
        this.building = undefined;
        this.neededNow = undefined;
      });
    }
    await this.building.catch(() => undefined);
  }

  /** Stops a ctags run in progress and starts no other (the host is shutting down). */
  dispose(): void {
    this.disposed = true;
    this.child?.kill('SIGKILL');
  }

  async lookup(name: string): Promise<Tag[]> {
    const gen = this.opts.generation();
    // Before every tag is loaded (a one-shot command, a warm-up still under way), a name is
    // read from the cache file alone when it was made for this generation.
    if (!(this.byName && this.builtFor === gen) && !this.building) {
      const found = await this.lookupCached(gen, name);
      if (found) return found;
    }
    const map = await this.tags();
    return map.get(name) ?? [];
  }

  /** The cache file's first line, read once per generation. */
  private cachedIndex: { gen: number; index: Promise<TagsIndex | undefined> } | undefined;

  private async lookupCached(gen: number, name: string): Promise<Tag[] | undefined> {
    if (this.cachedIndex?.gen !== gen) this.cachedIndex = { gen, index: readTagsIndex(this.cachePath()) };
    const index = await this.cachedIndex.index;
    if (!index || index.generation !== gen) return undefined;
    return readTagsOf(this.cachePath(), index, name);
  }

  private async tags(): Promise<Map<string, Tag[]>> {
    const gen = this.opts.generation();
    if (this.byName && this.builtFor === gen) return this.byName;
    this.neededNow?.();
    this.building ??= this.load(gen).finally(() => (this.building = undefined));
    return this.building;
  }

  private cachePath(): string {
    return path.join(this.opts.root, '.vlt', TAGS_CACHE_FILE);
  }

  private async load(gen: number, pause?: () => Promise<void>): Promise<Map<string, Tag[]>> {
    await pause?.();
    // No cache of this generation, or an unreadable one: run ctags.
    const cached = await readAllTags(this.cachePath());
    let map = cached?.generation === gen ? cached.byName : undefined;
    if (!map) {
      const tags = await this.run();
      map = new Map<string, Tag[]>();
      for (const t of tags) {
        let list = map.get(t.name);
        if (!list) map.set(t.name, (list = []));
        list.push(t);
      }
      try {
        await writeFileAtomic(this.cachePath(), encodeTags(gen, map));
        this.cachedIndex = undefined;
        await fs.rm(path.join(this.opts.root, '.vlt', OLD_CACHE_FILE), { force: true });
      } catch (e) {
        this.opts.logger.debug(`ctags: cannot cache tags: ${String(e)}`);
      }
    }
    await pause?.();
    this.byName = map;
    this.builtFor = gen;
    return map;
  }

  /** One ctags run over the indexed files (given on stdin), JSON lines parsed as they come. */
  private run(): Promise<Tag[]> {
    const command = this.opts.command ?? 'ctags';
    const files = this.opts.files();
    const t0 = performance.now();
    return new Promise((resolve, reject) => {
      // `--options=NONE` must come first to stop the preloading of option files.
      const args = [...(this.opts.trusted ? [] : ['--options=NONE']), '--output-format=json', '--fields=+nKZ', '--extras=-F', '-L', '-', '-f', '-'];
      if (this.disposed) {
        reject(new Error('ctags was stopped: the host is shutting down'));
        return;
      }
      const child = spawn(command, args, {
        cwd: this.opts.root,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      this.child = child;
      const tags: Tag[] = [];
      let rest = '';
      let stderr = '';
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`ctags did not finish within ${this.opts.timeoutMs ?? 120_000} ms`));
      }, this.opts.timeoutMs ?? 120_000);
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => {
        const lines = (rest + chunk).split('\n');
        rest = lines.pop() ?? '';
        for (const l of lines) {
          const t = parseTagLine(l);
          if (t) tags.push(t);
        }
      });
      child.stderr.on('data', (d: Buffer) => {
        if (stderr.length < 4000) stderr += d.toString();
      });
      child.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        if (this.child === child) this.child = undefined;
        if (signal !== null && this.disposed) {
          reject(new Error('ctags was stopped: the host is shutting down'));
          return;
        }
        const t = parseTagLine(rest);
        if (t) tags.push(t);
        if (code !== 0 && tags.length === 0) {
          // `--options=NONE` makes ctags say so first; the cause is the next line.
          const cause = stderr.split('\n').find((l) => l.trim() && !/Notice: No options will be read/.test(l)) ?? '';
          reject(new Error(`ctags exited with ${code}: ${cause.trim()}`));
          return;
        }
        this.opts.logger.debug(`ctags: ${tags.length} tags for ${files.length} files in ${(performance.now() - t0).toFixed(0)} ms`);
        resolve(tags);
      });
      child.stdin.on('error', () => {
        // ctags exiting early closes the pipe; the close handler reports it.
      });
      child.stdin.end(files.join('\n'));
    });
  }
}

function parseTagLine(line: string): Tag | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const j = JSON.parse(line) as { _type?: string; name?: string; path?: string; line?: number; kind?: string; scope?: string };
    if (j._type !== 'tag' || !j.name || !j.path || !j.line) return undefined;
    const t: Tag = { name: j.name, path: j.path.split(path.sep).join('/'), line: j.line, kind: j.kind ?? '' };
    if (j.scope) t.scope = j.scope;
    return t;
  } catch {
    return undefined;
  }
}
