/**
 * The file watcher of `vlt coderag watch` and the workspace daemon: one watch per directory the
 * index walks (never inside .git, node_modules or a folder the index skipped), directories that
 * appear later are watched too, with the files written into them before the watch began, and
 * each change reaches the index through the delta queue.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/ports';
import { watchFiles, type TreeWatcher } from '../../src/server/watch';
import { WorkspaceServer } from '../../src/server/workspace';
import { copyFixture } from '../helpers/cli';

async function until(what: string, check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('watchFiles', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('watches the directories the index walks, and picks up a directory made later with the files already in it', async () => {
    const ws0 = copyFixture('test/fixtures/intel/go');
    cleanups.push(ws0.cleanup);
    // Folders the index never walks: their changes must cost nothing.
    for (const d of ['node_modules/pkg/lib', '.git/objects/aa', 'vendor/x']) mkdirSync(path.join(ws0.dir, d), { recursive: true });
    const ws = await WorkspaceServer.open({ workspace: ws0.dir, logger: silentLogger, deps: { embeddingProvider: null, parseWorkers: 0 }, headlessLanguageServers: false, writer: true, queue: { timeoutMs: 60_000 } });
    cleanups.push(() => ws.close());
    const watcher: TreeWatcher = await watchFiles(ws, silentLogger);
    cleanups.push(() => watcher.close());
    // The root, srv/, srv/other/ and util/: four directories, none under node_modules, .git or vendor.
    expect(watcher.dirs).toBe(4);

    const found = (name: string) => ws.read(async (e) => (await e.search(name, { k: 5 })).hits.some((h) => h.symbol === name));
    // A new package written in one go, as a checkout or `tar x` makes it.
    mkdirSync(path.join(ws0.dir, 'fresh', 'deep'), { recursive: true });
    writeFileSync(path.join(ws0.dir, 'fresh', 'deep', 'a.go'), 'package deep\n\nfunc Quokkafy() int { return 1 }\n');
    await until('a file in a new directory to be indexed', () => found('Quokkafy'));
    expect(watcher.dirs).toBe(6);
    // A later edit inside it is seen through its own watch.
    writeFileSync(path.join(ws0.dir, 'fresh', 'deep', 'b.go'), 'package deep\n\nfunc Wombatize() int { return 2 }\n');
    await until('an edit in the new directory to be indexed', () => found('Wombatize'));
    // Nothing under node_modules reaches the queue.
    const before = ws.queue!.state().pending;
    writeFileSync(path.join(ws0.dir, 'node_modules', 'pkg', 'lib', 'x.go'), 'package lib\n\nfunc Ignored() {}\n');
    await new Promise((r) => setTimeout(r, 300));
    expect(ws.queue!.state().pending).toBe(before);
  });
});
