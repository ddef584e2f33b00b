// @ts-check
// Test helper extension, installed by test/e2e/harness.ts next to the extensions under test.
// On startup it runs one test suite inside the extension host and writes the outcome to a file:
//
//   suite   a CommonJS module exporting `async function run(): Promise<void>`; it throws on
//           failure (the contract of @vscode/test-electron's extensionTestsPath).
//   result  JSON {ok, error?, stack?, log: string[], durationMs}, written atomically.
//
// Where they are comes from the environment of the code-server process, which the extension host
// inherits: VLT_E2E_SUITE, VLT_E2E_RESULT (VLT_E2E_ARTIFACTS is for the suite itself). Failing
// that, from vlt-e2e-run.json {suite, result} in code-server's user-data dir, found by walking up
// from this extension's global storage folder (UDIR/User/globalStorage/<id>).
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const RUN_FILE = 'vlt-e2e-run.json';

/** @param {import('vscode').ExtensionContext} context */
function activate(context) {
  const target = locate(context);
  if (!target) {
    console.log('[vlt-e2e-runner] no suite configured; idle');
    return;
  }
  // Not awaited: activation must return; the result file is what the harness waits for.
  void runSuite(target.suite, target.result, target.via);
}

/**
 * @param {import('vscode').ExtensionContext} context
 * @returns {{suite: string, result: string, via: string} | undefined}
 */
function locate(context) {
  const { VLT_E2E_SUITE: suite, VLT_E2E_RESULT: result } = process.env;
  if (suite && result) return { suite, result, via: 'environment' };
  let dir = context.globalStorageUri.fsPath;
  for (let i = 0; i < 4; i++) {
    dir = path.dirname(dir);
    const file = path.join(dir, RUN_FILE);
    if (fs.existsSync(file)) {
      const run = JSON.parse(fs.readFileSync(file, 'utf8'));
      if (run.artifacts && !process.env.VLT_E2E_ARTIFACTS) process.env.VLT_E2E_ARTIFACTS = run.artifacts;
      return { suite: run.suite, result: run.result, via: file };
    }
  }
  return undefined;
}

/**
 * Runs the suite, copying what it prints through console.* (and through the global
 * `vltE2eLog(...)`) into the result's log.
 * @param {string} suitePath
 * @param {string} resultPath
 * @param {string} via where the paths came from, for the log
 */
async function runSuite(suitePath, resultPath, via) {
  /** @type {string[]} */
  const log = [`[vlt-e2e-runner] suite ${suitePath} (via ${via})`];
  const started = Date.now();
  const g = /** @type {any} */ (globalThis);
  g.vltE2eLog = (/** @type {unknown[]} */ ...args) => log.push(format(args));
  // The extension host makes console.* accessors whose setter ignores assignments (it forwards
  // them to the window's log), so they are redefined, and their descriptors restored afterwards.
  /** @type {Map<string, PropertyDescriptor | undefined>} */
  const saved = new Map();
  for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
    const original = /** @type {(...args: unknown[]) => void} */ (/** @type {any} */ (console)[level]);
    const descriptor = Object.getOwnPropertyDescriptor(console, level);
    if (descriptor && !descriptor.configurable) continue; // cannot capture it; vltE2eLog still works
    saved.set(level, descriptor);
    Object.defineProperty(console, level, {
      configurable: true,
      enumerable: true,
      writable: true,
      value: (/** @type {unknown[]} */ ...args) => {
        log.push(level === 'log' || level === 'info' ? format(args) : `[${level}] ${format(args)}`);
        original.apply(console, args);
      },
    });
  }
  /** @type {{ok: boolean, error?: string, stack?: string, log: string[], durationMs: number}} */
  let outcome;
  try {
    const suite = require(suitePath);
    if (typeof suite.run !== 'function') throw new Error(`${suitePath} does not export run()`);
    await suite.run();
    outcome = { ok: true, log, durationMs: Date.now() - started };
  } catch (e) {
    const err = e instanceof Error ? e : new Error(String(e));
    outcome = { ok: false, error: err.message, stack: err.stack, log, durationMs: Date.now() - started };
  } finally {
    for (const [level, descriptor] of saved) {
      if (descriptor) Object.defineProperty(console, level, descriptor);
      else delete (/** @type {any} */ (console))[level];
    }
  }
  try {
    fs.mkdirSync(path.dirname(resultPath), { recursive: true });
    const tmp = `${resultPath}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(outcome, null, 2));
    fs.renameSync(tmp, resultPath); // the harness polls for the file: never let it read half of it
  } catch (e) {
    console.error('[vlt-e2e-runner] cannot write the result', e);
  }
}

/** @param {unknown[]} args */
function format(args) {
  return args
    .map((a) => (typeof a === 'string' ? a : a instanceof Error ? (a.stack ?? a.message) : safeJson(a)))
    .join(' ');
}

/** @param {unknown} value */
function safeJson(value) {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function deactivate() {}

module.exports = { activate, deactivate };
