/**
 * Loads the full CLI bundle (cli-main.js, 4.6 MB) with V8's code cache: compiling it takes
 * about 150 ms on every command that runs in its own process, about 50 ms with the cache. The
 * cache lives in the user's cache folder (`$XDG_CACHE_HOME/vlt`, else `~/.cache/vlt`), one file
 * per build of the bundle and Node version, written after the first load; a cache V8 rejects,
 * or no cache folder at all, only costs the plain compile. Part of the thin front: builtins only.
 */
import { isAscii } from 'node:buffer';
import * as fs from 'node:fs';
import { createRequire, wrap } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vm from 'node:vm';

interface CliMain {
  runInProcess(argv: readonly string[], opts?: { indexRead?: { file: string; read: Promise<{ bytes: Uint8Array; stats: fs.Stats } | undefined> } }): void;
}

function cacheDir(): string | undefined {
  const xdg = process.env.XDG_CACHE_HOME;
  if (xdg && path.isAbsolute(xdg)) return path.join(xdg, 'vlt');
  const home = process.env.HOME ?? os.homedir();
  return home ? path.join(home, '.cache', 'vlt') : undefined;
}

/** Requires `file` as CommonJS, through the code cache when there is one. */
export function loadMain(file: string): CliMain {
  if (process.env.VLT_CODE_CACHE === '0') return plainRequire(file);
  let source: string;
  let stat: fs.Stats;
  try {
    const bytes = fs.readFileSync(file);
    // The build makes the bundle ASCII (esbuild.mjs): read as Latin-1, with no UTF-8 decoding.
    source = isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
    stat = fs.statSync(file);
  } catch {
    return plainRequire(file);
  }
  const dir = cacheDir();
  const key = `cli-main-${stat.size}-${Math.round(stat.mtimeMs)}-${process.versions.v8}-${process.arch}.cache`;
  const cacheFile = dir ? path.join(dir, key) : undefined;
  let cachedData: Buffer | undefined;
  try {
    if (cacheFile) cachedData = fs.readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  const script = new vm.Script(wrap(source), { filename: file, ...(cachedData ? { cachedData } : {}) });
  const mod = { exports: {} as unknown, filename: file, id: file, loaded: false };
  const fn = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: unknown, filename: string, dirname: string) => void;
  fn.call(mod.exports, mod.exports, createRequire(file), mod, file, path.dirname(file));
  mod.loaded = true;
  if (cacheFile && (!cachedData || script.cachedDataRejected)) writeCache(cacheFile, script);
  return mod.exports as CliMain;
}

/** Written once, atomically (temp file + rename), by whichever process gets there first. */
function writeCache(cacheFile: string, script: vm.Script): void {
  try {
    fs.mkdirSync(path.dirname(cacheFile), { recursive: true, mode: 0o700 });
    const tmp = `${cacheFile}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, script.createCachedData(), { mode: 0o600 });
    fs.renameSync(tmp, cacheFile);
    // The caches of other builds for this V8 go: one file per build would pile up with every
    // upgrade (another V8, such as an editor's, keeps its own).
    const suffix = `-${process.versions.v8}-${process.arch}.cache`;
    for (const f of fs.readdirSync(path.dirname(cacheFile))) {
      if (f.startsWith('cli-main-') && f.endsWith(suffix) && f !== path.basename(cacheFile)) fs.rmSync(path.join(path.dirname(cacheFile), f), { force: true });
    }
  } catch {
    // A read-only or missing cache folder: every command compiles the bundle, as without a cache.
  }
}

function plainRequire(file: string): CliMain {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a bundle beside this one, by path
  return require(file) as CliMain;
}
