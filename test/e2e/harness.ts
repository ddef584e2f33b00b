/**
 * Runs an extension test suite inside a real VS Code extension host: code-server 4.100.3
 * (VS Code 1.100.3, installed offline by test/e2e/install.sh) opened in Debian's chromium through
 * playwright-core. @vscode/test-electron cannot download VS Code without internet access.
 *
 *   const suite = await buildSuite('test/vscode/suite/smoke.ts', '.e2e/suite/smoke.js');
 *   const r = await runSuiteInCodeServer({ workspace, extensions: [vsix], suite, artifactsDir });
 *   expect(r.ok, r.error).toBe(true);
 *
 * A suite is a CommonJS module exporting `async function run(): Promise<void>` that throws on
 * failure (@vscode/test-electron's extensionTestsPath contract); `vscode` is provided by the host.
 * The helper extension test/vscode/runner is packaged and installed next to `extensions`; on
 * startup it requires the suite and writes {ok, error?, stack?, log, durationMs} to a file this
 * harness polls. Suite and result paths reach it through the environment of the code-server
 * process (VLT_E2E_SUITE, VLT_E2E_RESULT), which the extension host inherits; the suite may write
 * files into VLT_E2E_ARTIFACTS (= artifactsDir). On failure the page's screenshot, the browser
 * console and code-server's logs (extension host, output channels) are saved in artifactsDir.
 * `trusted: false` opens the folder in Restricted Mode: workspace trust stays enabled and its
 * startup prompt is set to "never", so the untrusted folder opens without a dialog.
 *
 * Set VLT_CODE_SERVER / VLT_CHROMIUM to use other binaries, VLT_E2E_KEEP=1 to keep the temp dirs.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import { createServer } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { chromium, type Browser, type BrowserServer, type Page } from 'playwright-core';

export type { Page };

const execFileP = promisify(execFile);

/**
 * The repository root: the nearest folder above this file (or, bundled into .bench/ as
 * CommonJS where import.meta is empty, above the current directory) whose package.json is ours.
 */
export const REPO_ROOT = findRepoRoot();

function findRepoRoot(): string {
  const start = typeof __dirname === 'string' ? __dirname : import.meta.url ? path.dirname(fileURLToPath(import.meta.url)) : process.cwd();
  for (let dir = start; ; dir = path.dirname(dir)) {
    try {
      if ((JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string }).name === 'vlt-oracle') return dir;
    } catch {
      // No package.json here; look further up.
    }
    if (path.dirname(dir) === dir) return process.cwd();
  }
}
const RUNNER_DIR = path.join(REPO_ROOT, 'test/vscode/runner');
/** The runner extension's id (publisher.name in test/vscode/runner/package.json). */
const RUNNER_ID = 'vlt-oracle-test.vlt-e2e-runner';
const VSCE = path.join(REPO_ROOT, 'node_modules/@vscode/vsce/vsce');
export const CHROMIUM = process.env.VLT_CHROMIUM ?? '/usr/bin/chromium';
// Flags from /work/shared/recipes/vscode-e2e.md: no sandbox (root, containers), no network chatter.
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

const EXIT_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** User settings every run starts from; opts.settings is merged over them. */
const DEFAULT_SETTINGS: Record<string, unknown> = {
  'telemetry.telemetryLevel': 'off',
  'workbench.startupEditor': 'none',
  'workbench.enableExperiments': false,
  'workbench.tips.enabled': false,
  'extensions.autoUpdate': false,
  'extensions.autoCheckUpdates': false,
  'extensions.ignoreRecommendations': true,
  'update.mode': 'none',
  // No network: the TypeScript server must not try to fetch @types packages.
  'typescript.disableAutomaticTypeAcquisition': true,
};

export interface RunSuiteOptions {
  /** Folder opened in the workbench. */
  workspace: string;
  /** .vsix files installed before the start (the extension under test). */
  extensions: string[];
  /** Absolute path of the compiled suite (CommonJS, exports run()). */
  suite: string;
  /** User settings.json entries, merged over DEFAULT_SETTINGS. */
  settings?: Record<string, unknown>;
  /** Default true. false: the folder opens in Restricted Mode (vscode.workspace.isTrusted false). */
  trusted?: boolean;
  /** Extra environment of code-server, and so of the extension host and the suite. */
  env?: Record<string, string>;
  /** For the whole run, start to result; default 120 s. */
  timeoutMs?: number;
  /** Failure artifacts (screenshot, logs) and the suite's own files (VLT_E2E_ARTIFACTS). */
  artifactsDir: string;
  /**
   * Drives the workbench page as a user would (Playwright), while the suite runs in the
   * extension host; its failure fails the run. The run ends when both are done.
   */
  drive?: (page: Page, run: { logsDir: string }) => Promise<void>;
}

export interface RunSuiteResult {
  ok: boolean;
  error?: string;
  stack?: string;
  /** What the suite printed through console.* while it ran. */
  log: string[];
  /** Of the whole run, code-server start included. */
  durationMs: number;
  /** Contents of the extension host's log (remoteexthost.log), when there was one. */
  exthostLog?: string;
  /** Milliseconds from the start to the end of each phase reached (install, server, browser, suite). */
  timings: Record<string, number>;
}

interface SuiteOutcome {
  ok: boolean;
  error?: string;
  stack?: string;
  log: string[];
  durationMs: number;
}

/** The code-server binary: VLT_CODE_SERVER, else the one test/e2e/install.sh installs. */
export function codeServerBin(): string {
  return process.env.VLT_CODE_SERVER ?? path.join(REPO_ROOT, '.e2e/code-server/node_modules/.bin/code-server');
}

export function codeServerInstalled(): boolean {
  return existsSync(codeServerBin()) && existsSync(CHROMIUM);
}

/** Packages the extension as it ships (`npm run package`'s vsce call) into `outFile`; build dist/ first. */
export async function packageVsix(outFile: string): Promise<string> {
  await execFileP(process.execPath, [VSCE, 'package', '--no-dependencies', '--allow-missing-repository', '--skip-license', '--no-rewrite-relative-links', '--out', outFile], { cwd: REPO_ROOT });
  return outFile;
}

/** Bundles a suite for the extension host: CommonJS, `vscode` left to the host. */
export async function buildSuite(entry: string, outFile: string): Promise<string> {
  await build({
    entryPoints: [entry],
    outfile: outFile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
    sourcemap: 'inline',
    logLevel: 'warning',
  });
  return path.resolve(outFile);
}

export async function runSuiteInCodeServer(opts: RunSuiteOptions): Promise<RunSuiteResult> {
  const started = Date.now();
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const deadline = started + timeoutMs;
  const trusted = opts.trusted ?? true;
  const bin = codeServerBin();
  if (!existsSync(bin)) throw new Error(`code-server not found at ${bin}: run test/e2e/install.sh`);

  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'vlt-e2e-'));
  const dirs = {
    extensions: path.join(tmp, 'extensions'),
    userData: path.join(tmp, 'user-data'),
    xdgConfig: path.join(tmp, 'user-data/xdg-config'),
    xdgData: path.join(tmp, 'user-data/xdg-data'),
    xdgCache: path.join(tmp, 'user-data/xdg-cache'),
    // Chromium's own: its crash reports and dconf cache would otherwise land in ~/.config, ~/.cache.
    chromiumHome: path.join(tmp, 'chromium'),
  };
  for (const d of Object.values(dirs)) await fs.mkdir(d, { recursive: true });
  await fs.mkdir(opts.artifactsDir, { recursive: true });
  const resultFile = path.join(tmp, 'result.json');
  const serverLog = path.join(tmp, 'code-server.log');
  const config = path.join(tmp, 'config.yaml');
  const port = await freePort();
  await fs.writeFile(config, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
  await writeSettings(dirs.userData, opts.settings ?? {}, trusted);
  // Second way to the runner, should the environment not reach the extension host.
  await fs.writeFile(
    path.join(dirs.userData, 'vlt-e2e-run.json'),
    JSON.stringify({ suite: opts.suite, result: resultFile, artifacts: opts.artifactsDir }),
  );

  const env = cleanEnv({
    XDG_CONFIG_HOME: dirs.xdgConfig,
    XDG_DATA_HOME: dirs.xdgData,
    XDG_CACHE_HOME: dirs.xdgCache, // VS Code's device id file
    VLT_E2E_SUITE: opts.suite,
    VLT_E2E_RESULT: resultFile,
    VLT_E2E_ARTIFACTS: opts.artifactsDir,
    ...opts.env,
  });
  const common = ['--config', config, '--extensions-dir', dirs.extensions, '--user-data-dir', dirs.userData];

  let server: ChildProcess | undefined;
  let browserServer: BrowserServer | undefined;
  let browser: Browser | undefined;
  let page: Page | undefined;
  const consoleLines: string[] = [];
  // Should the test process die mid-run (Ctrl-C, killed worker), leave nothing behind: code-server
  // and chromium run in process groups of their own, which the terminal's signals do not reach.
  // (playwright-core's own signal handlers are off: they end in process.exit(), which a vitest
  // worker intercepts, and the orphaned worker then spins.)
  const onExit = (): void => {
    killGroup(server?.pid, 'SIGKILL');
    killGroup(browserServer?.process().pid, 'SIGKILL');
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    onExit();
    unhook();
    if (!process.env.VLT_E2E_KEEP) rmSync(tmp, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    // When nobody else handles it, die of it as the process would have without this handler.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  const unhook = (): void => {
    process.off('exit', onExit);
    for (const s of EXIT_SIGNALS) process.off(s, onSignal);
  };
  process.on('exit', onExit);
  for (const s of EXIT_SIGNALS) process.on(s, onSignal);

  let outcome: SuiteOutcome | undefined;
  let failure: string | undefined;
  let serverGone: string | undefined; // why code-server stopped, once it has
  const timings: Record<string, number> = {};
  const phase = (name: string): void => void (timings[name] = Date.now() - started);
  try {
    const vsixes = [await runnerVsix(), ...opts.extensions.map((e) => path.resolve(e))];
    await execFileP(bin, [...common, ...vsixes.flatMap((v) => ['--install-extension', v])], {
      env,
      timeout: Math.max(1, deadline - Date.now()),
    });
    phase('install');

    // The runner may use proposed APIs (a suite registers a fake language model with
    // `vscode.lm.registerChatModelProvider`, VS Code 1.100's proposal): test-only, never the extension.
    const args = [...common, '--disable-telemetry', '--disable-update-check', '--ignore-last-opened', '--enable-proposed-api', RUNNER_ID];
    if (trusted) args.push('--disable-workspace-trust');
    const out = await fs.open(serverLog, 'w');
    try {
      // Own process group: the extension host, the TypeScript server and the pty host all die with it.
      server = spawn(bin, args, { env, detached: true, stdio: ['ignore', out.fd, out.fd] });
    } finally {
      await out.close(); // the child keeps its own copy of the descriptor
    }
    server.once('exit', (code, signal) => (serverGone ??= `code-server exited early (code ${code}, signal ${signal})`));
    server.once('error', (e) => (serverGone ??= `code-server did not start: ${e.message}`));
    await waitForHttp(`http://127.0.0.1:${port}/healthz`, deadline, () => serverGone);
    phase('server');

    browserServer = await chromium.launchServer({
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      env: { ...cleanEnv({}), XDG_CONFIG_HOME: dirs.chromiumHome, XDG_CACHE_HOME: dirs.chromiumHome },
    });
    browser = await chromium.connect(browserServer.wsEndpoint());
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('console', (m) => consoleLines.push(`[${m.type()}] ${m.text()}`));
    page.on('pageerror', (e) => consoleLines.push(`[pageerror] ${e.message}`));
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(path.resolve(opts.workspace))}`, {
      timeout: Math.max(1, deadline - Date.now()),
    });
    phase('browser');

    // The runner writes the result file (atomically) when the suite is done.
    const driven = opts.drive
      ? opts.drive(page, { logsDir: path.join(dirs.userData, 'logs') }).then(
          () => phase('drive'),
          (e: unknown) => void (failure ??= `driving the page failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`),
        )
      : Promise.resolve();
    outcome = await pollResult(resultFile, deadline, () => serverGone);
    await driven;
    if (!outcome) failure ??= serverGone ?? `timed out after ${timeoutMs} ms waiting for the suite's result`;
    else phase('suite');
  } catch (e) {
    failure = e instanceof Error ? e.message : String(e);
  }

  const ok = outcome?.ok === true && !failure;
  try {
    if (!ok) await saveFailureArtifacts(opts.artifactsDir, page, consoleLines, dirs.userData, serverLog);
  } finally {
    await stopBrowser(browser, browserServer);
    await stopServer(server);
    unhook();
  }
  const exthostLog = await readExthostLog(dirs.userData);
  if (!process.env.VLT_E2E_KEEP) await fs.rm(tmp, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  else console.log(`[vlt-e2e] kept ${tmp}`);

  return {
    ok,
    error: failure ?? outcome?.error,
    stack: outcome?.stack,
    log: outcome?.log ?? [],
    durationMs: Date.now() - started,
    exthostLog,
    timings,
  };
}

/** The runner extension as a .vsix, packaged once per content (cached in .e2e/cache/). */
let runnerVsixPromise: Promise<string> | undefined;
function runnerVsix(): Promise<string> {
  runnerVsixPromise ??= (async () => {
    const files = ['package.json', 'extension.js'];
    const hash = createHash('sha256');
    for (const f of files) hash.update(await fs.readFile(path.join(RUNNER_DIR, f)));
    const cache = path.join(REPO_ROOT, '.e2e/cache');
    const out = path.join(cache, `vlt-e2e-runner-${hash.digest('hex').slice(0, 12)}.vsix`);
    if (existsSync(out)) return out;
    await fs.mkdir(cache, { recursive: true });
    const work = await fs.mkdtemp(path.join(os.tmpdir(), 'vlt-e2e-runner-'));
    try {
      for (const f of files) await fs.copyFile(path.join(RUNNER_DIR, f), path.join(work, f));
      const partial = `${out}.${process.pid}.tmp.vsix`;
      await execFileP(
        process.execPath,
        [VSCE, 'package', '--no-dependencies', '--allow-missing-repository', '--skip-license', '-o', partial],
        { cwd: work },
      );
      await fs.rename(partial, out);
    } finally {
      await fs.rm(work, { recursive: true, force: true });
    }
    return out;
  })();
  runnerVsixPromise.catch(() => (runnerVsixPromise = undefined));
  return runnerVsixPromise;
}

async function writeSettings(userData: string, settings: Record<string, unknown>, trusted: boolean): Promise<void> {
  const merged: Record<string, unknown> = { ...DEFAULT_SETTINGS, ...settings };
  if (!trusted) {
    // Restricted Mode without a human: trust stays on, and the "Do you trust the authors?" dialog
    // is never shown, so the folder simply opens untrusted.
    merged['security.workspace.trust.enabled'] = true;
    merged['security.workspace.trust.startupPrompt'] = 'never';
  }
  await fs.mkdir(path.join(userData, 'User'), { recursive: true });
  await fs.writeFile(path.join(userData, 'User/settings.json'), JSON.stringify(merged, null, 2));
}

/**
 * The environment of code-server. VSCODE_* variables of an editor terminal the tests run in would
 * make code-server's CLI talk to that editor (VSCODE_IPC_HOOK_CLI) instead of starting its own.
 */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('VSCODE_') || k === 'NODE_OPTIONS' || k === 'ELECTRON_RUN_AS_NODE') continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (addr && typeof addr === 'object' ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function waitForHttp(url: string, deadline: number, gone: () => string | undefined): Promise<void> {
  for (;;) {
    const why = gone();
    if (why) throw new Error(why);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`code-server did not answer ${url} in time`);
    await sleep(200);
  }
}

/** The suite's outcome; undefined at the deadline or once code-server is gone. */
async function pollResult(file: string, deadline: number, gone: () => string | undefined): Promise<SuiteOutcome | undefined> {
  while (Date.now() < deadline && !gone()) {
    try {
      return JSON.parse(await fs.readFile(file, 'utf8')) as SuiteOutcome;
    } catch {
      await sleep(250);
    }
  }
  return undefined;
}

async function saveFailureArtifacts(
  dir: string,
  page: Page | undefined,
  consoleLines: string[],
  userData: string,
  serverLog: string,
): Promise<void> {
  const attempts: Promise<unknown>[] = [
    fs.writeFile(path.join(dir, 'browser-console.log'), consoleLines.join('\n') + '\n'),
    fs.copyFile(serverLog, path.join(dir, 'code-server.log')),
    copyLogs(path.join(userData, 'logs'), path.join(dir, 'logs')),
  ];
  if (page) attempts.push(page.screenshot({ path: path.join(dir, 'screenshot.png'), timeout: 10_000 }));
  // Best effort: one missing piece must not hide the others (or the test's own error).
  await Promise.allSettled(attempts);
}

/** Copies every *.log under UDIR/logs (extension host, output channels, server) keeping the tree. */
async function copyLogs(from: string, to: string): Promise<void> {
  const entries = await fs.readdir(from, { recursive: true, withFileTypes: true });
  for (const e of entries) {
    if (!e.isFile() || !e.name.endsWith('.log')) continue;
    const src = path.join(e.parentPath, e.name);
    const dst = path.join(to, path.relative(from, src));
    await fs.mkdir(path.dirname(dst), { recursive: true });
    await fs.copyFile(src, dst);
  }
}

async function readExthostLog(userData: string): Promise<string | undefined> {
  const logs = path.join(userData, 'logs');
  const entries = await fs.readdir(logs, { recursive: true, withFileTypes: true }).catch(() => []);
  const found = entries.find((e) => e.isFile() && e.name === 'remoteexthost.log' && path.basename(e.parentPath) === 'exthost1');
  return found ? fs.readFile(path.join(found.parentPath, found.name), 'utf8') : undefined;
}

async function stopBrowser(browser: Browser | undefined, browserServer: BrowserServer | undefined): Promise<void> {
  await browser?.close().catch(() => undefined);
  if (!browserServer) return;
  // close() lets chromium shut down; kill() SIGKILLs its process group if it does not in time.
  const closed = await Promise.race([browserServer.close().then(() => true), sleep(5_000).then(() => false)]).catch(() => false);
  if (!closed) await browserServer.kill().catch(() => undefined);
}

async function stopServer(server: ChildProcess | undefined): Promise<void> {
  if (!server?.pid) return;
  const exited =
    server.exitCode !== null || server.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((resolve) => server.once('exit', () => resolve()));
  killGroup(server.pid, 'SIGTERM');
  if (!(await Promise.race([exited.then(() => true), sleep(5_000).then(() => false)]))) killGroup(server.pid, 'SIGKILL');
  await exited;
  // code-server gone; children that ignored SIGTERM (extension host, tsserver) may linger in its group.
  await sleep(200);
  killGroup(server.pid, 'SIGKILL');
}

/** Signals the process group led by pid (spawned detached); no-op when it is gone. */
function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: nothing left in the group
  }
}
