/**
 * Warming navigation in a long-lived host: the code graph built in slices is the graph a call
 * builds at once, the warm-up runs only when the host says it is idle, stops when cancelled or
 * when the index changes under it, and a call that needs the graph meanwhile finishes it.
 */
import { cpSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../src/core/engine';
import { CodeGraph, loadResolverConfig } from '../../src/core/intel/code-graph';
import { nodeWorkspaceFs } from '../../src/node/fs';
import { tempDir } from '../helpers/cli';

const FIXTURE = path.resolve(__dirname, '../fixtures/intel/go');
const open: Engine[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((e) => e.close()));
});

async function goWorkspace(): Promise<Engine> {
  const dir = tempDir();
  cpSync(FIXTURE, dir, { recursive: true });
  const engine = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null, parseWorkers: 1 }, 'write');
  await engine.index();
  await engine.commit();
  open.push(engine);
  return engine;
}

/** A `whenIdle` the test opens and closes: the warm-up proceeds only while it is open. */
function idleSwitch() {
  let openNow = false;
  let waiters: Array<() => void> = [];
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    whenIdle: () => {
      calls++;
      return openNow ? Promise.resolve() : new Promise<void>((r) => waiters.push(r));
    },
    open() {
      openNow = true;
      for (const w of waiters.splice(0)) w();
    },
    close() {
      openNow = false;
      waiters = [];
    },
  };
}

describe('CodeGraph.builder', () => {
  it('builds, one small step at a time, exactly the graph a single build makes', async () => {
    const engine = await goWorkspace();
    const files = engine.store.listFiles();
    const config = await loadResolverConfig(engine.root, nodeWorkspaceFs, files.map((f) => f.path));
    const whole = CodeGraph.build(engine.store, config);
    const b = CodeGraph.builder(engine.store, config);
    let steps = 0;
    // A deadline in the past still resolves some imports per step, so the build ends.
    while (!b.step(0)) steps++;
    expect(steps).toBeGreaterThanOrEqual(0);
    const sliced = b.finish();
    expect(sliced.fileEdges()).toEqual(whole.fileEdges());
    expect(sliced.fileEdges().length).toBeGreaterThan(0);
    expect(b.finish()).toBe(sliced);
  });
});

describe('Engine.warmNavigation', () => {
  it('builds the graph and loads the main language grammar, and the next call uses that graph', async () => {
    const engine = await goWorkspace();
    const idle = idleSwitch();
    idle.open();
    const r = await engine.warmNavigation({ whenIdle: idle.whenIdle });
    expect(r).toMatchObject({ graph: 'built', languages: ['go'] });
    expect(r.stopped).toBeUndefined();
    const g = await engine.graph();
    expect(await engine.graph()).toBe(g);
    // A second warm-up finds everything ready.
    expect((await engine.warmNavigation({ whenIdle: idle.whenIdle })).graph).toBe('cached');
  });

  it('does nothing while the host is busy, and a call that needs the graph meanwhile builds it without waiting', async () => {
    const engine = await goWorkspace();
    const idle = idleSwitch();
    const warming = engine.warmNavigation({ whenIdle: idle.whenIdle });
    await new Promise((r) => setTimeout(r, 20));
    // Busy: the warm-up waits at its first step; the call is answered regardless.
    const a = await engine.navigator().references('util/util.go:4:6', { noLsp: true });
    expect(a.locations.length).toBeGreaterThan(0);
    const g = await engine.graph();
    idle.open();
    const r = await warming;
    expect(r.graph).toBe('cached');
    expect(await engine.graph()).toBe(g);
  });

  it('stops when cancelled, and when the index changes under it', async () => {
    const engine = await goWorkspace();
    const idle = idleSwitch();
    const abort = new AbortController();
    const cancelled = engine.warmNavigation({ whenIdle: idle.whenIdle, signal: abort.signal });
    await new Promise((r) => setTimeout(r, 10));
    abort.abort();
    idle.open();
    expect(await cancelled).toMatchObject({ stopped: 'cancelled', languages: [] });

    idle.close();
    const changed = engine.warmNavigation({ whenIdle: idle.whenIdle });
    await new Promise((r) => setTimeout(r, 10));
    writeFileSync(path.join(engine.root, 'util', 'more.go'), 'package util\n\nfunc More() int { return 2 }\n');
    await engine.index({ paths: ['util/more.go'], persist: false });
    idle.open();
    expect(await changed).toMatchObject({ stopped: 'the index changed', languages: [] });
  });

  it('re-warms only the graph after a reload, and only when its last build was cheap', async () => {
    const engine = await goWorkspace();
    const idle = idleSwitch();
    idle.open();
    await engine.warmNavigation({ whenIdle: idle.whenIdle });
    writeFileSync(path.join(engine.root, 'util', 'more.go'), 'package util\n\nfunc More() int { return 2 }\n');
    await engine.index({ paths: ['util/more.go'], persist: false });
    // The fixture's graph builds in well under the threshold.
    const r = await engine.warmNavigation({ whenIdle: idle.whenIdle, graphOnly: true });
    expect(r).toMatchObject({ graph: 'built', languages: [] });
    expect((await engine.graph()).file('util/more.go')).toBeDefined();
  });
});
