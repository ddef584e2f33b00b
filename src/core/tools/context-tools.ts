/**
 * The Context Oracle's agent tools: `get_context` (a versioned bundle around the code an agent
 * is about to change), `impact_analysis` (what depends on it, what it depends on),
 * `list_routes` (the workspace's API routes), `get_graph` (the architecture graph around some
 * nodes, as JSON or Mermaid) and `search_graph` (its nodes by name and kind).
 */
import { z } from 'zod';
import { CONTEXT_DEFAULTS, ContextOracle } from '../context/context-oracle';
import type { WhyResult } from '../context/impact';
import type { ContextBundle, ContextNotModified, Route } from '../context/model';
import { EDGE_KINDS, graphView, NODE_KINDS, searchNodes, type GraphView, type NodeHit } from '../context/graph-view';
import { strictArgs, type ToolContext, defineTool } from './definitions';
import { contextOutput, graphOutput, impactOutput, routesOutput, searchGraphOutput } from './outputs';

const refDescription = 'A file or folder path (src/auth, src/auth/login.ts), a symbol (src/auth/login.ts#LoginService.login, or LoginService.login when only one definition has that name), a note (docs/auth.md) or a declared component (component:auth).';

function oracle(ctx: ToolContext, engine: Awaited<ReturnType<ToolContext['getEngine']>>): ContextOracle {
  const activity = ctx.gitActivity;
  return new ContextOracle(engine, activity ? { activity: (signal) => activity(engine, signal) } : {});
}

const contextInput = strictArgs({
  ref_ids: z.array(z.string().min(1).max(500)).min(1).max(10).describe(`What to build the bundle around. Each: ${refDescription}`),
  depth: z.number().int().min(1).max(5).default(CONTEXT_DEFAULTS.depth).describe('How many steps of the graph to walk from the focus.'),
  max_nodes: z.number().int().min(1).max(200).default(CONTEXT_DEFAULTS.maxNodes).describe('The most nodes in the subgraph (a hard stop).'),
  max_chunks: z.number().int().min(0).max(50).default(CONTEXT_DEFAULTS.maxChunks).describe('The most doc chunks to include.'),
  if_none_match: z.string().max(64).optional().describe('The etag of a bundle you hold: when the bundle is still the same, the answer is just {version, etag, not_modified: true}.'),
}).meta({ examples: [{"ref_ids": ["src/billing/service.py"], "depth": 2, "max_nodes": 20}] });

export const getContextTool = defineTool({
  name: 'get_context',
  title: 'Context bundle for code about to change',
  description: [
    'Before changing a file, folder, symbol or component, get everything around it in one versioned JSON bundle (version 2):',
    'focus (what it is, its git activity hot/warm/cold/dormant and commits in 30 days, links), graph (nodes and edges: part_of, touches_entity, uses/implements, depends_on, touches_code),',
    'text_chunks (the docs that describe it, spec and invariants first), code_symbols (file and lines), sync_status (docs older than the code they describe),',
    'constraints (vlt.toml architecture rules that apply), routes (API endpoints in it), tests (framework, test files, count, coverage estimate) and warning.',
    'Each bundle has an etag; pass it back as if_none_match to be told not_modified instead of getting the same bundle again. An unknown ref_id fails with up to 5 suggestions. Then read the files it cites with read_file_range.',
  ].join(' '),
  inputSchema: contextInput,
  outputSchema: contextOutput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler(ctx, input): Promise<ContextBundle | ContextNotModified> {
    const engine = await ctx.getEngine();
    const bundle = await oracle(ctx, engine).buildContext(input.ref_ids, { depth: input.depth, maxNodes: input.max_nodes, maxChunks: input.max_chunks, ...(ctx.signal ? { signal: ctx.signal } : {}) });
    return input.if_none_match === bundle.etag ? { version: 2, etag: bundle.etag, not_modified: true } : bundle;
  },
});

const whyInput = strictArgs({
  ref_id: z.string().min(1).max(500).describe(refDescription),
  depth: z.number().int().min(1).max(6).default(3).describe('How many steps to follow each way.'),
  reverse: z.boolean().default(false).describe('Stress upstream: upstream gets the full depth, downstream max(depth // 2, 1).'),
}).meta({ examples: [{"ref_id": "db/models/query.py#QuerySet", "depth": 3}] });

export const impactAnalysisTool = defineTool({
  name: 'impact_analysis',
  title: 'Impact analysis',
  description:
    'What a change to a file, folder, symbol or component can break: the downstream tree (what uses or imports it), the upstream tree (what it uses or imports), and a summary (direct and transitive dependents, the share of them a doc describes, stale docs). At most 50 nodes each way. Use find_references for the exact uses of one symbol.',
  inputSchema: whyInput,
  outputSchema: impactOutput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler(ctx, input): Promise<WhyResult> {
    const engine = await ctx.getEngine();
    return oracle(ctx, engine).why(input.ref_id, { depth: input.depth, reverse: input.reverse, ...(ctx.signal ? { signal: ctx.signal } : {}) });
  },
});

const routesInput = strictArgs({
  scope: z.string().min(1).max(500).optional().describe(`Only the routes in this part of the workspace. ${refDescription}`),
  framework: z.string().min(1).max(40).optional().describe('Only routes of this framework (fastapi, flask, express, nestjs, gin, echo, fiber, spring, strawberry, ariadne, type-graphql, graphql-schema, grpc, ...).'),
  limit: z.number().int().min(1).max(1000).default(100).describe('The most routes to return.'),
}).meta({ examples: [{"scope": "src/api", "framework": "fastapi"}] });

export const listRoutesTool = defineTool({
  name: 'list_routes',
  title: 'API routes',
  description:
    "The workspace's API routes: HTTP endpoints (FastAPI, Flask, Express-style routers, NestJS, Gin, Echo, Fiber, net/http, Spring), GraphQL fields (schema files, Strawberry, Ariadne, TypeGraphQL) and gRPC methods (.proto), each with method, path, handler, file, line and framework.",
  inputSchema: routesInput,
  outputSchema: routesOutput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler(ctx, input): Promise<{ routes: Route[]; total: number }> {
    const engine = await ctx.getEngine();
    let routes = await new ContextOracle(engine).routes(input.scope);
    if (input.framework) routes = routes.filter((r) => r.framework === input.framework);
    return { routes: routes.slice(0, input.limit), total: routes.length };
  },
});

const graphInput = strictArgs({
  ref_ids: z.array(z.string().min(1).max(500)).max(10).optional().describe(`Where to start. Each: ${refDescription} Omit for the workspace's root folder and its declared components.`),
  depth: z.number().int().min(1).max(5).default(1).describe('How many steps of the graph to walk from them.'),
  max_nodes: z.number().int().min(1).max(500).default(40).describe('The most nodes shown (a hard stop).'),
  edges: z.array(z.enum(EDGE_KINDS)).min(1).optional().describe('Only these edge kinds: part_of (containment), uses, implements, depends_on (imports), touches_entity, touches_code (a note describes code). Omit for all.'),
  format: z.enum(['json', 'mermaid']).default('json').describe('mermaid adds the subgraph as a Mermaid flowchart (in `mermaid`), ready to paste into Markdown.'),
}).meta({ examples: [{"ref_ids": ["src/auth"], "depth": 2, "format": "mermaid"}] });

export const getGraphTool = defineTool({
  name: 'get_graph',
  title: 'Architecture graph',
  description:
    "The architecture graph around some files, folders, symbols, notes or components (or the workspace's root): its nodes (ref_id, kind, one-line summary) and edges (part_of, uses, implements, depends_on, touches_entity, touches_code), within depth steps and max_nodes; with format mermaid, also as a Mermaid flowchart. Use get_context for everything around one thing before changing it, and search_graph to find a node's id.",
  inputSchema: graphInput,
  outputSchema: graphOutput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler(ctx, input): Promise<GraphView> {
    const engine = await ctx.getEngine();
    const co = new ContextOracle(engine);
    const focus = input.ref_ids?.length ? await co.resolve(input.ref_ids) : [];
    return graphView(await co.graph(), focus, { depth: input.depth, maxNodes: input.max_nodes, ...(input.edges ? { edges: input.edges } : {}), mermaid: input.format === 'mermaid' });
  },
});

const searchGraphInput = strictArgs({
  query: z.string().min(1).max(500).describe('Words of a name, path or summary: "auth", "payment service", "LoginService".'),
  kind: z.array(z.enum(NODE_KINDS)).min(1).optional().describe('Only these kinds of node: component, module (folder), file, symbol, note. Omit for all.'),
  limit: z.number().int().min(1).max(100).default(20).describe('The most nodes to return.'),
}).meta({ examples: [{"query": "billing", "kind": ["component", "module"]}] });

export const searchGraphTool = defineTool({
  name: 'search_graph',
  title: 'Search the architecture graph',
  description:
    "Find nodes of the architecture graph (declared components, folders, files, definitions, notes) whose name, path or summary holds every word of the query, best first (a name equal to the query, then one starting with it). Returns each node's ref_id (to pass to get_context, impact_analysis or get_graph), kind and summary. For code by what it does, use search_code.",
  inputSchema: searchGraphInput,
  outputSchema: searchGraphOutput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler(ctx, input): Promise<{ nodes: NodeHit[] }> {
    const engine = await ctx.getEngine();
    return { nodes: searchNodes(await new ContextOracle(engine).graph(), input.query, { limit: input.limit, ...(input.kind ? { kinds: input.kind } : {}) }) };
  },
});
