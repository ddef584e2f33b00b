/**
 * The architecture graph as a picture and as a list: `vlt graph` / `get_graph` (the subgraph
 * around some nodes, or around the workspace's root, as JSON or a Mermaid flowchart) and
 * `vlt nodes` / `search_graph` (the graph's nodes by name and kind).
 */
import { VltError } from '../errors';
import type { ArchitectureGraph } from './architecture-graph';
import { bfsSubgraph } from './bundle';
import type { ArchEdge, ArchNode, EdgeKind, NodeKind } from './model';

export const NODE_KINDS = ['component', 'module', 'file', 'symbol', 'note'] as const satisfies readonly NodeKind[];
export const EDGE_KINDS = ['part_of', 'touches_entity', 'uses', 'implements', 'depends_on', 'touches_code'] as const satisfies readonly EdgeKind[];

export interface GraphView {
  /** The nodes the walk started from. */
  focus: string[];
  nodes: ArchNode[];
  edges: ArchEdge[];
  /** Neighbours not shown because max_nodes was reached. */
  left_out: number;
  /** The same subgraph as a Mermaid flowchart, when asked for. */
  mermaid?: string;
}

export interface GraphViewOptions {
  depth: number;
  maxNodes: number;
  /** Only these edge kinds; all when absent. */
  edges?: readonly EdgeKind[];
  mermaid?: boolean;
}

/**
 * The subgraph within `depth` steps of `focus` (the workspace's root folder, and the declared
 * components, when none is given), at most `maxNodes` nodes.
 */
export function graphView(graph: ArchitectureGraph, focus: readonly ArchNode[], opts: GraphViewOptions): GraphView {
  const start = focus.length > 0 ? focus : [graph.moduleNode('.'), ...graph.allComponents()];
  const sub = bfsSubgraph(graph, start, opts.depth, Math.max(opts.maxNodes, start.length));
  const kinds = opts.edges ? new Set(opts.edges) : undefined;
  const edges = kinds ? sub.edges.filter((e) => kinds.has(e.kind)) : sub.edges;
  const view: GraphView = { focus: start.map((n) => n.ref_id), nodes: sub.nodes, edges, left_out: sub.leftOut };
  if (opts.mermaid) view.mermaid = toMermaid(view);
  return view;
}

/** Each kind of node in its own shape, so that a reader tells a folder from a file at a glance. */
const SHAPES: Readonly<Record<NodeKind, [string, string]>> = {
  component: ['[[', ']]'],
  module: ['[/', '/]'],
  file: ['[', ']'],
  symbol: ['([', '])'],
  note: ['>', ']'],
};

/** A Mermaid flowchart of the view: one node per ArchNode (labelled with its short name), one labelled arrow per edge. */
export function toMermaid(view: Pick<GraphView, 'nodes' | 'edges' | 'focus'>): string {
  const ids = new Map(view.nodes.map((n, i) => [n.ref_id, `n${i}`]));
  const lines = ['flowchart LR'];
  for (const n of view.nodes) {
    const [open, close] = SHAPES[n.kind];
    lines.push(`  ${ids.get(n.ref_id)}${open}"${mermaidText(shortName(n))}"${close}`);
  }
  for (const e of view.edges) {
    const a = ids.get(e.src);
    const b = ids.get(e.dst);
    if (a && b) lines.push(`  ${a} -->|${e.kind}| ${b}`);
  }
  const focus = view.focus.map((id) => ids.get(id)).filter((x): x is string => x !== undefined);
  if (focus.length) lines.push('  classDef focus stroke-width:3px', `  class ${focus.join(',')} focus`);
  return lines.join('\n');
}

/** What a node is called in a picture: a symbol's qualified name, a path's last part, a component's name. */
function shortName(n: ArchNode): string {
  if (n.kind === 'symbol' && n.path) return n.ref_id.slice(n.path.length + 1);
  if (n.kind === 'component') return n.ref_id;
  if (n.ref_id === '.') return '(root)';
  return `${n.ref_id.slice(n.ref_id.lastIndexOf('/') + 1)}${n.kind === 'module' ? '/' : ''}`;
}

/** Mermaid's quoted labels take entity codes for the characters that would end them. */
function mermaidText(s: string): string {
  return s.replace(/"/g, '#quot;').replace(/</g, '#lt;').replace(/>/g, '#gt;').replace(/[\r\n]+/g, ' ');
}

export interface NodeHit extends ArchNode {
  score: number;
}

/**
 * Nodes whose name, path or summary hold the query's words, best first: a name equal to the
 * query, then a name that starts with it, then names and paths holding its words, then
 * summaries. Symbols are found by the start of their name (the index has millions on a large
 * tree), the rest by their whole text.
 */
export function searchNodes(graph: ArchitectureGraph, query: string, opts: { kinds?: readonly NodeKind[]; limit: number }): NodeHit[] {
  const q = query.trim().toLowerCase();
  if (!q) throw new VltError('USAGE', 'the node search query is empty');
  const words = q.split(/[^\p{L}\p{N}_$]+/u).filter((w) => w.length > 0);
  if (words.length === 0) throw new VltError('USAGE', 'the node search query has no words');
  const kinds = new Set<NodeKind>(opts.kinds ?? NODE_KINDS);
  const candidates = new Map<string, ArchNode>();
  if ([...kinds].some((k) => k !== 'symbol')) for (const n of graph.namedNodes()) if (kinds.has(n.kind)) candidates.set(n.ref_id, n);
  if (kinds.has('symbol')) {
    const raw = query.trim().split(/[^\p{L}\p{N}_$.]+/u).filter(Boolean);
    for (const w of new Set([...raw, ...raw.map((x) => x[0]!.toUpperCase() + x.slice(1))])) {
      for (const n of graph.symbolNodesByPrefix(w.split('.').pop()!, 200)) candidates.set(n.ref_id, n);
    }
  }
  const hits: NodeHit[] = [];
  for (const n of candidates.values()) {
    const score = nodeScore(n, q, words);
    if (score > 0) hits.push({ ...n, score });
  }
  return hits.sort((a, b) => b.score - a.score || a.ref_id.length - b.ref_id.length || a.ref_id.localeCompare(b.ref_id)).slice(0, opts.limit);
}

function nodeScore(n: ArchNode, q: string, words: readonly string[]): number {
  const name = shortName(n).toLowerCase().replace(/\/$/, '');
  const id = n.ref_id.toLowerCase();
  const summary = n.summary.toLowerCase();
  let score = 0;
  if (name === q || name.split('.').pop() === q) score += 10;
  else if (name.startsWith(q)) score += 5;
  for (const w of words) {
    if (name.includes(w)) score += 3;
    else if (id.includes(w)) score += 2;
    else if (summary.includes(w)) score += 1;
    else return 0;
  }
  return score;
}
