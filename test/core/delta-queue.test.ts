import { describe, expect, it } from 'vitest';
import { changedLineCount, DeltaQueue, type DeltaTarget } from '../../src/core/delta-queue';
import { VltError } from '../../src/core/errors';
import { silentLogger } from '../../src/core/ports';

const tick = (ms = 40) => new Promise((r) => setTimeout(r, ms));

function target(opts: { lines?: number; fail?: () => boolean } = {}) {
  const applied: string[][] = [];
  let commits = 0;
  const t: DeltaTarget = {
    apply: (paths) => {
      if (opts.fail?.()) return Promise.reject(new VltError('INDEX_LOCKED', 'held by pid 1'));
      applied.push([...paths]);
      return Promise.resolve({ changed: paths, lines: (opts.lines ?? 1) * paths.length });
    },
    commit: () => {
      commits++;
      return Promise.resolve();
    },
  };
  return { t, applied, commits: () => commits };
}

describe('DeltaQueue', () => {
  it('indexes queued paths together after the debounce, and commits once at the file threshold', async () => {
    const { t, applied, commits } = target();
    const q = new DeltaQueue({ target: t, logger: silentLogger, thresholds: { maxFiles: 3, timeoutMs: 60_000 }, debounceMs: 10 });
    q.enqueue(['a.ts', 'b.ts']);
    q.enqueue(['a.ts']);
    await tick();
    expect(applied).toEqual([['a.ts', 'b.ts']]);
    expect(commits()).toBe(0);
    expect(q.state()).toMatchObject({ pending: 0, uncommittedFiles: 2, commits: 0 });
    q.enqueue(['c.ts']);
    await tick();
    expect(commits()).toBe(1);
    expect(q.state()).toMatchObject({ uncommittedFiles: 0, uncommittedLines: 0, commits: 1 });
    q.dispose();
  });

  it('commits at the line threshold, and after the timeout when below both', async () => {
    const many = target({ lines: 600 });
    const q1 = new DeltaQueue({ target: many.t, logger: silentLogger, thresholds: { maxFiles: 10, maxLines: 1000, timeoutMs: 60_000 }, debounceMs: 5 });
    q1.enqueue(['a.ts', 'b.ts']);
    await tick();
    expect(many.commits()).toBe(1);
    q1.dispose();

    const few = target();
    const q2 = new DeltaQueue({ target: few.t, logger: silentLogger, thresholds: { maxFiles: 10, timeoutMs: 60 }, debounceMs: 5 });
    q2.enqueue(['a.ts']);
    await tick(20);
    expect(few.commits()).toBe(0);
    await tick(100);
    expect(few.commits()).toBe(1);
    q2.dispose();
  });

  it('applyPending indexes what is queued at once (just in time), and flush commits', async () => {
    const { t, applied, commits } = target();
    const q = new DeltaQueue({ target: t, logger: silentLogger, thresholds: { timeoutMs: 60_000 }, debounceMs: 10_000 });
    q.enqueue(['x.go']);
    await q.applyPending();
    expect(applied).toEqual([['x.go']]);
    const s = await q.flush();
    expect(commits()).toBe(1);
    expect(s).toMatchObject({ pending: 0, uncommittedFiles: 0, commits: 1 });
    q.dispose();
  });

  it('keeps paths whose indexing failed, reports the error, and succeeds on a later attempt', async () => {
    let failing = true;
    const { t, applied } = target({ fail: () => failing });
    const q = new DeltaQueue({ target: t, logger: silentLogger, thresholds: { timeoutMs: 60_000 }, debounceMs: 5 });
    q.enqueue(['a.ts']);
    await tick();
    expect(q.state()).toMatchObject({ pending: 1, error: { code: 'INDEX_LOCKED' } });
    failing = false;
    await q.applyPending();
    expect(applied).toEqual([['a.ts']]);
    expect(q.state()).toMatchObject({ pending: 0, uncommittedFiles: 1, error: null });
    await expect(q.flush()).resolves.toMatchObject({ commits: 1 });
    q.dispose();
  });

  it('counts changed lines as a multiset difference', () => {
    expect(changedLineCount('a\nb\nc', 'a\nb\nc')).toBe(0);
    expect(changedLineCount('a\nb\nc', 'a\nB\nc\nd')).toBe(2);
    expect(changedLineCount('a\na\na', 'a')).toBe(2);
    expect(changedLineCount('', 'x\ny')).toBe(2);
  });
});
