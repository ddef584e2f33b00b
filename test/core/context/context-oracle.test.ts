/**
 * The Context Oracle on a small workspace made here with real git history: a billing service in
 * Python (FastAPI routes, a model, tests), a TypeScript web front (Express), declared components
 * and rules, annotations, and notes that describe the code (one of them stale).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContextOracle } from '../../../src/core/context/context-oracle';
import { bfsSubgraph } from '../../../src/core/context/bundle';
import { ArchitectureGraph } from '../../../src/core/context/architecture-graph';
import { renderWhyTree } from '../../../src/core/context/impact';
import { graphView, searchNodes, toMermaid } from '../../../src/core/context/graph-view';
import { silentLogger } from '../../../src/core/ports';
import { invokeTool, type ToolContext } from '../../../src/core/tools/definitions';
import { getContextTool } from '../../../src/core/tools/context-tools';
import { Engine } from '../../../src/core/engine';
import { VltError } from '../../../src/core/errors';
import { nodeWorkspaceFs } from '../../../src/node/fs';
import { NodeGitActivity } from '../../../src/node/git-activity';
import { tempDir } from '../../helpers/cli';

const GIT_ENV = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' };
const DAY = 86_400;
/** "Now" for the test: 2026-06-01. */
const NOW = Date.UTC(2026, 5, 1) / 1000;

function git(dir: string, date: number, ...args: string[]): string {
  const iso = new Date(date * 1000).toISOString();
  return execFileSync('git', args, { cwd: dir, env: { ...process.env, ...GIT_ENV, GIT_AUTHOR_DATE: iso, GIT_COMMITTER_DATE: iso }, encoding: 'utf8' });
}

function write(dir: string, rel: string, text: string): void {
  mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  writeFileSync(path.join(dir, rel), text);
}

const FILES: Record<string, string> = {
  'vlt.toml': [
    '[[architecture.component]]',
    'name = "billing"',
    'path = "billing/**"',
    'summary = "Invoices and payments"',
    '',
    '[[architecture.component]]',
    'name = "web"',
    'path = "web/**"',
    'summary = "The browser front"',
    '',
    '[[architecture.rule]]',
    'name = "billing-is-headless"',
    'description = "billing must not depend on the web front"',
    'deny = { from = "billing", to = "web" }',
    '',
    '[[architecture.rule]]',
    'name = "web-documented"',
    'require = { component = "web", covered_by = ["note", "test"] }',
    '',
  ].join('\n'),
  'billing/__init__.py': '',
  'billing/models.py': [
    '"""The billing data model."""',
    '',
    '',
    'class Invoice:',
    '    """An invoice: lines and a total."""',
    '',
    '    def __init__(self, lines):',
    '        self.lines = lines',
    '',
    '    def total(self):',
    '        return sum(line.amount for line in self.lines)',
    '',
  ].join('\n'),
  'billing/service.py': [
    'from billing.models import Invoice',
    '',
    '',
    '# vlt:owner=payments',
    'def create_invoice(lines):',
    '    invoice = Invoice(lines)',
    '    return invoice.total()',
    '',
  ].join('\n'),
  'billing/api.py': [
    'from fastapi import APIRouter',
    'from billing.service import create_invoice',
    '',
    'router = APIRouter(prefix="/invoices")',
    '',
    '',
    '@router.post("/")',
    'def post_invoice(body):',
    '    return create_invoice(body["lines"])',
    '',
    '',
    '@router.get("/{invoice_id}")',
    'def get_invoice(invoice_id: int):',
    '    return {"id": invoice_id}',
    '',
  ].join('\n'),
  'billing/legacy.py': ['# vlt:component=web', 'from web.render import render', '', '', 'def old_page():', '    return render("x")', ''].join('\n'),
  'tests/test_service.py': ['from billing.service import create_invoice', '', '', 'def test_create_invoice():', '    assert create_invoice([]) == 0', '', '', 'def test_create_invoice_lines():', '    assert create_invoice([]) == 0', ''].join('\n'),
  'tools/c#/thing.py': ['class Thing:', '    pass', ''].join('\n'),
  'web/render.ts': ['export function render(page: string): string {', '  return `<main>${page}</main>`;', '}', ''].join('\n'),
  'web/server.ts': [
    "import express from 'express';",
    "import { render } from './render';",
    '',
    'const app = express();',
    "app.get('/health', health);",
    "app.post('/pages/:id', (req, res) => res.send(render(req.params.id)));",
    '',
    'function health(_req: unknown, res: { send(s: string): void }) {',
    "  res.send('ok');",
    '}',
    '',
  ].join('\n'),
  'docs/billing.md': [
    '---',
    'ref: component:billing',
    '---',
    '# Billing',
    '',
    '## Specification',
    '',
    'Invoices are created by `billing/service.py` from their lines. See the [issue tracker](https://example.com/issues/42).',
    '',
    '## Invariants',
    '',
    'An invoice total is the sum of its lines; the model is in [models](../billing/models.py), not in [the api](../../../billing/api.py).',
    '',
    '## Changelog',
    '',
    'Nothing yet.',
    '',
  ].join('\n'),
};

describe('the Context Oracle', () => {
  let dir: string;
  let engine: Engine;
  let oracle: ContextOracle;
  beforeAll(async () => {
    dir = tempDir();
    git(dir, NOW - 100 * DAY, 'init', '-q', '-b', 'main');
    for (const [rel, text] of Object.entries(FILES)) write(dir, rel, text);
    git(dir, NOW - 100 * DAY, 'add', '-A');
    git(dir, NOW - 100 * DAY, 'commit', '-q', '-m', 'Billing service and web front');
    // The service changes after its doc was last written (the doc goes stale), and often lately.
    for (let i = 0; i < 6; i++) {
      write(dir, 'billing/service.py', `${FILES['billing/service.py']}\n# change ${i}\n`);
      git(dir, NOW - (20 - i) * DAY, 'commit', '-q', '-am', `Tune invoices ${i}`);
    }
    engine = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null, parseWorkers: 0 }, 'write');
    await engine.index();
    const activity = new NodeGitActivity(dir);
    oracle = new ContextOracle(engine, { activity: (s) => activity.read(s), now: () => NOW });
  }, 60_000);
  afterAll(async () => {
    await engine?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('builds a version 2 bundle around a file: focus with activity, graph, symbols, docs, routes, tests, constraints', async () => {
    const b = await oracle.buildContext(['billing/service.py']);
    expect(b.version).toBe(2);
    expect(b.focus).toMatchObject({ ref_id: 'billing/service.py', kind: 'file', activity: { level: 'hot', commits_30d: 6 } });
    const ids = b.graph.nodes.map((n) => n.ref_id);
    expect(ids[0]).toBe('billing/service.py');
    expect(ids).toEqual(expect.arrayContaining(['component:billing', 'billing', 'billing/service.py#create_invoice', 'billing/models.py', 'billing/api.py', 'docs/billing.md']));
    const edges = b.graph.edges.map((e) => `${e.src} ${e.kind} ${e.dst}`);
    expect(edges).toEqual(
      expect.arrayContaining([
        'billing/service.py part_of component:billing',
        'billing/service.py part_of billing',
        'billing/service.py#create_invoice part_of billing/service.py',
        'billing/service.py depends_on billing/models.py',
        'billing/api.py depends_on billing/service.py',
        'docs/billing.md touches_code billing/service.py',
      ]),
    );
    expect(b.code_symbols).toContainEqual(expect.objectContaining({ symbol_name: 'create_invoice', kind: 'function', line_start: 5, annotations: { owner: 'payments' } }));
    // Docs: spec before invariants before the rest.
    expect(b.text_chunks.map((c) => c.section).slice(0, 2)).toEqual(['spec', 'invariants']);
    expect(b.focus.links).toEqual([{ label: 'issue tracker', url: 'https://example.com/issues/42' }]);
    expect(b.sync_status.history).toBe('git');
    expect(b.sync_status.stale_docs).toContainEqual(expect.objectContaining({ doc_path: 'docs/billing.md', ref_id: 'billing/service.py', code_file: 'billing/service.py' }));
    expect(b.tests).toMatchObject({ framework: 'pytest', test_files: ['tests/test_service.py'], test_count: 2, coverage_estimate: 'medium' });
    expect(b.constraints.map((c) => c.rule)).toContain('billing-is-headless');
    expect(b.warning).toBeNull();
  });

  it('follows symbol uses both ways, and tells entities from calls', async () => {
    const b = await oracle.buildContext(['billing/service.py#create_invoice'], { depth: 1 });
    const edges = b.graph.edges.map((e) => `${e.src} ${e.kind} ${e.dst}`);
    expect(edges).toContain('billing/service.py#create_invoice touches_entity billing/models.py#Invoice');
    expect(edges).toContain('billing/api.py#post_invoice uses billing/service.py#create_invoice');
    expect(edges).toContain('tests/test_service.py#test_create_invoice uses billing/service.py#create_invoice');
    expect(b.routes).toEqual([]);
    const api = await oracle.buildContext(['billing/api.py#post_invoice'], { depth: 1 });
    expect(api.routes).toEqual([{ method: 'POST', path: '/invoices/', handler: 'post_invoice', file: 'billing/api.py', line: 7, framework: 'fastapi' }]);
  });

  it('follows a note\'s links to code files, but not one that climbs out of the workspace', async () => {
    const graph = await oracle.graph();
    const out = graph.neighbours(graph.node('docs/billing.md')!).filter((n) => n.edge.kind === 'touches_code').map((n) => n.node.ref_id);
    expect(out).toContain('billing/models.py');
    expect(out).not.toContain('billing/api.py');
  });

  it('takes ids of files whose path holds a #', async () => {
    const graph = await oracle.graph();
    expect(graph.node('tools/c#/thing.py')?.kind).toBe('file');
    expect(graph.node('tools/c#/thing.py#Thing')).toMatchObject({ kind: 'symbol', path: 'tools/c#/thing.py', line: 1 });
    const b = await oracle.buildContext(['tools/c#/thing.py#Thing'], { depth: 1 });
    expect(b.code_symbols[0]).toMatchObject({ symbol_name: 'Thing', file_path: 'tools/c#/thing.py' });
    expect(b.graph.edges).toContainEqual({ src: 'tools/c#/thing.py#Thing', kind: 'part_of', dst: 'tools/c#/thing.py' });
  });

  it('takes a component by id or name, and its annotated members', async () => {
    const graph = await oracle.graph();
    const web = graph.node('component:web')!;
    expect(graph.lookup('web')?.ref_id).toBe('web');
    const parts = graph.neighbours(web).filter((n) => n.edge.kind === 'part_of' && n.direction === 'in').map((n) => n.node.ref_id);
    expect(parts).toEqual(expect.arrayContaining(['web', 'billing/legacy.py']));
    expect(graph.componentsOf(graph.node('billing/legacy.py')!).sort()).toEqual(['billing', 'web']);
  });

  it('stops at max_nodes, keeps every focus, records edges to visited nodes and visits each node once', async () => {
    const graph = await ArchitectureGraph.of(engine);
    const focus = ['billing', 'web/server.ts'].map((r) => graph.lookup(r)!);
    for (const max of [1, 2, 5, 8]) {
      const sub = bfsSubgraph(graph, focus, 3, max);
      expect(sub.nodes.length).toBe(Math.max(max, 2));
      expect(sub.nodes.slice(0, 2).map((n) => n.ref_id)).toEqual(['billing', 'web/server.ts']);
      expect(new Set(sub.nodes.map((n) => n.ref_id)).size).toBe(sub.nodes.length);
      const inside = new Set(sub.nodes.map((n) => n.ref_id));
      for (const e of sub.edges) expect(inside.has(e.src) && inside.has(e.dst)).toBe(true);
    }
    const b = await oracle.buildContext(['billing'], { maxNodes: 3 });
    expect(b.graph.nodes).toHaveLength(3);
    expect(b.warning).toMatch(/max_nodes \(3\)/);
    // Priority: what it is part of comes before what it depends on.
    expect(b.graph.nodes[1]!.ref_id).toBe('component:billing');
  });

  it('suggests up to 5 ids for an unknown one, prefix matches first', async () => {
    const err = await oracle.buildContext(['billing/servic']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VltError);
    expect((err as VltError).code).toBe('REF_NOT_FOUND');
    const suggestions = (err as VltError).details?.suggestions as string[];
    expect(suggestions[0]).toBe('billing/service.py');
    expect(suggestions.length).toBeLessThanOrEqual(5);
    const typo = await oracle.buildContext(['component:biling']).catch((e: unknown) => e as VltError);
    expect((typo as VltError).details?.suggestions).toContain('component:billing');
  });

  it('analyses impact both ways, and reverse halves the downstream depth', async () => {
    const r = await oracle.why('billing/models.py#Invoice');
    expect(r.downstream.map((t) => t.ref_id)).toEqual(['billing/service.py#create_invoice']);
    expect(r.downstream[0]!.children.map((t) => t.ref_id)).toEqual(expect.arrayContaining(['billing/api.py#post_invoice']));
    expect(r.impact.downstream_direct).toBe(1);
    expect(r.impact.downstream_transitive).toBeGreaterThanOrEqual(3);
    expect(r.impact.stale_count).toBe(1);
    const rev = await oracle.why('billing/models.py#Invoice', { depth: 4, reverse: true });
    expect(rev.depth).toEqual({ upstream: 4, downstream: 2 });
    const text = renderWhyTree(r);
    expect(text).toMatch(/^billing\/models.py#Invoice \(symbol\)\n├── upstream/);
    expect(text).toContain('└── billing/service.py#create_invoice [symbol, touches_entity]');
    expect(text).not.toMatch(/\x1b\[/);
  });

  it('lists routes of every framework the workspace uses', async () => {
    const routes = await oracle.routes();
    expect(routes.map((r) => `${r.method} ${r.path} ${r.handler} ${r.framework}`)).toEqual([
      'POST /invoices/ post_invoice fastapi',
      'GET /invoices/{invoice_id} get_invoice fastapi',
      'GET /health health express',
      'POST /pages/:id <inline> express',
    ]);
  });

  it('lints the rules: a denied dependency with its line, and a component no note covers', async () => {
    const report = await oracle.lint();
    expect(report.errors).toBe(2);
    expect(report.violations[0]).toMatchObject({ rule: 'web-documented', severity: 'error' });
    expect(report.violations.map((v) => v.message).join('\n')).toMatch(/no note describes web/);
    // billing/legacy.py is annotated into web as well, so its import of web is not a violation.
    expect(report.violations.some((v) => v.rule === 'billing-is-headless')).toBe(false);
    expect((await oracle.lint({ strict: true })).warnings).toBe(0);
  });

  it('reads git activity incrementally from the last HEAD it kept', async () => {
    const activity = new NodeGitActivity(dir);
    const first = await activity.read();
    expect(first?.times.length).toBe(7);
    write(dir, 'billing/models.py', `${FILES['billing/models.py']}# more\n`);
    git(dir, NOW - DAY, 'commit', '-q', '-am', 'Models');
    const fresh = new NodeGitActivity(dir);
    const next = await fresh.read();
    expect(next?.times.length).toBe(8);
    expect(next?.files.get('billing/models.py')).toEqual([0, 7]);
  });
  it('draws the graph around a node as Mermaid: each node once in the shape of its kind, each edge labelled, the focus marked', async () => {
    const graph = await oracle.graph();
    const view = graphView(graph, await oracle.resolve(['billing/service.py']), { depth: 1, maxNodes: 40, mermaid: true });
    expect(view.focus).toEqual(['billing/service.py']);
    const ids = view.nodes.map((n) => n.ref_id);
    expect(ids).toEqual(expect.arrayContaining(['billing/service.py', 'billing', 'billing/models.py', 'billing/service.py#create_invoice']));
    expect(view.edges).toEqual(expect.arrayContaining([{ src: 'billing/service.py', dst: 'billing/models.py', kind: 'depends_on' }]));
    const lines = view.mermaid!.split('\n');
    expect(lines[0]).toBe('flowchart LR');
    const idOf = (ref: string) => `n${ids.indexOf(ref)}`;
    expect(lines).toContain(`  ${idOf('billing/service.py')}["service.py"]`);
    expect(lines).toContain(`  ${idOf('billing')}[/"billing/"/]`);
    expect(lines).toContain(`  ${idOf('billing/service.py#create_invoice')}(["create_invoice"])`);
    expect(lines).toContain(`  ${idOf('billing/service.py')} -->|depends_on| ${idOf('billing/models.py')}`);
    expect(lines.at(-1)).toBe(`  class ${idOf('billing/service.py')} focus`);
    // Every edge of the view is drawn, between nodes that are declared.
    expect(lines.filter((l) => l.includes('-->|'))).toHaveLength(view.edges.length);
    // Only the edge kinds asked for; with no focus, the root and the components.
    const deps = graphView(graph, await oracle.resolve(['billing/service.py']), { depth: 1, maxNodes: 40, edges: ['depends_on'] });
    expect(new Set(deps.edges.map((e) => e.kind))).toEqual(new Set(['depends_on']));
    const overview = graphView(graph, [], { depth: 1, maxNodes: 40 });
    expect(overview.focus).toEqual(['.', 'component:billing', 'component:web']);
    expect(toMermaid({ nodes: [{ ref_id: 'a"b<c>', kind: 'file', summary: '' }], edges: [], focus: [] })).toContain('n0["a#quot;b#lt;c#gt;"]');
  });

  it('finds nodes by the words of their name, path or summary, filtered by kind, best first', async () => {
    const graph = await oracle.graph();
    const hits = searchNodes(graph, 'invoice', { limit: 20 });
    expect(hits[0]).toMatchObject({ ref_id: 'billing/models.py#Invoice', kind: 'symbol' });
    // Definitions by the start of their name (the index holds millions on a large tree).
    expect(searchNodes(graph, 'create', { kinds: ['symbol'], limit: 5 }).map((h) => h.ref_id)).toEqual(['billing/service.py#create_invoice']);
    expect(searchNodes(graph, 'billing', { kinds: ['component', 'module'], limit: 5 }).map((h) => h.ref_id)).toEqual(['billing', 'component:billing']);
    expect(searchNodes(graph, 'invoices payments', { kinds: ['component'], limit: 5 }).map((h) => h.ref_id)).toEqual(['component:billing']);
    expect(searchNodes(graph, 'no such thing anywhere', { limit: 5 })).toEqual([]);
    expect(() => searchNodes(graph, '  ', { limit: 5 })).toThrow(VltError);
  });
  it('tags each bundle with an etag, serves the same request from its cache, and answers a matching if_none_match with not_modified', async () => {
    const a = await oracle.buildContext(['billing/service.py'], { depth: 1 });
    expect(a.etag).toMatch(/^[0-9a-f]{16}$/);
    const b = await oracle.buildContext(['billing/service.py'], { depth: 1 });
    expect(b).toBe(a);
    expect((await oracle.buildContext(['billing/service.py'], { depth: 2 })).etag).not.toBe(a.etag);
    // Through the tool (without git history here, so another bundle than the oracle's above).
    const ctx: ToolContext = { getEngine: () => Promise.resolve(engine), fs: nodeWorkspaceFs, logger: silentLogger };
    const first = await invokeTool(getContextTool, ctx, { ref_ids: ['billing/service.py'], depth: 1 });
    const etag = first.ok ? first.value.etag : '';
    const same = await invokeTool(getContextTool, ctx, { ref_ids: ['billing/service.py'], depth: 1, if_none_match: etag });
    expect(same).toEqual({ ok: true, value: { version: 2, etag, not_modified: true } });
    const other = await invokeTool(getContextTool, ctx, { ref_ids: ['billing/service.py'], depth: 1, if_none_match: '0000000000000000' });
    expect(other.ok && 'focus' in other.value).toBe(true);
    // A change to the index is a new bundle: the etag it had no longer matches.
    write(dir, 'billing/service.py', `${FILES['billing/service.py']}\ndef refund(invoice):\n    return -invoice.total()\n`);
    await engine.index();
    const after = await invokeTool(getContextTool, ctx, { ref_ids: ['billing/service.py'], depth: 1, if_none_match: etag });
    expect(after.ok && 'not_modified' in after.value).toBe(false);
  });
});
