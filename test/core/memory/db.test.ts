import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { VltError } from '../../../src/core/errors';
import { MemoryDb } from '../../../src/core/memory/db';
import { ThreadStore } from '../../../src/core/memory/threads';
import type { Logger } from '../../../src/core/ports';
import { waitForLock } from '../../../src/core/store/lock';
import { tempWorkspace } from './setup';

let ws: { dir: string; cleanup: () => void };
let warnings: string[];
const logger: Logger = { debug() {}, info() {}, warn: (m) => warnings.push(m), error() {} };

beforeEach(() => {
  ws = tempWorkspace();
  warnings = [];
});

afterEach(() => ws.cleanup());

describe('MemoryDb', () => {
  it('creates nothing until the first write, then memory.db and its text pack under .vlt/', async () => {
    const db = await MemoryDb.open(ws.dir, logger);
    const threads = new ThreadStore(db);
    expect(await threads.list()).toEqual([]);
    expect(existsSync(path.join(ws.dir, '.vlt'))).toBe(false);
    await threads.push('t', 'x');
    expect(readdirSync(path.join(ws.dir, '.vlt')).sort()).toEqual(['memory-text.pack', 'memory.db']);
    await db.close();
  });

  it('moves an unusable file aside and starts afresh', async () => {
    mkdirSync(path.join(ws.dir, '.vlt'));
    writeFileSync(path.join(ws.dir, '.vlt', 'memory.db'), 'this is not a database');
    const db = await MemoryDb.open(ws.dir, logger);
    const threads = new ThreadStore(db);
    await threads.push('t', 'after recovery');
    expect((await threads.read('t')).entry_count).toBe(1);
    expect(readdirSync(path.join(ws.dir, '.vlt')).some((n) => n.startsWith('memory.db.unusable-'))).toBe(true);
    expect(warnings.some((w) => /cannot be used/.test(w))).toBe(true);
    await db.close();
  });

  it('takes over the lock of a dead process and waits for a live one', async () => {
    mkdirSync(path.join(ws.dir, '.vlt'));
    const lock = path.join(ws.dir, '.vlt', 'memory.lock');
    // A pid far above any real one: no such process.
    writeFileSync(lock, JSON.stringify({ pid: 2 ** 22 + 12345, hostname: hostname(), startedAt: '' }));
    const db = await MemoryDb.open(ws.dir, logger);
    await new ThreadStore(db).push('t', 'x');
    expect(warnings.some((w) => /taking over a lock of pid/.test(w))).toBe(true);
    expect(existsSync(lock)).toBe(false);

    // A live holder (this process, through the same helper) delays the writer until released.
    const held = await waitForLock(lock, { timeoutMs: 1000, busyError: () => new VltError('MEMORY_LOCKED', 'busy') });
    let pushed = false;
    const pending = new ThreadStore(db).push('t', 'y').then(() => (pushed = true));
    await new Promise((r) => setTimeout(r, 100));
    expect(pushed).toBe(false);
    held.release();
    await pending;
    expect(pushed).toBe(true);
    await db.close();
  });

  it('gives up with MEMORY_LOCKED when a live process holds the lock too long', async () => {
    const lock = path.join(ws.dir, 'x.lock');
    const busy = () => new VltError('MEMORY_LOCKED', 'busy');
    const first = await waitForLock(lock, { timeoutMs: 1000, busyError: busy });
    // A caller of this process waits in memory, bounded by its own deadline.
    await expect(waitForLock(lock, { timeoutMs: 150, busyError: busy })).rejects.toMatchObject({ code: 'MEMORY_LOCKED' });
    const third = waitForLock(lock, { timeoutMs: 2000, busyError: busy });
    setTimeout(() => first.release(), 100);
    (await third).release();
    expect(existsSync(lock)).toBe(false);
    // Another live process (our parent) holding the file: the wait times out.
    writeFileSync(lock, JSON.stringify({ pid: process.ppid, hostname: hostname(), startedAt: '' }));
    await expect(waitForLock(lock, { timeoutMs: 150, busyError: () => new VltError('MEMORY_LOCKED', 'busy') })).rejects.toMatchObject({ code: 'MEMORY_LOCKED' });
  });
});
