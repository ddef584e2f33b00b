#!/usr/bin/env node
// `npm run test:vscode`: runs the extension's test suite in a desktop VS Code that
// @vscode/test-electron downloads (needs access to update.code.visualstudio.com), with the
// repository as the extension under development. Where VS Code cannot be downloaded, run the same
// kind of suite in code-server instead: test/e2e/install.sh, then `npx vitest run test/e2e`.
//
// Suite: test/vscode/suite/index.ts when present, else test/vscode/suite/smoke.ts, bundled into
// .e2e/suite/. Both export `async function run()` (the extensionTestsPath contract).
// Environment: VSCODE_TEST_VERSION (default 1.100.3, the version code-server runs),
// VLT_VSCODE_WORKSPACE (folder to open; default: a temporary two-file TypeScript workspace, which
// smoke.ts needs).
import { existsSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { downloadAndUnzipVSCode, runTests } from '@vscode/test-electron';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('../..', import.meta.url));
const cache = path.join(root, '.e2e/vscode-test'); // .e2e/ is git-ignored; .vscode-test/ is not
const version = process.env.VSCODE_TEST_VERSION ?? '1.100.3';

async function main() {
  const index = path.join(root, 'test/vscode/suite/index.ts');
  const entry = existsSync(index) ? index : path.join(root, 'test/vscode/suite/smoke.ts');
  const suite = path.join(root, '.e2e/suite', `${path.basename(entry, '.ts')}.js`);
  // Same options as buildSuite() in test/e2e/harness.ts.
  await build({
    entryPoints: [entry],
    outfile: suite,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
    sourcemap: 'inline',
    logLevel: 'warning',
  });

  let vscodeExecutablePath;
  try {
    vscodeExecutablePath = await downloadAndUnzipVSCode({ version, cachePath: cache });
  } catch (e) {
    console.error(
      `\nCould not download VS Code ${version} (${e instanceof Error ? e.message : String(e)}).\n` +
        '@vscode/test-electron needs network access to update.code.visualstudio.com.\n' +
        'Without it, run the extension tests in code-server: test/e2e/install.sh && npx vitest run test/e2e\n',
    );
    return 2;
  }

  let workspace = process.env.VLT_VSCODE_WORKSPACE;
  let tmp;
  if (!workspace) {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'vlt-vscode-test-'));
    workspace = await smokeWorkspace(tmp);
  }
  const artifacts = path.join(root, '.e2e/artifacts/electron');
  await fs.mkdir(artifacts, { recursive: true });
  try {
    await runTests({
      vscodeExecutablePath,
      extensionDevelopmentPath: root,
      extensionTestsPath: suite,
      launchArgs: [
        workspace,
        `--user-data-dir=${path.join(cache, 'user-data')}`,
        `--extensions-dir=${path.join(cache, 'extensions')}`,
      ],
      extensionTestsEnv: {
        VLT_E2E_WORKSPACE: workspace,
        VLT_E2E_EXPECT_TRUSTED: 'true', // runTests passes --disable-workspace-trust
        VLT_E2E_EXPECT_VSCODE: /^\d+\.\d+/.exec(version)?.[0] ?? '',
        VLT_E2E_ARTIFACTS: artifacts,
      },
    });
    return 0;
  } catch (e) {
    console.error(`VS Code tests failed: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  } finally {
    if (tmp) await fs.rm(tmp, { recursive: true, force: true });
  }
}

/** a.ts defines greet, b.ts calls it: what test/vscode/suite/smoke.ts looks for. */
async function smokeWorkspace(dir) {
  const ws = path.join(dir, 'workspace');
  await fs.mkdir(ws, { recursive: true });
  await fs.writeFile(path.join(ws, 'a.ts'), 'export function greet(name: string): string {\n  return `hello ${name}`;\n}\n');
  await fs.writeFile(path.join(ws, 'b.ts'), "import { greet } from './a';\n\nexport const message = greet('world');\n");
  await fs.writeFile(
    path.join(ws, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { strict: true, target: 'ES2022', module: 'commonjs' }, include: ['*.ts'] }, null, 2),
  );
  return ws;
}

process.exitCode = await main();
