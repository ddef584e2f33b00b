/**
 * The built .vsix in a real VS Code: code-server 4.100.3 (VS Code 1.100.3) in Debian's chromium,
 * with test/vscode/suite/index.ts running inside its extension host, once in a trusted folder
 * and once in Restricted Mode. Needs test/e2e/install.sh; skipped without it, failed when
 * VLT_E2E=required (CI). Artifacts of a failed run go to .e2e/artifacts/extension/.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSuite, CHROMIUM, codeServerBin, packageVsix, REPO_ROOT, runSuiteInCodeServer, type RunSuiteResult } from './harness';

const missing = [codeServerBin(), CHROMIUM].filter((p) => !existsSync(p)).join(', ');
const TIMEOUT = 240_000;

async function workspaceCopy(dir: string): Promise<string> {
  await fs.cp(path.join(REPO_ROOT, 'test/fixtures/lsp/ts-project'), dir, { recursive: true });
  // Python has no language server in this VS Code: the extension answers it from its index.
  await fs.mkdir(path.join(dir, 'tools'));
  await fs.writeFile(path.join(dir, 'tools/__init__.py'), '');
  await fs.writeFile(path.join(dir, 'tools/helpers.py'), 'def slugify(text):\n    return "-".join(text.lower().split())\n');
  await fs.writeFile(path.join(dir, 'tools/report.py'), 'from tools.helpers import slugify\n\n\ndef title(name):\n    return slugify(name).upper()\n');
  return dir;
}

describe.skipIf(Boolean(missing))(missing ? `e2e: the extension in code-server (skipped: ${missing} missing; run test/e2e/install.sh)` : 'e2e: the extension in code-server', () => {
  let tmp = '';
  let vsix = '';
  let suite = '';
  const artifacts = path.join(REPO_ROOT, '.e2e/artifacts/extension');

  beforeAll(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'vlt-e2e-ext-'));
    if (!existsSync(path.join(REPO_ROOT, 'dist/cli.js'))) await promisify(execFile)(process.execPath, ['esbuild.mjs'], { cwd: REPO_ROOT });
    vsix = path.join(tmp, 'vlt-oracle.vsix');
    await packageVsix(vsix);
    suite = await buildSuite(path.join(REPO_ROOT, 'test/vscode/suite/index.ts'), path.join(tmp, 'suite/index.js'));
    await fs.rm(artifacts, { recursive: true, force: true });
  }, 120_000);

  afterAll(async () => {
    if (tmp && !process.env.VLT_E2E_KEEP) await fs.rm(tmp, { recursive: true, force: true });
  });

  for (const trusted of [true, false]) {
    it(
      trusted ? 'indexes, answers where used through the editor and the fallback, batches saves, serves MCP, sees outside commits' : 'Restricted Mode: navigation works, no MCP endpoint',
      async () => {
        const workspace = await workspaceCopy(path.join(tmp, trusted ? 'trusted' : 'restricted'));
        const artifactsDir = path.join(artifacts, trusted ? 'trusted' : 'restricted');
        const r = await runSuiteInCodeServer({ workspace, extensions: [vsix], suite, trusted, timeoutMs: 200_000, artifactsDir });
        console.log(`${trusted ? 'trusted' : 'restricted'}: ${r.ok ? 'ok' : 'FAILED'} in ${r.durationMs} ms ${JSON.stringify(r.timings)}\n  ${r.log.join('\n  ')}`);
        expect(r.ok, describeFailure(r, artifactsDir)).toBe(true);
      },
      TIMEOUT,
    );
  }
});

function describeFailure(r: RunSuiteResult, artifactsDir: string): string {
  return [r.error ?? 'failed', r.stack, '--- suite log:', ...r.log, `--- artifacts: ${artifactsDir}`].filter(Boolean).join('\n');
}
