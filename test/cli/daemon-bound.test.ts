/**
 * Daemons are bounded: short commands in many folders leave at most VLT_DAEMON_MAX daemons
 * running, the least recently used idle ones stopped, and `vlt daemon status --all` lists
 * those that run. The registry lives under the temporary directory, which the test makes its own.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AllDaemonsReport } from '../../src/cli/daemon-commands';
import { tempDir, vlt } from '../helpers/cli';

describe('the bound on running daemons', () => {
  let base: string;
  let env: Record<string, string>;
  const folders: string[] = [];
  beforeAll(() => {
    base = tempDir('vlt-bound-');
    const tmp = path.join(base, 'tmp');
    mkdirSync(tmp);
    // Any idle daemon may go at once (a person's folders stay warm for a minute).
    env = { VLT_DAEMON: '1', VLT_DAEMON_MAX: '2', VLT_DAEMON_EVICT_IDLE_S: '0', TMPDIR: tmp };
    for (let i = 0; i < 3; i++) {
      const dir = path.join(base, `ws${i}`);
      mkdirSync(dir);
      writeFileSync(path.join(dir, 'main.py'), `def handler_${i}():\n    return ${i}\n`);
      folders.push(dir);
    }
  });
  afterAll(async () => {
    for (const dir of folders) await vlt(['-C', dir, 'daemon', 'stop'], { env });
    rmSync(base, { recursive: true, force: true });
  });

  const all = async (): Promise<AllDaemonsReport> => {
    const r = await vlt(['daemon', 'status', '--all', '--json'], { env: { ...env, VLT_DAEMON: '0' } });
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as AllDaemonsReport;
  };

  it('stops the least recently used idle daemon when a third starts, and lists the two that run', async () => {
    for (const [i, dir] of folders.entries()) {
      const r = await vlt(['-C', dir, 'coderag', 'init', '-q'], { env });
      expect(r.code, r.stderr).toBe(0);
      const s = await vlt(['-C', dir, 'coderag', 'search', `handler_${i}`, '--json'], { env });
      expect(s.code, s.stderr).toBe(0);
    }
    // The third daemon applies the bound as it starts; the first folder's daemon goes.
    let report = await all();
    for (let tries = 0; tries < 50 && report.daemons.length > 2; tries++) {
      await new Promise((r) => setTimeout(r, 100));
      report = await all();
    }
    expect(report.max).toBe(2);
    expect(report.daemons.map((d) => path.basename(d.workspace)).sort()).toEqual(['ws1', 'ws2']);
    for (const d of report.daemons) expect(d.status?.rss_bytes).toBeGreaterThan(0);
    const text = await vlt(['daemon', 'status', '--all'], { env: { ...env, VLT_DAEMON: '0' } });
    expect(text.stdout).toMatch(/2 daemons running \(at most 2 at once; VLT_DAEMON_MAX\)/);
    // The stopped one starts again when its folder is used, and the bound holds.
    const again = await vlt(['-C', folders[0]!, 'coderag', 'search', 'handler_0', '--json'], { env });
    expect(again.code, again.stderr).toBe(0);
    report = await all();
    for (let tries = 0; tries < 50 && report.daemons.length > 2; tries++) {
      await new Promise((r) => setTimeout(r, 100));
      report = await all();
    }
    expect(report.daemons.map((d) => path.basename(d.workspace)).sort()).toEqual(['ws0', 'ws2']);
  }, 120_000);

  it('leaves a daemon used in the last minute running, past the bound', async () => {
    const recent = { ...env, VLT_DAEMON_EVICT_IDLE_S: '60' };
    for (const [i, dir] of folders.entries()) expect((await vlt(['-C', dir, 'coderag', 'search', `handler_${i}`, '--json'], { env: recent })).code).toBe(0);
    await new Promise((r) => setTimeout(r, 500));
    const r = await vlt(['daemon', 'status', '--all', '--json'], { env: { ...recent, VLT_DAEMON: '0' } });
    expect((JSON.parse(r.stdout) as AllDaemonsReport).daemons).toHaveLength(3);
  }, 120_000);
});
