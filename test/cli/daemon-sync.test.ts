/**
 * The writers agree: an edit the daemon's file watcher indexed but has not committed yet is
 * committed by `vlt coderag sync` run through that daemon, and `vlt coderag status` then says
 * nothing is left uncommitted.
 */
import { rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, vlt } from '../helpers/cli';

interface QueueStatus {
  queue: { uncommittedFiles: number; pending: number } | null;
}

describe('sync through the daemon that holds queued edits', () => {
  let ws: string;
  let env: Record<string, string>;
  beforeAll(() => {
    ws = tempDir('vlt-qsync-');
    env = { VLT_DAEMON: '1' };
    writeFileSync(path.join(ws, 'main.py'), 'def handler_one():\n    return 1\n');
  });
  afterAll(async () => {
    await vlt(['-C', ws, 'daemon', 'stop'], { env });
    rmSync(ws, { recursive: true, force: true });
  });

  const status = async (): Promise<QueueStatus> => {
    const r = await vlt(['-C', ws, 'coderag', 'status', '--json'], { env });
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as QueueStatus;
  };

  it('commits what the watcher indexed, and status then shows nothing uncommitted', async () => {
    expect((await vlt(['-C', ws, 'coderag', 'init', '-q'], { env })).code).toBe(0);
    writeFileSync(path.join(ws, 'main.py'), 'def handler_renamed():\n    return 1\n');
    // The daemon's watcher indexes the edit and keeps it uncommitted (the queue commits in batches).
    let s = await status();
    for (let i = 0; i < 100 && (s.queue?.uncommittedFiles ?? 0) === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      s = await status();
    }
    expect(s.queue?.uncommittedFiles).toBe(1);
    const sync = await vlt(['-C', ws, 'coderag', 'sync'], { env });
    expect(sync.code, sync.stderr).toBe(0);
    s = await status();
    expect(s.queue?.uncommittedFiles).toBe(0);
    // On disk: a process of its own, without the daemon, finds the renamed function.
    const found = await vlt(['-C', ws, 'coderag', 'search', 'handler_renamed', '--json'], { env: { VLT_DAEMON: '0' } });
    expect((JSON.parse(found.stdout) as Array<{ symbol?: string }>)[0]?.symbol).toBe('handler_renamed');
  }, 60_000);
});
