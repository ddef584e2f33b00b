/**
 * The Context Oracle's commands: `vlt ctx` (a context bundle), `vlt why` (impact analysis),
 * `vlt routes` and `vlt lint` (the architecture rules, with exit codes for CI). They run where
 * the workspace's other read commands run (the daemon, or this process).
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { CONTEXT_DEFAULTS, ContextOracle } from '../core/context/context-oracle';
import { renderWhyPanel, renderWhyTree } from '../core/context/impact';
import type { Engine } from '../core/engine';
import { VltError } from '../core/errors';
import type { Logger } from '../core/ports';
import { gitActivity } from '../node/git-activity';
import { formatBundleMarkdown, formatLint, formatRoutes } from './context-format';
import { writeLine } from './io';
import type { CliIo } from '../protocol/cli';

export interface ContextCommandContext {
  io: CliIo;
  /** Runs `fn` over the workspace's index (building it first when there is none). */
  query: <T>(fn: (engine: Engine, logger: Logger) => Promise<T>) => Promise<T>;
}

function intIn(min: number, max: number) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`);
    return n;
  };
}

export function registerContextCommands(program: Command, ctx: ContextCommandContext): void {
  const out = (text: string) => writeLine(ctx.io.stdout, text);
  const json = (value: unknown) => out(JSON.stringify(value, null, 2));
  const oracle = (engine: Engine, logger: Logger) => new ContextOracle(engine, { activity: (signal) => gitActivity(engine.root, logger).read(signal ?? ctx.io.signal) });

  program
    .command('ctx')
    .description('a context bundle: what a file, folder, symbol or component is, its graph, docs, rules, routes, tests and git activity')
    .argument('<ref...>', 'path, folder, path#Symbol, Symbol, note or component:NAME')
    .option('--json', 'the versioned JSON bundle (version 2)')
    .option('--markdown', 'Markdown (the default on a terminal as well)')
    .option('--depth <n>', 'steps of the graph to walk', intIn(1, 5), CONTEXT_DEFAULTS.depth)
    .option('--max-nodes <n>', 'most nodes in the subgraph', intIn(1, 200), CONTEXT_DEFAULTS.maxNodes)
    .option('--max-chunks <n>', 'most doc chunks', intIn(0, 50), CONTEXT_DEFAULTS.maxChunks)
    .action(async (refs: string[], o: { json?: boolean; markdown?: boolean; depth: number; maxNodes: number; maxChunks: number }) => {
      if (o.json && o.markdown) throw new VltError('USAGE', '--json and --markdown cannot be used together');
      const bundle = await ctx.query((engine, logger) => oracle(engine, logger).buildContext(refs, { depth: o.depth, maxNodes: o.maxNodes, maxChunks: o.maxChunks, signal: ctx.io.signal }));
      if (o.json) json(bundle);
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
      const r = await ctx.query((engine, logger) => oracle(engine, logger).why(ref, { depth: o.depth, reverse: Boolean(o.reverse), signal: ctx.io.signal }));
      if (o.json) json(r);
      else if ((o.format ?? (ctx.io.stdout.isTTY ? 'panel' : 'tree')) === 'tree') out(renderWhyTree(r));
      else out(renderWhyPanel(r, ctx.io.stdout.isTTY && ctx.io.term !== 'dumb'));
    });

  program
    .command('routes')
    .description('API routes: HTTP endpoints, GraphQL fields and gRPC methods, with handler, file and line')
    .option('--scope <ref>', 'only routes in this file, folder or component')
    .option('--framework <name>', 'only this framework (fastapi, flask, express, nestjs, gin, spring, grpc, ...)')
    .option('--json', 'machine-readable output')
    .action(async (o: { scope?: string; framework?: string; json?: boolean }) => {
      let routes = await ctx.query((engine) => new ContextOracle(engine).routes(o.scope));
      if (o.framework) routes = routes.filter((r) => r.framework === o.framework);
      if (o.json) json(routes);
      else out(formatRoutes(routes));
    });

  program
    .command('lint')
    .description('check the architecture rules of vlt.toml (deny: A must not depend on B; require: A covered by a note or test); exit 1 when one is broken')
    .option('--strict', 'also warn about components no rule names and rules whose component matches no file')
    .option('--fail-on-warn', 'exit 1 on warnings too')
    .addOption(new Option('--format <format>', 'rich, json or porcelain (tab-separated: severity, rule, where, message)').choices(['rich', 'json', 'porcelain']).default('rich'))
    .action(async (o: { strict?: boolean; failOnWarn?: boolean; format: 'rich' | 'json' | 'porcelain' }) => {
      const report = await ctx.query((engine) => new ContextOracle(engine).lint({ strict: Boolean(o.strict) }));
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
