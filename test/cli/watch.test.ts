/**
 * `vlt coderag watch` through the built CLI: file changes reach the delta queue, a batch is
 * committed at the threshold (vlt.toml), `coderag status` shows the live queue, and Ctrl-C
 * commits what is left and exits 0.
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { copyFixture, vlt, vltAsync } from '../helpers/cli';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function waitFor(get: () => string, re: RegExp, timeoutMs = 30_000): Promise<void> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const check = () => {
      if (re.test(get())) resolve();
      else if (Date.now() - t0 > timeoutMs) reject(new Error(`no ${re} in:\n${get()}`));
      else setTimeout(check, 50);
    };
    check();
  });
}

describe('vlt coderag watch', () => {
  it('commits changed files in batches, shows its queue in status, and commits the rest on SIGINT', async () => {
    const { dir, cleanup } = copyFixture('test/fixtures/lsp/ts-project');
    cleanups.push(cleanup);
    writeFileSync(path.join(dir, 'vlt.toml'), '[index]\nqueue_files = 2\nqueue_timeout_seconds = 600\n');
    const child = vltAsync(['coderag', 'watch', '--json'], { cwd: dir });
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitFor(() => stderr, /watching /);
      appendFileSync(path.join(dir, 'math.ts'), '\nexport function watchedOne(): number { return 1; }\n');
      // One file: indexed and queued, not yet committed; status (another process) shows the queue.
      const st = await (async () => {
        for (let i = 0; i < 100; i++) {
          const r = await vlt(['coderag', 'status', '--json'], { cwd: dir });
          const s = JSON.parse(r.stdout) as { queue: { host: string; uncommittedFiles: number } | null };
          if (s.queue && s.queue.uncommittedFiles === 1) return s;
          await new Promise((res) => setTimeout(res, 100));
        }
        throw new Error(`the queue never showed one uncommitted file; stderr:\n${stderr}`);
      })();
      expect(st.queue?.host).toBe('vlt coderag watch');
      expect(stdout).toBe('');
      appendFileSync(path.join(dir, 'geometry.ts'), '\nexport function watchedTwo(): number { return 2; }\n');
      await waitFor(() => stdout, /"commits":1/);
      const found = await vlt(['coderag', 'search', 'watchedTwo', '--json'], { cwd: dir });
      expect(JSON.parse(found.stdout)[0].symbol).toBe('watchedTwo');
      // A third change, then Ctrl-C: committed on the way out.
      appendFileSync(path.join(dir, 'main.ts'), '\nexport function watchedThree(): number { return 3; }\n');
      // Let the watcher see it before the signal (the exit path commits whatever is queued).
      await new Promise((res) => setTimeout(res, 300));
      child.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(stdout).toMatch(/"commits":2/);
      const three = await vlt(['coderag', 'search', 'watchedThree', '--json'], { cwd: dir });
      expect(JSON.parse(three.stdout)[0].symbol).toBe('watchedThree');
      const after = await vlt(['coderag', 'status', '--json'], { cwd: dir });
      expect(JSON.parse(after.stdout).queue).toBeNull();
    } finally {
      child.kill('SIGKILL');
    }
  });
  it('commits its queued edits and gives the lock back when a sync in another process asks', async () => {
    const { dir, cleanup } = copyFixture('test/fixtures/lsp/ts-project');
    cleanups.push(cleanup);
    writeFileSync(path.join(dir, 'vlt.toml'), '[index]\nqueue_files = 50\nqueue_timeout_seconds = 600\n');
    const child = vltAsync(['coderag', 'watch', '--json'], { cwd: dir, env: { VLT_DAEMON: '0' } });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitFor(() => stderr, /watching /);
      appendFileSync(path.join(dir, 'math.ts'), '\nexport function queuedQuokka(): number { return 1; }\n');
      for (let i = 0; ; i++) {
        const s = JSON.parse((await vlt(['coderag', 'status', '--json'], { cwd: dir })).stdout) as { queue: { uncommittedFiles: number } | null };
        if (s.queue?.uncommittedFiles === 1) break;
        if (i > 100) throw new Error(`the edit never queued; stderr:\n${stderr}`);
        await new Promise((res) => setTimeout(res, 100));
      }
      // Without the daemon: the sync asks the watcher to commit, waits for the lock, and runs.
      const sync = await vlt(['coderag', 'sync', '--json'], { cwd: dir, env: { VLT_DAEMON: '0' } });
      expect(sync.code, `${sync.stderr}\n--- watcher:\n${stderr}`).toBe(0);
      expect(sync.stderr).toMatch(/asking it to commit them/);
      const after = JSON.parse((await vlt(['coderag', 'status', '--json'], { cwd: dir })).stdout) as { queue: { uncommittedFiles: number; commits: number } | null };
      expect(after.queue).toMatchObject({ uncommittedFiles: 0, commits: 1 });
      const found = await vlt(['coderag', 'search', 'queuedQuokka', '--json'], { cwd: dir });
      expect(JSON.parse(found.stdout)[0].symbol).toBe('queuedQuokka');
      // The watcher goes on: a later edit is queued again.
      appendFileSync(path.join(dir, 'geometry.ts'), '\nexport function laterLemur(): number { return 2; }\n');
      child.kill('SIGINT');
      expect(await exited, stderr).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
