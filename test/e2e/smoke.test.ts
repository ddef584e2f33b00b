/**
 * Runs test/vscode/suite/smoke.ts inside code-server's extension host, once in a trusted folder
 * and once in Restricted Mode. Needs test/e2e/install.sh; without it the tests are skipped, or
 * fail when VLT_E2E=required (CI).
 */
import { existsSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSuite, CHROMIUM, codeServerBin, REPO_ROOT, runSuiteInCodeServer, type RunSuiteResult } from './harness';

const missing = [codeServerBin(), CHROMIUM].filter((p) => !existsSync(p)).join(', ');
const installed = !missing;
const required = process.env.VLT_E2E === 'required';
const TIMEOUT = 180_000;

if (!installed && required) {
  describe('e2e (VLT_E2E=required)', () => {
    it('code-server and chromium are installed', () => {
      expect.fail(`${missing} missing: run test/e2e/install.sh`);
    });
  });
}

describe.skipIf(!installed)(
  installed ? 'e2e: smoke suite in code-server' : `e2e: smoke suite in code-server (skipped: ${missing} missing; run test/e2e/install.sh)`,
  () => {
    let tmp = '';
    let workspace = '';
    let suite = '';
    const artifacts = path.join(REPO_ROOT, '.e2e/artifacts/smoke');

    beforeAll(async () => {
      tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'vlt-e2e-smoke-'));
      suite = await buildSuite(path.join(REPO_ROOT, 'test/vscode/suite/smoke.ts'), path.join(tmp, 'suite/smoke.js'));
      workspace = path.join(tmp, 'workspace');
      await fs.mkdir(workspace);
      await fs.writeFile(path.join(workspace, 'a.ts'), 'export function greet(name: string): string {\n  return `hello ${name}`;\n}\n');
      await fs.writeFile(path.join(workspace, 'b.ts'), "import { greet } from './a';\n\nexport const message = greet('world');\n");
      await fs.writeFile(
        path.join(workspace, 'tsconfig.json'),
        JSON.stringify({ compilerOptions: { strict: true, target: 'ES2022', module: 'commonjs' }, include: ['*.ts'] }, null, 2),
      );
      await fs.rm(artifacts, { recursive: true, force: true });
    });

    afterAll(async () => {
      if (tmp) await fs.rm(tmp, { recursive: true, force: true });
    });

    // Sequential on purpose: code-server and chromium take about 1 GB per run.
    for (const trusted of [true, false]) {
      it(
        trusted ? 'runs in a trusted workspace' : 'runs in Restricted Mode (untrusted workspace)',
        async () => {
          const artifactsDir = path.join(artifacts, trusted ? 'trusted' : 'restricted');
          const r = await runSuiteInCodeServer({
            workspace,
            extensions: [],
            suite,
            trusted,
            env: { VLT_E2E_WORKSPACE: workspace, VLT_E2E_EXPECT_TRUSTED: String(trusted) },
            timeoutMs: 150_000,
            artifactsDir,
          });
          console.log(`${trusted ? 'trusted' : 'restricted'}: ${r.ok ? 'ok' : 'FAILED'} in ${r.durationMs} ms ${JSON.stringify(r.timings)}\n  ${r.log.join('\n  ')}`);
          expect(r.ok, describeFailure(r, artifactsDir)).toBe(true);
          // The runner found the suite through code-server's environment, not the fallback file.
          expect(r.log[0]).toMatch(/via environment/);
          expect(r.log.join('\n')).toMatch(new RegExp(`isTrusted = ${trusted}`));
        },
        TIMEOUT,
      );
    }
  },
);

function describeFailure(r: RunSuiteResult, artifactsDir: string): string {
  return [r.error ?? 'failed', r.stack, '--- suite log:', ...r.log, `--- artifacts: ${artifactsDir}`].filter(Boolean).join('\n');
}
