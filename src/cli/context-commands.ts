/**
 * The Context Oracle's commands: `vlt ctx` (a context bundle), `vlt why` (impact analysis),
 * `vlt routes`, `vlt graph` (the architecture graph as Mermaid or JSON), `vlt nodes` (its nodes
 * by name) and `vlt lint` (the architecture rules, with exit codes for CI). They run where the
 * workspace's other read commands run (the daemon, or this process); all but `lint` run their
 * tool (get_context, impact_analysis, list_routes, get_graph, search_graph), so their `--json`
 * is the tool's answer.
 */
import { Option, type Command } from 'commander';
import { CONTEXT_DEFAULTS, ContextOracle } from '../core/context/context-oracle';
import { renderWhyPanel, renderWhyTree } from '../core/context/impact';
import { VltError } from '../core/errors';
import { formatBundleMarkdown, formatLint, formatRoutes } from './context-format';
import type { CommandContext } from './command-context';
import { EDGE_KINDS, NODE_KINDS } from '../core/context/graph-view';
import { intIn, listOf } from './options';

export function registerContextCommands(program: Command, ctx: CommandContext): void {
  const { out, json } = ctx;

  program
    .command('ctx')
    .description('a context bundle: what a file, folder, symbol or component is, its graph, docs, rules, routes, tests and git activity')
    .argument('<ref...>', 'path, folder, path#Symbol, Symbol, note or component:NAME')
    .option('--json', 'the versioned JSON bundle (version 2)')
    .option('--markdown', 'Markdown (the default on a terminal as well)')
    .option('--depth <n>', 'steps of the graph to walk', intIn(1, 5), CONTEXT_DEFAULTS.depth)
    .option('--max-nodes <n>', 'most nodes in the subgraph', intIn(1, 200), CONTEXT_DEFAULTS.maxNodes)
    .option('--max-chunks <n>', 'most doc chunks', intIn(0, 50), CONTEXT_DEFAULTS.maxChunks)
    .option('--if-none-match <etag>', 'the etag of a bundle you hold: print only {version, etag, not_modified} when it is unchanged')
    .action(async (refs: string[], o: { json?: boolean; markdown?: boolean; depth: number; maxNodes: number; maxChunks: number; ifNoneMatch?: string }) => {
      if (o.json && o.markdown) throw new VltError('USAGE', '--json and --markdown cannot be used together');
      const bundle = await ctx.workspace().tool('get_context', { ref_ids: refs, depth: o.depth, max_nodes: o.maxNodes, max_chunks: o.maxChunks, ...(o.ifNoneMatch ? { if_none_match: o.ifNoneMatch } : {}) });
      if (o.json) json(bundle);
      else if ('not_modified' in bundle) out(`not modified (etag ${bundle.etag})`);
      else out(formatBundleMarkdown(bundle));
    });

  program
    .command('why')
    .description('impact analysis: what depends on a file, folder, symbol or component, and what it depends on')
    .argument('<ref>', 'path, folder, path#Symbol, Symbol or component:NAME')
    .option('--depth <n>', 'steps to follow each way', intIn(1, 6), 3)
    .option('--reverse', 'stress upstream: full depth upstream, half downstream')
    .addOption(new Option('--format <format>', 'panel (framed, coloured on a terminal) or tree (plain box-drawing, for pipes and CI)').choices(['panel', 'tree']))
    .option('--json', 'machine-readable output')
    .action(async (ref: string, o: { depth: number; reverse?: boolean; format?: 'panel' | 'tree'; json?: boolean }) => {
      const r = await ctx.workspace().tool('impact_analysis', { ref_id: ref, depth: o.depth, reverse: Boolean(o.reverse) });
      if (o.json) json(r);
      else if ((o.format ?? (ctx.io.stdout.isTTY ? 'panel' : 'tree')) === 'tree') out(renderWhyTree(r));
      else out(renderWhyPanel(r, ctx.io.stdout.isTTY && ctx.io.term !== 'dumb'));
    });

  program
    .command('routes')
    .description('API routes: HTTP endpoints, GraphQL fields and gRPC methods, with handler, file and line')
    .option('--scope <ref>', 'only routes in this file, folder or component')
    .option('--framework <name>', 'only this framework (fastapi, flask, express, nestjs, gin, spring, grpc, ...)')
    .option('-k, --limit <n>', 'most routes listed (the total counts them all)', intIn(1, 1000), 1000)
    .option('--json', "machine-readable output: list_routes' answer")
    .action(async (o: { scope?: string; framework?: string; limit: number; json?: boolean }) => {
      const r = await ctx.workspace().tool('list_routes', { ...(o.scope ? { scope: o.scope } : {}), ...(o.framework ? { framework: o.framework } : {}), limit: o.limit });
      if (o.json) json(r);
      else {
        out(formatRoutes(r.routes));
        if (r.total > r.routes.length) out(`(${r.routes.length} of ${r.total} listed; raise --limit for more)`);
      }
    });

  registerGraphCommands(program, ctx);

  program
    .command('lint')
    .description('check the architecture rules of vlt.toml (deny: A must not depend on B; require: A covered by a note or test); exit 1 when one is broken')
    .option('--strict', 'also warn about components no rule names and rules whose component matches no file')
    .option('--fail-on-warn', 'exit 1 on warnings too')
    .addOption(new Option('--format <format>', 'rich, json or porcelain (tab-separated: severity, rule, where, message)').choices(['rich', 'json', 'porcelain']).default('rich'))
    .action(async (o: { strict?: boolean; failOnWarn?: boolean; format: 'rich' | 'json' | 'porcelain' }) => {
      const report = await ctx.workspace().query((engine) => new ContextOracle(engine).lint({ strict: Boolean(o.strict) }));
      if (o.format === 'json') json(report);
      else {
        const text = formatLint(report, o.format);
        if (text) out(text);
      }
      if (report.errors > 0 || (o.failOnWarn && report.warnings > 0)) {
        throw new VltError('LINT_FAILED', `lint: ${report.errors} error${report.errors === 1 ? '' : 's'}, ${report.warnings} warning${report.warnings === 1 ? '' : 's'}`);
      }
    });
}

/** `vlt graph` and `vlt nodes`: the architecture graph as a picture, and its nodes by name. */
function registerGraphCommands(program: Command, ctx: CommandContext): void {
  const { out, json } = ctx;

  program
    .command('graph')
    .description('the architecture graph around files, folders, symbols, notes or components (or the root), as a Mermaid flowchart or JSON')
    .argument('[ref...]', 'path, folder, path#Symbol, Symbol, note or component:NAME (default: the root folder and the components)')
    .option('--depth <n>', 'steps of the graph to walk', intIn(1, 5), 1)
    .option('--max-nodes <n>', 'most nodes shown', intIn(1, 500), 40)
    .option('--edges <kinds>', `only these edge kinds, comma-separated: ${EDGE_KINDS.join(', ')}`, listOf(EDGE_KINDS))
    .option('--json', "get_graph's answer: nodes, edges and the Mermaid text")
    .action(async (refs: string[], o: { depth: number; maxNodes: number; edges?: Array<(typeof EDGE_KINDS)[number]>; json?: boolean }) => {
      const g = await ctx.workspace().tool('get_graph', { ...(refs.length ? { ref_ids: refs } : {}), depth: o.depth, max_nodes: o.maxNodes, ...(o.edges ? { edges: o.edges } : {}), format: 'mermaid' });
      if (o.json) json(g);
      else {
        out(g.mermaid ?? '');
        if (g.left_out > 0) ctx.wiring().logger.warn(`${g.left_out} more neighbours were left out at --max-nodes ${o.maxNodes}; raise it or lower --depth`);
      }
    });

  program
    .command('nodes')
    .description('search the architecture graph: components, folders, files, definitions and notes whose name, path or summary holds every word')
    .argument('<query...>', 'words of a name, path or summary')
    .option('--kind <kinds>', `only these kinds, comma-separated: ${NODE_KINDS.join(', ')}`, listOf(NODE_KINDS))
    .option('-k, --limit <n>', 'most nodes listed', intIn(1, 100), 20)
    .option('--json', "search_graph's answer")
    .action(async (words: string[], o: { kind?: Array<(typeof NODE_KINDS)[number]>; limit: number; json?: boolean }) => {
      const r = await ctx.workspace().tool('search_graph', { query: words.join(' '), limit: o.limit, ...(o.kind ? { kind: o.kind } : {}) });
      if (o.json) json(r);
      else out(r.nodes.length ? r.nodes.map((n) => `${n.kind.padEnd(9)} ${n.ref_id}${n.line ? `:${n.line}` : ''}  ${n.summary}`).join('\n') : 'no nodes');
    });
}
