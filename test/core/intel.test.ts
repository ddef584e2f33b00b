/**
 * The navigation chain on small multi-file fixtures per language (test/fixtures/intel), with
 * the language-server step replaced by scripted ports: definitions and references the index
 * resolves by itself, the provenance every answer carries, and the faults of the chain's
 * providers (a server that times out or crashes, one not installed), bad positions, unknown
 * and ambiguous names.
 */
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/core/engine';
import { VltError } from '../../src/core/errors';
import type { LanguageServers, LspAnswer, SourceRange } from '../../src/core/intel/lsp';
import type { NavAnswer, TagsProvider } from '../../src/core/intel/navigate';
import { suggestNames } from '../../src/core/intel/names';
import { ModuleResolver, parseJsonc } from '../../src/core/intel/resolve';
import type { IndexStore } from '../../src/core/store/store';
import { nodeWorkspaceFs } from '../../src/node/fs';
import { tempDir } from '../helpers/cli';

const FIXTURES = path.resolve(__dirname, '../fixtures/intel');

async function openFixture(lang: string): Promise<Engine> {
  const dir = tempDir();
  cpSync(path.join(FIXTURES, lang), dir, { recursive: true });
  const engine = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null, parseWorkers: 1 }, 'write');
  await engine.index();
  return engine;
}

function top(a: NavAnswer): string {
  const l = a.locations[0];
  return l ? `${l.path}:${l.line}:${l.col}` : '(none)';
}

/** Every location, in path, line, column order. */
function where(a: NavAnswer): string[] {
  return [...a.locations]
    .sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : x.line - y.line || x.col - y.col))
    .map((l) => `${l.path}:${l.line}:${l.col}`);
}

async function expectVltError(p: Promise<unknown>, code: string, message?: RegExp): Promise<void> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(VltError);
  expect((e as VltError).code).toBe(code);
  if (message) expect((e as VltError).message).toMatch(message);
}

describe('module resolution', () => {
  it('resolves TS relative imports with extension swaps and index files, and tsconfig paths', () => {
    const r = new ModuleResolver(['src/a.ts', 'src/lib/index.ts', 'src/lib/b.tsx', 'src/c.ts'], {
      rootName: 'ws',
      rootIsPythonPackage: false,
      tsConfigs: [{ dir: '', baseUrl: '', paths: [{ pattern: '@lib/*', targets: ['src/lib/*'] }] }],
    });
    expect(r.resolve('src/a.ts', 'typescript', { source: './lib', line: 1 })).toEqual(['src/lib/index.ts']);
    expect(r.resolve('src/a.ts', 'typescript', { source: './c.js', line: 1 })).toEqual(['src/c.ts']);
    expect(r.resolve('src/a.ts', 'typescript', { source: '@lib/b', line: 1 })).toEqual(['src/lib/b.tsx']);
    expect(r.resolve('src/a.ts', 'typescript', { source: 'react', line: 1 })).toEqual([]);
  });

  it('resolves Python absolute and relative imports, submodules, and a root that is a package', () => {
    const files = ['__init__.py', 'db/__init__.py', 'db/models/__init__.py', 'db/models/base.py', 'utils.py'];
    const r = new ModuleResolver(files, { rootName: 'django', rootIsPythonPackage: true, tsConfigs: [] });
    expect(r.resolve('utils.py', 'python', { source: 'django.db.models.base', line: 1 })).toEqual(['db/models/base.py']);
    expect(r.resolve('db/models/base.py', 'python', { source: '..', line: 1, names: [{ name: 'models', local: 'models' }] })).toEqual([
      'db/__init__.py',
      'db/models/__init__.py',
    ]);
    expect(r.resolve('db/models/base.py', 'python', { source: '.base', line: 1 })).toEqual(['db/models/base.py']);
    expect(r.pythonModuleOf('db/models/__init__.py')).toBe('django.db.models');
  });

  it('resolves Go packages under the module path and in a GOROOT layout, Rust modules and C includes', () => {
    const r = new ModuleResolver(['util/a.go', 'util/a_test.go', 'net/http/client.go', 'src/lib.rs', 'src/net/mod.rs', 'src/net/tcp.rs', 'inc/x.h', 'src/x.c'], {
      rootName: 'ws',
      rootIsPythonPackage: false,
      goModule: 'example.com/app',
      tsConfigs: [],
    });
    expect(r.resolve('main.go', 'go', { source: 'example.com/app/util', line: 1 })).toEqual(['util/a.go']);
    expect(r.resolve('main.go', 'go', { source: 'net/http', line: 1 })).toEqual(['net/http/client.go']);
    expect(r.resolve('src/lib.rs', 'rust', { source: 'crate::net::tcp', line: 1 })).toEqual(['src/net/tcp.rs']);
    expect(r.resolve('src/lib.rs', 'rust', { source: 'mod net', line: 1 })).toEqual(['src/net/mod.rs']);
    expect(r.resolve('src/x.c', 'c', { source: 'x.h', line: 1 })).toEqual(['inc/x.h']);
  });

  it('reads tsconfig files with comments, trailing commas and /* inside strings', () => {
    expect(parseJsonc('{ // c\n "paths": { "@a/*": ["src/*"], }, /* x */ }')).toEqual({ paths: { '@a/*': ['src/*'] } });
  });
});

describe('definitions and references without a language server', () => {
  let ts: Engine;
  let py: Engine;
  let go: Engine;
  beforeAll(async () => {
    [ts, py, go] = await Promise.all([openFixture('ts'), openFixture('py'), openFixture('go')]);
  });
  afterAll(async () => {
    await Promise.all([ts?.close(), py?.close(), go?.close()]);
  });

  it('TypeScript: follows aliased imports through a barrel, tsconfig paths, this-members into base classes, overloads by arity', async () => {
    const nav = ts.navigator();
    // `double(input)`: `helper as double` imported from the barrel './lib'.
    const d = await nav.definition('src/service.ts:11:20', { noLsp: true });
    expect(top(d)).toBe('src/lib/util.ts:1:17');
    expect(d.locations[0]).toMatchObject({ provenance: 'graph', exact: false, confidence: 'high' });
    expect(d.providers.map((p) => `${p.provider}:${p.status}`)).toEqual(['lsp:skipped', 'graph:answered', 'ctags:skipped']);
    // `this.greet(...)` is Base.greet; `this.count` is Base's field.
    expect(top(await nav.definition('src/service.ts:13:17', { noLsp: true }))).toBe('src/lib/util.ts:14:3');
    expect(top(await nav.definition('src/service.ts:12:10', { noLsp: true }))).toBe('src/lib/util.ts:12:13');
    // `this.factor` is a constructor parameter property.
    expect(top(await nav.definition('src/service.ts:11:44', { noLsp: true }))).toBe('src/service.ts:6:32');
    // `format(scaled, 'px')` through the tsconfig path mapping: the two-argument overload first.
    expect(top(await nav.definition('src/service.ts:13:23', { noLsp: true }))).toBe('src/lib/util.ts:6:17');
    // `extends Base` and the {@link Base} doc comment both reach the class.
    expect(top(await nav.definition('src/service.ts:5:30', { noLsp: true }))).toBe('src/lib/util.ts:11:14');
    // A local: `s.compute` where s = new Service(3).
    expect(top(await nav.definition('src/service.ts:19:3', { noLsp: true }))).toBe('src/service.ts:18:9');
    
    expect(top(await nav.definition('src/service.ts:19:5', { noLsp: true }))).toBe('src/service.ts:10:3');
  });

  it('TypeScript: references of a function include the barrel re-export, the aliased import and the call', async () => {
    const nav = ts.navigator();
    const r = await nav.references('src/lib/util.ts:1:17', { noLsp: true });
    expect(r.definition).toMatchObject({ path: 'src/lib/util.ts', line: 1 });
    // The alias itself counts, as TypeScript's findReferences lists it.
    expect(where(r)).toEqual(['src/lib/index.ts:1:10', 'src/service.ts:1:16', 'src/service.ts:1:26', 'src/service.ts:11:20']);
    const base = await nav.references('src/lib/util.ts:11:14', { noLsp: true });
    expect(where(base)).toEqual(expect.arrayContaining(['src/service.ts:4:31', 'src/service.ts:5:30']));
  });

  it('Python: package re-exports, module attributes, self and super() members, inherited methods', async () => {
    const nav = py.navigator();
    // `shop.Product(...)`: `import shop`, then Product re-exported by shop/__init__.py.
    expect(top(await nav.definition('main.py:6:14', { noLsp: true }))).toBe('shop/models.py:6:7');
    // `pricing.discount(...)`: a submodule imported with `from shop import pricing`.
    expect(top(await nav.definition('main.py:7:19', { noLsp: true }))).toBe('shop/pricing.py:4:5');
    // `self.name` in label(): assigned in __init__.
    expect(top(await nav.definition('shop/models.py:12:24', { noLsp: true }))).toBe('shop/models.py:8:14');
    // `super().label()` in Sale: Product.label; `self.describe()`: inherited from Base.
    expect(top(await nav.definition('shop/pricing.py:10:24', { noLsp: true }))).toBe('shop/models.py:11:9');
    expect(top(await nav.definition('shop/pricing.py:11:41', { noLsp: true }))).toBe('shop/models.py:2:9');
    // A local in a generator expression.
    expect(top(await nav.definition('shop/pricing.py:15:25', { noLsp: true }))).toBe('shop/pricing.py:15:37');
  });

  it('Go: package-qualified calls, same-package names across files, embedded method calls', async () => {
    const nav = go.navigator();
    expect(top(await nav.definition('main.go:11:13', { noLsp: true }))).toBe('util/util.go:4:6');
    expect(top(await nav.definition('util/more.go:4:16', { noLsp: true }))).toBe('util/util.go:4:6');
    expect(top(await nav.definition('main.go:10:13', { noLsp: true }))).toBe('util/util.go:8:6');
    const refs = await nav.references('util/util.go:4:6', { noLsp: true });
    expect(where(refs)).toEqual(['main.go:11:13', 'util/more.go:4:9', 'util/more.go:4:16']);
  });

  it('lists every candidate of an ambiguous name, ranked, and never picks one silently', async () => {
    const a = await ts.navigator().definition('run', { noLsp: true });
    expect(a.ambiguous).toBe(true);
    // At the name's column, as the position form gives a definition.
    expect(where(a)).toEqual(['src/lib/util.ts:19:17', 'src/service.ts:17:17']);
    expect(a.locations.every((l) => l.confidence === 'low')).toBe(true);
    expect(a.notes.join(' ')).toMatch(/2 definitions are named run/);
  });

  it("takes a TypeScript function's overload signatures and implementation for one definition", async () => {
    const a = await ts.navigator().definition('pick', { noLsp: true });
    expect(a.ambiguous).toBe(false);
    expect(where(a)).toEqual(['src/lib/overloads.ts:2:17', 'src/lib/overloads.ts:3:17', 'src/lib/overloads.ts:4:17']);
    expect(a.locations.every((l) => l.confidence === 'medium')).toBe(true);
    expect(a.notes.join(' ')).toMatch(/pick is one function declared 3 times in src\/lib\/overloads\.ts/);
  });

  it('suggests names for a symbol that does not exist, never an empty silence', async () => {
    const a = await ts.navigator().definition('helpr', { noLsp: true });
    expect(a.locations).toEqual([]);
    expect(a.suggestions).toContain('helper');
    const b = await ts.navigator().definition('Serv', { noLsp: true });
    expect(b.suggestions).toContain('Service');
  });

  it('refuses positions outside the file, a missing column, paths outside the workspace and missing files', async () => {
    const nav = ts.navigator();
    await expectVltError(nav.definition('src/service.ts:999:1'), 'USAGE', /line 999 is outside src\/service\.ts, which has \d+ lines/);
    await expectVltError(nav.definition('src/service.ts:1:500'), 'USAGE', /column 500 is outside line 1/);
    await expectVltError(nav.definition('src/service.ts:3'), 'USAGE', /no column/);
    await expectVltError(nav.definition('../../etc/passwd:1:1'), 'PATH_OUTSIDE_WORKSPACE');
    await expectVltError(nav.definition('src/nope.ts:1:1'), 'PATH_NOT_FOUND');
    await expectVltError(nav.definition('src/service.ts:3:1'), 'USAGE', /no identifier/);
  });

  it('looks a name in prose up by name: a word of a README, which no parser reads', async () => {
    const nav = ts.navigator();
    const readme = path.join(ts.root, 'NOTES.md');
    writeFileSync(readme, '# Notes\n\nStart with the Service class and its run() helper.\n');
    try {
      const col = 'Start with the '.length + 3;
      const def = await nav.definition(`NOTES.md:3:${col}`);
      expect(top(def)).toBe('src/service.ts:5:14');
      expect(def.notes.join('\n')).toMatch(/NOTES\.md has no parser for its language: `Service` was looked up by name/);
      const refs = await nav.references(`NOTES.md:3:${col}`);
      expect(refs.locations.some((l) => l.path === 'src/service.ts')).toBe(true);
      await expectVltError(nav.definition('NOTES.md:1:1'), 'USAGE', /no identifier at NOTES\.md:1:1/);
    } finally {
      rmSync(readme, { force: true });
    }
  });
});

/** A scripted language-server port: each call answers as `behave` says. */
/**
 * What the index infers without types (test/fixtures/intel/tstypes and pytypes): overloads by
 * the plain type facts of their parameters, receivers whose type is written or implied,
 * fields of object types, discriminated unions, namespaces re-exported by name, and the
 * symbol a reference belongs to (overloads, overriding members).
 */
describe('types the index reads without a language server', () => {
  let ts: Engine;
  let py: Engine;
  beforeAll(async () => {
    [ts, py] = await Promise.all([openFixture('tstypes'), openFixture('pytypes')]);
  });
  afterAll(async () => {
    await Promise.all([ts?.close(), py?.close()]);
  });
  const def = async (e: Engine, at: string) => e.navigator().definition(at, { noLsp: true });

  it('TypeScript overloads: a function-typed parameter is required, a type-guard parameter wants a type guard', async () => {
    // `schedule(() => undefined, 10)`: the first overload needs `repeat`, three arguments.
    expect(top(await def(ts, 'src/use.ts:3:22'))).toBe('src/schedule.ts:2:17');
    // `keep((n) => n < 3)` returns a boolean, not `n is S`: the second overload.
    expect(top(await def(ts, 'src/use.ts:4:22'))).toBe('src/schedule.ts:9:17');
    // With a type predicate it is the first.
    expect(top(await def(ts, 'src/use.ts:5:20'))).toBe('src/schedule.ts:8:17');
  });

  it('TypeScript receivers: X | undefined, an array element, the left side of ||', async () => {
    for (const at of ['src/runner.ts:4:11', 'src/runner.ts:6:7', 'src/runner.ts:8:10']) {
      const d = await def(ts, at);
      expect(top(d), at).toBe('src/job.ts:2:3');
      expect(d.locations[0]!.how, at).toBe('member of Job, the declared type');
    }
  });

  it('TypeScript fields: an untyped parameter narrowed by switch (issue.code) reaches the right interface', async () => {
    // Only one interface has `maximum`; `inclusive` is in both, and the case label decides.
    expect(top(await def(ts, 'src/messages.ts:9:33'))).toBe('src/issues.ts:8:1');
    expect(top(await def(ts, 'src/messages.ts:9:49'))).toBe('src/issues.ts:9:1');
    expect(top(await def(ts, 'src/messages.ts:11:50'))).toBe('src/issues.ts:15:1');
    // A comparison in the condition of a ?: narrows the same way.
    expect(top(await def(ts, 'src/messages.ts:18:48'))).toBe('src/issues.ts:15:1');
    // The discriminant itself: the fields typed by a case label, not the base's `code: string`.
    const code = await def(ts, 'src/messages.ts:7:19');
    expect(code.locations.slice(0, 2).map((l) => `${l.path}:${l.line}`)).toEqual(['src/issues.ts:7', 'src/issues.ts:13']);
    expect(code.ambiguous).toBe(true);
  });

  it('TypeScript modules: a namespace re-exported by name, an export clause alias, one of several default re-exports', async () => {
    const z = await def(ts, 'src/app.ts:3:22');
    expect(top(z)).toBe('src/v3/external.ts:1:10');
    expect(z.locations[0]).toMatchObject({ confidence: 'high', how: 'exported by module z' });
    expect(top(await def(ts, 'src/locales/index.ts:2:10'))).toBe('src/locales/fr.ts:1:1');
    // A name a workspace module does not define is not "imported from outside the workspace".
    const gone = await def(ts, 'src/use.ts:9:21');
    expect(top(gone)).toBe('src/use.ts:7:15');
    expect(gone.locations[0]!.how).toBe('imported from a workspace module in which the index finds no definition of retired');
  });

  it('TypeScript references: every overload is the symbol, and overriding members share their base member\'s uses', async () => {
    const nav = ts.navigator();
    // Asked at the implementation, the calls that bind to an overload count.
    expect(where(await nav.references('src/schedule.ts:3:17', { noLsp: true }))).toEqual(['src/use.ts:1:16', 'src/use.ts:3:22']);
    // Subject.next: the override in Behavior, its super call, and calls through both types.
    expect(where(await nav.references('src/subject.ts:2:3', { noLsp: true }))).toEqual(['src/subject.ts:8:3', 'src/subject.ts:9:11', 'src/subject.ts:14:5', 'src/subject.ts:15:5']);
  });

  it('Python: a receiver built by a class call, a base property behind self.x =, tuple targets, a name bound in if/else', async () => {
    // `register = library.Library()`, then `@register.filter`: Library.filter, not Query.filter.
    const filter = await def(py, 'tags.py:7:11');
    expect(top(filter)).toBe('lib/library.py:2:9');
    expect(filter.locations[0]!.how).toBe('member of Library, the type register is declared or constructed with');
    // `self.ptr` where the class only assigns it and a base defines the property.
    expect(top(await def(py, 'lib/pointer.py:19:21'))).toBe('lib/pointer.py:5:9');
    // `self.name, self.kind = …`.
    expect(top(await def(py, 'lib/pointer.py:19:31'))).toBe('lib/pointer.py:16:25');
    // `Temp` is bound in both branches of an if at the module's top level: the last binding.
    expect(top(await def(py, 'tags.py:12:10'))).toBe('lib/compat.py:6:5');
  });
});

function scriptedServers(behave: 'ok' | 'timeout' | 'crashed' | 'not-installed' | 'empty', answer: SourceRange[] = []): LanguageServers {
  const fail = (failure: 'timeout' | 'crashed'): LspAnswer<never> => ({ ok: false, failure, reason: failure === 'timeout' ? 'no answer within 50 ms' : 'exited with code 1', server: 'fake-ls', ms: 50 });
  const reply = <T>(value: T): LspAnswer<T> => ({ ok: true, value, server: 'fake-ls', ms: 1 });
  const info = { name: 'fake-ls', languages: ['typescript' as const], state: behave === 'not-installed' ? ('not-installed' as const) : ('ready' as const), detail: 'fake', restarts: 0 };
  const answerFor = <T>(v: T): Promise<LspAnswer<T>> =>
    Promise.resolve(behave === 'timeout' || behave === 'crashed' ? fail(behave) : reply(v));
  return {
    serverFor: (l) => (l === 'typescript' ? info : undefined),
    definition: () => answerFor(behave === 'empty' ? [] : answer),
    references: () => answerFor(behave === 'empty' ? [] : answer),
    hover: () => answerFor(null),
    diagnostics: () => answerFor([]),
    status: () => [info],
    dispose: () => Promise.resolve(),
  };
}

describe('the provider chain around the language server', () => {
  let ts: Engine;
  beforeAll(async () => {
    ts = await openFixture('ts');
  });
  afterAll(async () => {
    await ts?.close();
  });

  it('returns the language server answer as exact, with its provenance', async () => {
    const lsp = scriptedServers('ok', [{ path: 'src/lib/util.ts', startLine: 1, startCol: 17, endLine: 1, endCol: 23 }]);
    const a = await ts.navigator({ lsp }).definition('src/service.ts:11:20');
    expect(a.locations).toHaveLength(1);
    expect(a.locations[0]).toMatchObject({ path: 'src/lib/util.ts', line: 1, provenance: 'lsp', exact: true, kind: 'function' });
    expect(a.notes).toEqual([]);
  });

  it('says when a language server\'s references come from a project without a tsconfig.json', async () => {
    const lsp = scriptedServers('ok', [{ path: 'src/lib/util.ts', startLine: 1, startCol: 17, endLine: 1, endCol: 23 }]);
    // This fixture has a tsconfig.json: nothing to say.
    expect((await ts.navigator({ lsp }).references('src/service.ts:11:20')).notes).toEqual([]);
    const bare = await openFixture('tstypes');
    try {
      const served = scriptedServers('ok', [{ path: 'src/job.ts', startLine: 2, startCol: 3, endLine: 2, endCol: 8 }]);
      const r = await bare.navigator({ lsp: served }).references('src/runner.ts:4:11');
      expect(r.locations[0]).toMatchObject({ provenance: 'lsp', exact: true });
      expect(r.notes.join(' ')).toMatch(/no tsconfig\.json or jsconfig\.json covers src\/runner\.ts/);
    } finally {
      await bare.close();
    }
  });

  for (const fault of ['timeout', 'crashed'] as const) {
    it(`answers from the index when the language server ${fault === 'timeout' ? 'hangs' : 'crashes'}, and says so`, async () => {
      const a = await ts.navigator({ lsp: scriptedServers(fault) }).definition('src/service.ts:11:20');
      expect(top(a)).toBe('src/lib/util.ts:1:17');
      expect(a.locations[0]?.provenance).toBe('graph');
      expect(a.providers[0]).toMatchObject({ provider: 'lsp', status: 'failed' });
      expect(a.providers[0]?.reason).toContain(fault);
      expect(a.notes.join(' ')).toMatch(/language server did not answer/);
    });
  }

  it('skips a server that is not installed, with the reason', async () => {
    const a = await ts.navigator({ lsp: scriptedServers('not-installed') }).definition('src/service.ts:11:20');
    expect(a.providers[0]).toMatchObject({ provider: 'lsp', status: 'skipped' });
    expect(a.providers[0]?.reason).toMatch(/not installed/);
    expect(top(a)).toBe('src/lib/util.ts:1:17');
  });

  it('falls back when the server answers with nothing', async () => {
    const a = await ts.navigator({ lsp: scriptedServers('empty') }).definition('src/service.ts:11:20');
    expect(top(a)).toBe('src/lib/util.ts:1:17');
    expect(a.notes.join(' ')).toMatch(/after the language server gave no answer/);
  });
});

describe('references through a Go test package that dot-imports its own package', () => {
  it('answers (a lookup that comes back to itself finds nothing on that path instead of waiting on itself)', async () => {
    const engine = await openFixture('go-dotimport');
    try {
      const trim = await engine.navigator().references('lib/lib.go:4:6', { noLsp: true });
      expect(where(trim)).toEqual(['lib/lib.go:9:9', 'lib/lib_test.go:10:6', 'lib/other_test.go:10:6', 'lib/other_test.go:14:9']);
      // `helper` is defined in a sibling file of the test package; resolving its use looks
      // through the dot import, which names the test package's own directory.
      const helper = await engine.navigator().references('lib/other_test.go:13:6', { noLsp: true });
      expect(where(helper)).toEqual(['lib/lib_test.go:10:20']);
    } finally {
      await engine.close();
    }
  }, 20_000);
});


describe('Go members through the type a receiver is declared with', () => {
  it('a parameter, a var and a composite literal give their type: its methods, and those promoted from embedded types', async () => {
    const engine = await openFixture('go-receivers');
    try {
      const nav = engine.navigator();
      // `t.Errorf` with `t *tst.T`: promoted from the embedded `common`, not other.Errorer's.
      expect(top(await nav.definition('use/use.go:6:4', { noLsp: true }))).toBe('tst/tst.go:8:18');
      // `t.Run`: T's own method.
      expect(top(await nav.definition('use/use.go:7:11', { noLsp: true }))).toBe('tst/tst.go:17:13');
      // `var l tst.T` and `p := &tst.T{}`.
      expect(top(await nav.definition('use/use.go:12:4', { noLsp: true }))).toBe('tst/tst.go:8:18');
      expect(top(await nav.definition('use/use.go:14:11', { noLsp: true }))).toBe('tst/tst.go:17:13');
      // And the references of T.Run count those uses, not Errorer.Run's.
      expect(where(await nav.references('tst/tst.go:17:13', { noLsp: true }))).toEqual(['use/use.go:7:11', 'use/use.go:14:11']);
    } finally {
      await engine.close();
    }
  }, 20_000);
});

describe('Go members through the types that declarations imply', () => {
  it('call results, fields of fields, range and switch variables, assertions, literal keys; the default build\'s file of a platform-split package', async () => {
    const engine = await openFixture('go-types');
    try {
      const nav = engine.navigator();
      const def = async (q: string) => top(await nav.definition(q, { noLsp: true }));
      // `r := shapes.NewRect(); r.Min.X`: a call's result, then a field's type.
      expect(await def('use/use.go:7:8')).toBe('shapes/shapes.go:10:2');
      expect(await def('use/use.go:7:12')).toBe('shapes/shapes.go:6:2');
      // `a, err := shapes.Pair(); a.Label`: the first of two results.
      expect(await def('use/use.go:10:8')).toBe('shapes/shapes.go:11:2');
      // Range over a slice, and over a map of pointers to a type embedding Rect (promoted).
      expect(await def('use/use.go:12:9')).toBe('shapes/shapes.go:24:15');
      expect(await def('use/use.go:15:9')).toBe('shapes/shapes.go:24:15');
      // `q, ok := v.(*shapes.Named)`: the asserted type; Label promoted from Rect.
      expect(await def('use/use.go:18:9')).toBe('shapes/shapes.go:11:2');
      // Keys of a struct literal, also of an element whose type is elided.
      expect(await def('use/use.go:20:20')).toBe('shapes/shapes.go:6:2');
      expect(await def('use/use.go:21:22')).toBe('shapes/shapes.go:6:5');
      // A type switch's case type.
      expect(await def('use/use.go:24:9')).toBe('shapes/shapes.go:10:7');
      // An index, then a method's result.
      expect(await def('use/use.go:26:20')).toBe('shapes/shapes.go:6:5');
      // A method is in no scope: the result type `Point` is the type; an interface method's
      // parameter `m` binds nothing, so `m` is the constant.
      expect(await def('shapes/shapes.go:27:23')).toBe('shapes/shapes.go:5:6');
      expect(await def('shapes/shapes.go:27:47')).toBe('shapes/shapes.go:3:7');
      // Platform-split definitions: the file the default build (linux/amd64) compiles.
      expect(await def('use/use.go:27:13')).toBe('shapes/size_other.go:5:6');
      expect(await def('use/use.go:27:29')).toBe('shapes/c_native.go:5:6');
      expect(await def('use/use.go:27:41')).toBe('shapes/size_other.go:7:15');
      expect(await def('shapes.Size')).toBe('shapes/size_other.go:5:6');
      expect(await def('shapes.Rect.Perimeter')).toBe('shapes/size_other.go:7:15');
      expect(await def('Rect.Perimeter')).toBe('shapes/size_other.go:7:15');
      // A test file of the package sees its non-test files.
      expect(await def('shapes/shapes_test.go:6:11')).toBe('shapes/shapes.go:11:2');
      // `func Shadow(shapes *shapes.Rect)`: the type's qualifier is the package.
      expect(await def('use/use.go:32:28')).toBe('shapes/shapes.go:9:6');
      // A chain of a dozen steps: nested ranges, an embedded field, its field, a local.
      expect(await def('use/use.go:38:17')).toBe('shapes/shapes.go:6:2');
    } finally {
      await engine.close();
    }
  }, 30_000);
});

describe('by name equals by position: a qualified name means that owner\'s member', () => {
  const engines = new Map<string, Engine>();
  beforeAll(async () => {
    for (const lang of ['go', 'py', 'ts', 'rust']) engines.set(lang, await openFixture(lang));
  });
  afterAll(async () => {
    await Promise.all([...engines.values()].map((e) => e.close()));
  });
  const nav = (lang: string) => engines.get(lang)!.navigator();

  /** The definition a name answers, and that its references are the position form's. */
  async function sameEitherWay(lang: string, name: string, position: string): Promise<NavAnswer> {
    const def = await nav(lang).definition(name, { noLsp: true });
    expect(def.ambiguous, `${name}: ${where(def).join(', ')}`).toBe(false);
    expect(top(def)).toBe(position);
    const byName = await nav(lang).references(name, { noLsp: true });
    const byPos = await nav(lang).references(position, { noLsp: true });
    expect(where(byName)).toEqual(where(byPos));
    expect(byName.total).toBe(byPos.total);
    return byPos;
  }

  it('Go: pkg.Func, Type.Method (not a package-level func of that name), a method of an embedded type', async () => {
    // util.Helper: the uses in main.go and util/more.go.
    expect(where(await sameEitherWay('go', 'util.Helper', 'util/util.go:4:6'))).toEqual(['main.go:11:13', 'util/more.go:4:9', 'util/more.go:4:16']);
    // srv.Serve is the package-level func, never srv/other's; Server.Serve is the method.
    expect(where(await sameEitherWay('go', 'srv.Serve', 'srv/server.go:18:6'))).toEqual(['run.go:11:13']);
    expect(where(await sameEitherWay('go', 'Server.Serve', 'srv/server.go:13:18'))).toEqual(expect.arrayContaining(['run.go:8:14', 'srv/server.go:20:11']));
    await sameEitherWay('go', 'srv.Server.Serve', 'srv/server.go:13:18');
    // Close is Base's, which Server embeds.
    expect(top(await nav('go').definition('Server.Close', { noLsp: true }))).toBe('srv/server.go:6:16');
  });

  it('Python: Class.method (not an override in a subclass), module.func, a method of a base class', async () => {
    await sameEitherWay('py', 'Product.label', 'shop/models.py:11:9');
    expect(where(await sameEitherWay('py', 'pricing.discount', 'shop/pricing.py:4:5'))).toEqual(['main.py:7:19', 'shop/pricing.py:15:16']);
    expect(top(await nav('py').definition('Sale.describe', { noLsp: true }))).toBe('shop/models.py:2:9');
  });

  it('TypeScript: Class.method, module.fn (not a function of that name in another module), a method of a base class', async () => {
    await sameEitherWay('ts', 'Base.greet', 'src/lib/util.ts:14:3');
    expect(where(await sameEitherWay('ts', 'util.helper', 'src/lib/util.ts:1:17'))).toEqual(['src/lib/index.ts:1:10', 'src/service.ts:1:16', 'src/service.ts:1:26', 'src/service.ts:11:20']);
    await sameEitherWay('ts', 'util.run', 'src/lib/util.ts:19:17');
    expect(top(await nav('ts').definition('Service.greet', { noLsp: true }))).toBe('src/lib/util.ts:14:3');
  });

  it('Rust: Type::method, not the free function of that name', async () => {
    await sameEitherWay('rust', 'Writer::flush', 'src/lib.rs:4:12');
  });
});

describe('ctags is consulted only when the index cannot settle the name', () => {
  let go: Engine;
  beforeAll(async () => {
    go = await openFixture('go');
  });
  afterAll(async () => {
    await go?.close();
  });

  /** A ctags port that counts how often it is asked (probing whether it runs included). */
  function countingTags() {
    const asked: string[] = [];
    const tags: TagsProvider = {
      unavailable: () => {
        asked.push('probe');
        return Promise.resolve(undefined);
      },
      lookup: (name) => {
        asked.push(name);
        return Promise.resolve([{ name, path: 'util/util.go', line: 4, kind: 'function' }]);
      },
    };
    return { asked, tags };
  }

  it('not for a position the index resolves, a qualified name the index finds, or references the index has a definition for; yes for the definition of a bare name', async () => {
    const { asked, tags } = countingTags();
    const nav = go.navigator({ tags });
    const byPos = await nav.references('util/util.go:4:6', { noLsp: true });
    expect(byPos.locations.length).toBeGreaterThan(0);
    const byName = await nav.definition('util.Helper', { noLsp: true });
    expect(top(byName)).toBe('util/util.go:4:6');
    expect(byName.providers.find((p) => p.provider === 'ctags')).toMatchObject({ status: 'skipped', reason: expect.stringMatching(/not needed/) });
    expect(asked).toEqual([]);
    const bare = await nav.definition('Helper', { noLsp: true });
    expect(top(bare)).toBe('util/util.go:4:6');
    expect(asked).toEqual(['probe', 'Helper']);
    expect(bare.providers.find((p) => p.provider === 'ctags')?.status).toBe('answered');
    // References of a bare name are gathered for the index's first definition: ctags is not asked.
    asked.length = 0;
    const refs = await nav.references('Helper', { noLsp: true });
    expect(refs.definition).toMatchObject({ path: 'util/util.go', line: 4 });
    expect(refs.locations.length).toBeGreaterThan(0);
    expect(asked).toEqual([]);
  });
});

describe('never silent: an empty answer says why', () => {
  let ts: Engine;
  beforeAll(async () => {
    ts = await openFixture('ts');
  });
  afterAll(async () => {
    await ts?.close();
  });

  it('a name not defined in the workspace', async () => {
    for (const a of [await ts.navigator().definition('noSuchThing', { noLsp: true }), await ts.navigator().references('noSuchThing', { noLsp: true })]) {
      expect(a.locations).toEqual([]);
      expect(a.reason?.code).toBe('not-defined');
      expect(a.notes).toContain(a.reason?.message);
    }
  });

  it('a definition nothing uses', async () => {
    const a = await ts.navigator().references('src/lib/util.ts:19:17', { noLsp: true });
    expect(a.locations).toEqual([]);
    expect(a.total).toBe(0);
    expect(a.reason).toMatchObject({ code: 'no-uses' });
    expect(a.reason?.message).toMatch(/run is defined at src\/lib\/util\.ts:19:17, and none of the \d+ files that could use it does/);
  });

  it('a budget that ran out before any use was found, with what was searched', async () => {
    // A budget of 0 ms is spent before the first use is resolved.
    const a = await ts.navigator().references('src/lib/util.ts:1:17', { noLsp: true, budgetMs: 0 });
    expect(a.locations).toEqual([]);
    expect(a.total).toBeUndefined();
    expect(a.truncated).toBe(true);
    expect(a.reason?.code).toBe('budget');
    expect(a.reason?.message).toMatch(/\d+ of \d+ candidate files searched\); give a larger budget/);
  });

  it('a language server that failed while the index found nothing either', async () => {
    const a = await ts.navigator({ lsp: scriptedServers('crashed') }).references('src/lib/util.ts:19:17');
    expect(a.locations).toEqual([]);
    expect(a.reason?.code).toBe('lsp-failed');
    expect(a.reason?.message).toMatch(/^the language server failed \(.*crashed.*\), and run is defined at/);
  });

  it('no identifier at a position is a usage error, not an empty answer', async () => {
    await expectVltError(ts.navigator().references('src/service.ts:3:1', { noLsp: true }), 'USAGE', /no identifier at src\/service\.ts:3:1/);
  });
});

describe('a reference answer at scale: the exact total, ranked, a page at a time', () => {
  it('counts every use whatever the limit, lists non-test files first and nearest the definition first', async () => {
    const engine = await openFixture('go-dotimport');
    try {
      const all = await engine.navigator().references('lib/lib.go:4:6', { noLsp: true });
      expect(all.total).toBe(4);
      // lib.go is the definition's own file and not a test: it comes first.
      expect(all.locations.map((l) => l.path)).toEqual(['lib/lib.go', 'lib/lib_test.go', 'lib/other_test.go', 'lib/other_test.go']);
      const page = await engine.navigator().references('lib/lib.go:4:6', { noLsp: true, limit: 2 });
      expect(page.locations).toHaveLength(2);
      expect(page.truncated).toBe(true);
    } finally {
      await engine.close();
    }
  });
});

describe('suggestNames', () => {
  // No prefix matches, so every suggestion comes from the edit distance over the names.
  const store = { findSymbols: () => [] } as unknown as IndexStore;

  it('ranks names by edit distance (case-insensitive), then length, and cuts at 1 for short names and 2 for longer ones', () => {
    const names = ['Parse', 'parser', 'parsed_x', 'Sparse', 'pars', 'Praise', 'unrelated', 'parseFile'];
    expect(suggestNames(store, names, 'parse')).toEqual(['Parse', 'pars', 'Sparse', 'parser', 'Praise']);
    expect(suggestNames(store, ['cat', 'cart', 'cut', 'coat', 'scatter'], 'cat')).toEqual(['cat', 'cut', 'cart', 'coat']);
    expect(suggestNames(store, ['abcdefgh'], 'xyz')).toEqual([]);
  });
});
