/**
 * `npm run bench -- vscode`: the extension measured in a real VS Code (code-server 4.100.3 in
 * chromium, test/e2e/harness.ts), with the built .vsix, on the Go standard library (no Go
 * language server: the index answers) and on rxjs (VS Code's TypeScript server answers; the
 * same positions asked of `vscode.executeReferenceProvider` directly are the peer). The suite
 * that measures runs inside the extension host: test/vscode/suite/bench.ts.
 *
 * Usage: node .bench/vscode-bench.cjs GO_COPY_DIR   (prints JSON on stdout)
 */
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { buildSuite, codeServerInstalled, packageVsix, REPO_ROOT, runSuiteInCodeServer } from '../e2e/harness';

const work = path.join(REPO_ROOT, '.bench', 'vscode');

async function scenario(name: string, workspace: string, suite: string, vsix: string, env: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const out = path.join(work, `${name}.json`);
  rmSync(out, { force: true });
  console.error(`[vscode] ${name}: ${workspace}`);
  const r = await runSuiteInCodeServer({
    workspace,
    extensions: [vsix],
    suite,
    env: { VLT_BENCH_SCENARIO: name === 'go-first' ? 'first' : name === 'go-reopen' ? 'reopen' : 'lsp', VLT_BENCH_OUT: out, VLT_EMBEDDINGS: 'off', ...env },
    timeoutMs: 420_000,
    artifactsDir: path.join(work, 'artifacts', name),
  });
  if (!r.ok) throw new Error(`${name}: ${r.error ?? 'failed'}\n${r.log.join('\n')}`);
  return JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown>;
}

async function main(): Promise<void> {
  const goCopy = process.argv[2];
  if (!goCopy || !existsSync(goCopy)) throw new Error('usage: vscode-bench GO_COPY_DIR');
  if (!codeServerInstalled()) {
    process.stdout.write(JSON.stringify({ skipped: 'code-server or chromium missing: run test/e2e/install.sh' }));
    return;
  }
  mkdirSync(work, { recursive: true });
  const vsix = path.join(work, 'vlt-oracle.vsix');
  await packageVsix(vsix);
  const suite = await buildSuite(path.join(REPO_ROOT, 'test/vscode/suite/bench.ts'), path.join(work, 'suite/bench.js'));

  // The Go standard library, copied fresh so that the first scenario starts with no index.
  const go = path.join(work, 'go');
  rmSync(go, { recursive: true, force: true });
  cpSync(goCopy, go, { recursive: true, dereference: true, filter: (src) => !src.includes(`${path.sep}.vlt`) });
  const first = await scenario('go-first', go, suite, vsix);
  const reopen = await scenario('go-reopen', go, suite, vsix);

  // rxjs with the tsconfig.json its repository has one level up (see intel-bench.ts).
  const rx = path.join(work, 'rxjs');
  rmSync(rx, { recursive: true, force: true });
  cpSync(path.join(REPO_ROOT, 'node_modules/rxjs/src'), rx, { recursive: true });
  writeFileSync(path.join(rx, 'tsconfig.json'), `${JSON.stringify({ extends: './tsconfig.base.json', compilerOptions: { types: [], noEmit: true } }, null, 2)}\n`);
  const targets: Array<[string, string, number]> = [
    ['internal/operators/map.ts', 'export function map<', 'export function '.length + 1],
    ['internal/Observable.ts', 'export class Observable<', 'export class '.length + 1],
    ['internal/util/isFunction.ts', 'export function isFunction', 'export function '.length + 1],
    ['internal/operators/OperatorSubscriber.ts', 'export function createOperatorSubscriber', 'export function '.length + 1],
    ['internal/Subscription.ts', 'export class Subscription', 'export class '.length + 1],
    ['internal/operators/filter.ts', 'export function filter<', 'export function '.length + 1],
    ['internal/util/pipe.ts', 'export function pipeFromArray', 'export function '.length + 1],
    ['internal/scheduler/async.ts', 'export const asyncScheduler', 'export const '.length + 1],
    ['internal/operators/mergeMap.ts', 'export function mergeMap<', 'export function '.length + 1],
    ['internal/Subject.ts', 'export class Subject<', 'export class '.length + 1],
  ];
  const lsp = await scenario('ts-lsp', rx, suite, vsix, { VLT_BENCH_TARGETS: JSON.stringify(targets) });
  process.stdout.write(JSON.stringify({ go: { first, reopen }, rxjs: lsp }, null, 2));
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
  process.exit(1);
});
