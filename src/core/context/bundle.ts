/**
 * `build_context`'s pieces: the breadth-first subgraph around the focus nodes, and the doc
 * chunks of the notes that describe it, ordered by section.
 *
 * The walk goes both ways along every edge, takes a node's neighbours in edge-priority order,
 * records an edge even when its other end was already visited (so the subgraph's edges are
 * complete), never visits a node twice, always includes the focus nodes, and stops hard at
 * `maxNodes`.
 */
import type { ArchitectureGraph } from './architecture-graph';
import { sectionOf } from './architecture-graph';
import { SECTION_PRIORITY, type ArchEdge, type ArchNode, type TextChunk } from './model';

export interface Subgraph {
  nodes: ArchNode[];
  edges: ArchEdge[];
  /** Neighbours not visited because `maxNodes` was reached. */
  leftOut: number;
}

/** The subgraph within `depth` steps of the focus nodes, at most `maxNodes` nodes. */
export function bfsSubgraph(graph: ArchitectureGraph, focus: readonly ArchNode[], depth: number, maxNodes: number): Subgraph {
  const nodes = new Map<string, ArchNode>();
  const edges: ArchEdge[] = [];
  const edgeKeys = new Set<string>();
  let leftOut = 0;
  let frontier: ArchNode[] = [];
  for (const f of focus) {
    if (!nodes.has(f.ref_id)) {
      nodes.set(f.ref_id, f);
      frontier.push(f);
    }
  }
  const addEdge = (e: ArchEdge) => {
    const key = `${e.src}|${e.kind}|${e.dst}`;
    if (edgeKeys.has(key)) return;
    edgeKeys.add(key);
    edges.push(e);
  };
  for (let level = 0; level < depth && frontier.length > 0; level++) {
    const next: ArchNode[] = [];
    for (const node of frontier) {
      for (const n of graph.neighbours(node)) {
        if (nodes.has(n.node.ref_id)) {
          addEdge(n.edge);
          continue;
        }
        if (nodes.size >= maxNodes) {
          leftOut++;
          continue;
        }
        nodes.set(n.node.ref_id, n.node);
        addEdge(n.edge);
        next.push(n.node);
      }
    }
    frontier = next;
  }
  // Edges between nodes that were both reached, but through other paths, are part of the subgraph too.
  for (const node of nodes.values()) {
    for (const n of graph.neighbours(node)) if (nodes.has(n.node.ref_id)) addEdge(n.edge);
  }
  return { nodes: [...nodes.values()], edges, leftOut };
}

/** Characters of a chunk's text a bundle carries. */
const CHUNK_CHARS = 1500;

/**
 * The doc chunks of the notes in the subgraph and of those that describe its focus, by section
 * priority (spec, invariants, constraints, api, tests, other), then notes about the focus first,
 * then in the order of the note; at most `maxChunks`.
 */
export function collectChunks(graph: ArchitectureGraph, subgraph: Subgraph, focus: readonly ArchNode[], maxChunks: number): TextChunk[] {
  const rank = new Map<string, number>();
  for (const f of focus) for (const n of graph.notesFor(f, { inherited: true })) rank.set(n, Math.min(rank.get(n) ?? 0, 0));
  for (const f of focus) if (f.kind === 'note') rank.set(f.ref_id, -1);
  for (const n of subgraph.nodes) if (n.kind === 'note' && !rank.has(n.ref_id)) rank.set(n.ref_id, 1);
  const chunks: Array<TextChunk & { docRank: number; order: number }> = [];
  for (const [doc, docRank] of rank) {
    const f = graph.file(doc);
    if (!f) continue;
    let order = 0;
    for (const c of graph.engine.store.chunksOfFile(f.id)) {
      const heading = c.symbol ?? graph.noteInfo(doc)?.title ?? doc;
      const content = c.text.trim();
      if (!content || /^---\n[\s\S]*\n---$/.test(content)) continue;
      chunks.push({
        doc_path: doc,
        section: sectionOf(heading),
        heading,
        line: c.startLine,
        content: content.length > CHUNK_CHARS ? `${content.slice(0, CHUNK_CHARS)}…` : content,
        docRank,
        order: order++,
      });
    }
  }
  chunks.sort((a, b) => SECTION_PRIORITY.indexOf(a.section) - SECTION_PRIORITY.indexOf(b.section) || a.docRank - b.docRank || a.doc_path.localeCompare(b.doc_path) || a.order - b.order);
  return chunks.slice(0, maxChunks).map(({ docRank: _r, order: _o, ...c }) => c);
}
