/**
 * Impact analysis (`vlt why`): what a node depends on (upstream) and what depends on it
 * (downstream), as trees over the dependency edges (`uses`, `touches_entity`, `implements`,
 * `depends_on`), with a summary: direct and transitive dependents, how many of them a note
 * describes, and how many of those notes are stale.
 */
import type { ArchitectureGraph } from './architecture-graph';
import type { ArchNode, EdgeKind, NodeKind } from './model';

export interface TreeNode {
  ref_id: string;
  kind: NodeKind;
  summary: string;
  edge_kind: EdgeKind;
  children: TreeNode[];
}

export interface ImpactSummary {
  downstream_direct: number;
  downstream_transitive: number;
  /** Share of the downstream nodes (or of the node itself, when nothing depends on it) a note describes, 0-100. */
  doc_coverage: number;
  stale_count: number;
}

export interface WhyResult {
  node: { ref_id: string; kind: NodeKind; summary: string };
  upstream: TreeNode[];
  downstream: TreeNode[];
  impact: ImpactSummary;
  /** Depths walked each way, and whether a direction stopped at its node limit. */
  depth: { upstream: number; downstream: number };
  truncated: { upstream: boolean; downstream: boolean };
}

const DEPENDENCY_EDGES: ReadonlySet<EdgeKind> = new Set(['uses', 'touches_entity', 'implements', 'depends_on']);
export const DEFAULT_WHY_DEPTH = 3;
export const WHY_MAX_NODES = 50;

/** One direction's tree: breadth first, each node once, at most `maxNodes`. */
function tree(graph: ArchitectureGraph, root: ArchNode, direction: 'out' | 'in', depth: number, maxNodes: number): { roots: TreeNode[]; nodes: ArchNode[]; truncated: boolean } {
  const seen = new Set<string>([root.ref_id]);
  const nodes: ArchNode[] = [];
  const roots: TreeNode[] = [];
  let truncated = false;
  let frontier: Array<{ node: ArchNode; children: TreeNode[] }> = [{ node: root, children: roots }];
  for (let level = 0; level < depth && frontier.length > 0; level++) {
    const next: typeof frontier = [];
    for (const { node, children } of frontier) {
      for (const n of graph.neighbours(node)) {
        if (n.direction !== direction || !DEPENDENCY_EDGES.has(n.edge.kind) || seen.has(n.node.ref_id)) continue;
        if (nodes.length >= maxNodes) {
          truncated = true;
          break;
        }
        seen.add(n.node.ref_id);
        nodes.push(n.node);
        const t: TreeNode = { ref_id: n.node.ref_id, kind: n.node.kind, summary: n.node.summary, edge_kind: n.edge.kind, children: [] };
        children.push(t);
        next.push({ node: n.node, children: t.children });
      }
    }
    frontier = next;
  }
  return { roots, nodes, truncated };
}

/**
 * Upstream and downstream of `node`. `reverse` stresses upstream: it gets the full depth and
 * downstream `max(depth // 2, 1)`. `isStale` says whether a note is stale (false without history).
 */
export function analyzeImpact(
  graph: ArchitectureGraph,
  node: ArchNode,
  opts: { depth?: number; reverse?: boolean; maxNodes?: number; isStale?: (note: string) => boolean } = {},
): WhyResult {
  const depth = opts.depth ?? DEFAULT_WHY_DEPTH;
  const maxNodes = opts.maxNodes ?? WHY_MAX_NODES;
  const downDepth = opts.reverse ? Math.max(Math.floor(depth / 2), 1) : depth;
  const up = tree(graph, node, 'out', depth, maxNodes);
  const down = tree(graph, node, 'in', downDepth, maxNodes);
  const measured = down.nodes.length > 0 ? down.nodes : [node];
  let described = 0;
  const staleNotes = new Set<string>();
  for (const n of measured) {
    const notes = graph.notesFor(n, { inherited: true });
    if (notes.length > 0) described++;
    for (const note of notes) if (opts.isStale?.(note)) staleNotes.add(note);
  }
  return {
    node: { ref_id: node.ref_id, kind: node.kind, summary: node.summary },
    upstream: up.roots,
    downstream: down.roots,
    impact: {
      downstream_direct: down.roots.length,
      downstream_transitive: down.nodes.length,
      doc_coverage: Math.round((1000 * described) / measured.length) / 10,
      stale_count: staleNotes.size,
    },
    depth: { upstream: depth, downstream: downDepth },
    truncated: { upstream: up.truncated, downstream: down.truncated },
  };
}

function renderTree(children: readonly TreeNode[], prefix: string, lines: string[], paint: (s: string) => string): void {
  children.forEach((c, i) => {
    const last = i === children.length - 1;
    lines.push(`${prefix}${last ? '└── ' : '├── '}${c.ref_id} ${paint(`[${c.kind}, ${c.edge_kind}]`)}`);
    renderTree(c.children, `${prefix}${last ? '    ' : '│   '}`, lines, paint);
  });
}

function summaryLine(r: WhyResult): string {
  const i = r.impact;
  return `impact: ${i.downstream_direct} direct and ${i.downstream_transitive} transitive dependents; docs cover ${i.doc_coverage}%; ${i.stale_count} stale doc${i.stale_count === 1 ? '' : 's'}`;
}

/** The plain tree: box-drawing characters, no colour (for pipes and CI logs). */
export function renderWhyTree(r: WhyResult): string {
  const lines = [`${r.node.ref_id} (${r.node.kind})`];
  const sections: Array<[string, TreeNode[], boolean]> = [
    [`upstream: what it depends on (depth ${r.depth.upstream})`, r.upstream, r.truncated.upstream],
    [`downstream: what depends on it (depth ${r.depth.downstream})`, r.downstream, r.truncated.downstream],
  ];
  sections.forEach(([title, children, cut], i) => {
    const last = i === sections.length - 1;
    lines.push(`${last ? '└── ' : '├── '}${title}${children.length === 0 ? ': none' : ''}${cut ? ' (cut at the node limit)' : ''}`);
    renderTree(children, last ? '    ' : '│   ', lines, (s) => s);
  });
  lines.push(summaryLine(r));
  return lines.join('\n');
}

/** The panel: a framed header with the summary, then both trees; `colour` for a terminal. */
export function renderWhyPanel(r: WhyResult, colour: boolean): string {
  const dim = (s: string) => (colour ? `\x1b[2m${s}\x1b[0m` : s);
  const bold = (s: string) => (colour ? `\x1b[1m${s}\x1b[0m` : s);
  const head = [`${r.node.ref_id} (${r.node.kind})`, r.node.summary, summaryLine(r)].filter(Boolean).map((l) => (l.length > 100 ? `${l.slice(0, 99)}…` : l));
  const width = Math.max(...head.map((l) => l.length));
  const lines = [`┌${'─'.repeat(width + 2)}┐`, ...head.map((l, i) => `│ ${i === 0 ? bold(l.padEnd(width)) : l.padEnd(width)} │`), `└${'─'.repeat(width + 2)}┘`];
  for (const [title, children, cut] of [
    ['Upstream (depends on)', r.upstream, r.truncated.upstream],
    ['Downstream (depended on by)', r.downstream, r.truncated.downstream],
  ] as const) {
    lines.push('', bold(title) + (cut ? dim(' (cut at the node limit)') : ''));
    if (children.length === 0) lines.push(dim('  none'));
    renderTree(children, '  ', lines, dim);
  }
  return lines.join('\n');
}
