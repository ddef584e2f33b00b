// Bundles the CLI/MCP entry, the parse worker, the VS Code extension and the webview, and
// copies the WebAssembly grammars and tree-sitter queries next to the bundles.
import * as esbuild from 'esbuild';
import { cpSync, mkdirSync, readdirSync, readFileSync, existsSync, chmodSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const watch = process.argv.includes('--watch');
const out = 'dist';
mkdirSync(join(out, 'wasm'), { recursive: true });

const node = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: true,
  logLevel: 'warning',
  // sql.js and web-tree-sitter locate their .wasm files at run time; we pass the path explicitly.
  external: ['vscode'],
};

// gpt-tokenizer is half the CLI's code (its o200k tables, 3.4 MB). Only budgets for a model
// use it, and load it on first use, so it is a bundle of its own (dist/tokenizer.js) that the
// CLI and the extension require when asked: every other command no longer reads and compiles it.
const tokenizerApart = {
  name: 'tokenizer-apart',
  setup(b) {
    b.onResolve({ filter: /^gpt-tokenizer$/ }, () => ({ path: 'gpt-tokenizer', namespace: 'tokenizer-apart' }));
    b.onLoad({ filter: /.*/, namespace: 'tokenizer-apart' }, () => ({ contents: "module.exports = require('./tokenizer.js');", loader: 'js' }));
    b.onResolve({ filter: /^\.\/tokenizer\.js$/, namespace: 'tokenizer-apart' }, () => ({ path: './tokenizer.js', external: true }));
  },
};

const entries = [
  // The `vlt` program is a thin front (cli.js: --version, --help, forwarding to the workspace
  // daemon) and the full CLI it loads only to run a command itself (cli-main.js).
  { ...node, entryPoints: { cli: 'src/cli/front.ts' }, outdir: out, banner: { js: '#!/usr/bin/env node' } },
  { ...node, entryPoints: { 'cli-main': 'src/cli/main.ts' }, outdir: out, plugins: [tokenizerApart] },
  { ...node, entryPoints: { tokenizer: 'gpt-tokenizer' }, outdir: out },
  // `vlt coderag status` from the index's summary, without the full CLI (src/cli/status-fast.ts).
  { ...node, entryPoints: { 'status-fast': 'src/cli/status-fast.ts' }, outdir: out },
  { ...node, entryPoints: { 'parse-worker': 'src/core/parse/worker.ts' }, outdir: out },
];
if (existsSync('src/vscode/extension.ts')) entries.push({ ...node, entryPoints: { extension: 'src/vscode/extension.ts' }, outdir: out, plugins: [tokenizerApart] });
if (existsSync('webview/main.ts')) entries.push({ bundle: true, platform: 'browser', format: 'iife', target: 'es2022', entryPoints: { webview: 'webview/main.ts' }, outdir: out, sourcemap: true });
// The chat: one bundle for the VS Code view and the browser page; minified, it is measured against its size budget.
if (existsSync('webview/chat/main.ts')) entries.push({ bundle: true, minify: true, platform: 'browser', format: 'iife', target: 'es2022', entryPoints: { chat: 'webview/chat/main.ts' }, outdir: out, sourcemap: true, legalComments: 'none' });

// Grammars and runtimes: copied so that the bundles do not depend on node_modules layout.
// Packages are located through node_modules directly: some (web-tree-sitter) do not export
// their package.json, and the build always runs from the repository root.
const pkgDir = (pkg) => {
  const dir = join(process.cwd(), 'node_modules', pkg);
  if (!existsSync(dir)) throw new Error(`${pkg} is not installed; run npm ci`);
  return dir;
};
const copyWasm = (pkg, files) => {
  const dir = pkgDir(pkg);
  for (const f of files ?? readdirSync(dir).filter((f) => f.endsWith('.wasm'))) cpSync(join(dir, f), join(out, 'wasm', f));
};
copyWasm('web-tree-sitter', ['web-tree-sitter.wasm']);
cpSync(join(pkgDir('sql.js'), 'dist', 'sql-wasm.wasm'), join(out, 'wasm', 'sql-wasm.wasm'));
cpSync(join(pkgDir('@repomix/tree-sitter-wasms'), 'out'), join(out, 'wasm'), { recursive: true });
copyWasm('@tree-sitter-grammars/tree-sitter-kotlin', ['tree-sitter-kotlin.wasm']);
for (const [pkg, file] of [
  ['tree-sitter-bash', 'tree-sitter-bash.wasm'],
  ['tree-sitter-elixir', 'tree-sitter-elixir.wasm'],
  ['@tree-sitter-grammars/tree-sitter-lua', 'tree-sitter-lua.wasm'],
  ['@tree-sitter-grammars/tree-sitter-zig', 'tree-sitter-zig.wasm'],
  ['tree-sitter-haskell', 'tree-sitter-haskell.wasm'],
  ['tree-sitter-objc', 'tree-sitter-objc.wasm'],
  ['tree-sitter-ocaml', 'tree-sitter-ocaml.wasm'],
  ['tree-sitter-scala', 'tree-sitter-scala.wasm'],
])
  copyWasm(pkg, [file]);
if (existsSync('src/core/parse/queries')) cpSync('src/core/parse/queries', join(out, 'queries'), { recursive: true });

if (watch) {
  for (const e of entries) await (await esbuild.context(e)).watch();
} else {
  await Promise.all(entries.map((e) => esbuild.build(e)));
  if (existsSync(join(out, 'cli.js'))) chmodSync(join(out, 'cli.js'), 0o755);
  // esbuild escapes non-ASCII characters in code but keeps them in comments. An all-ASCII
  // bundle is read as Latin-1 (src/cli/code-cache.ts), about 20 ms faster than UTF-8 for the
  // 4.6 MB CLI, so the comments' characters become "?", one per UTF-16 unit (source map
  // columns stay right).
  for (const f of ['cli-main.js']) {
    const file = join(out, f);
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.replace(/[^\x00-\x7f]/g, '?'));
  }
  // Every command's help, for the front to print without loading the full CLI.
  const help = execFileSync(process.execPath, ['-e', `process.stdout.write(JSON.stringify(require(${JSON.stringify(join(process.cwd(), out, 'cli-main.js'))}).helpTexts()))`], { encoding: 'utf8' });
  writeFileSync(join(out, 'help.json'), help);
}
