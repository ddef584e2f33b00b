/**
 * The Context Oracle's data model: the nodes and edges of the architecture graph, their ids, and
 * the versioned bundle `build_context` returns (the `--json` contract of `vlt ctx` and the
 * `get_context` tool). The graph itself is computed from the index in graph.ts.
 *
 * Ids are derived from what a user already types:
 * - a module is a directory, by its workspace path (`src/core`; the root is `.`);
 * - a file is its path (`src/core/engine.ts`); a Markdown file is a `note`;
 * - a symbol is `path#QualifiedName` (`src/core/engine.ts#Engine.search`);
 * - a component, declared in `vlt.toml [[architecture.component]]` or named by a
 *   `vlt:component=NAME` annotation, is `component:NAME`.
 */

export type NodeKind = 'component' | 'module' | 'file' | 'symbol' | 'note';

/**
 * Edge kinds. `part_of`: containment (symbol in file, file in module, module in module, code in
 * a component). `touches_entity`: code that uses a type (class, struct, interface, enum).
 * `uses`: a call or other use of a function, method or value. `implements`: a type that extends
 * or implements another. `depends_on`: a resolved import, and the module and component
 * dependencies it adds up to. `touches_code`: a note that describes code (frontmatter `ref:`,
 * a link to its path, the path in a code span, or a README in the module's folder).
 */
export type EdgeKind = 'part_of' | 'touches_entity' | 'uses' | 'implements' | 'depends_on' | 'touches_code';

/** The order in which the breadth-first walk follows edges: lower first. */
export const EDGE_PRIORITY: Readonly<Record<EdgeKind, number>> = {
  part_of: 1,
  touches_entity: 2,
  uses: 3,
  implements: 3,
  depends_on: 4,
  touches_code: 5,
};

export interface ArchNode {
  ref_id: string;
  kind: NodeKind;
  /** One line: a symbol's signature or docstring, a note's title, a component's summary. */
  summary: string;
  /** The workspace path it lives in (absent for a component). */
  path?: string;
  /** 1-based lines of a symbol. */
  line?: number;
  end_line?: number;
  /** A symbol's kind (function, class, ...). */
  symbol_kind?: string;
}

export interface ArchEdge {
  src: string;
  dst: string;
  kind: EdgeKind;
}

/** A neighbour of a node: the edge and the node at its other end. */
export interface Neighbour {
  edge: ArchEdge;
  node: ArchNode;
  /** `out`: the edge leaves the node asked about; `in`: it arrives there. */
  direction: 'out' | 'in';
}

/** Prefix of a component's id. */
export const COMPONENT_PREFIX = 'component:';

export function componentId(name: string): string {
  return `${COMPONENT_PREFIX}${name}`;
}

export function symbolId(path: string, qualifiedName: string): string {
  return `${path}#${qualifiedName}`;
}

/** The module (directory) a path lies in: `a/b/c.ts` → `a/b`, `c.ts` → `.`. */
export function moduleOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '.' : path.slice(0, i);
}

export type Activity = 'hot' | 'warm' | 'cold' | 'dormant';

export interface FocusInfo {
  ref_id: string;
  kind: NodeKind;
  summary: string;
  /** External links (http, https) of the notes that describe it. */
  links?: Array<{ url: string; label: string }>;
  /** Git activity of its files; absent without git history. */
  activity?: { level: Activity; commits_30d: number; last_commit: string | null };
}

export interface TextChunk {
  doc_path: string;
  section: SectionKind;
  heading: string;
  line: number;
  content: string;
}

export type SectionKind = 'spec' | 'invariants' | 'constraints' | 'api' | 'tests' | 'other';

/** Doc sections in the order a bundle lists them. */
export const SECTION_PRIORITY: readonly SectionKind[] = ['spec', 'invariants', 'constraints', 'api', 'tests', 'other'];

export interface CodeSymbol {
  ref_id: string;
  file_path: string;
  symbol_name: string;
  kind: string;
  line_start: number;
  line_end: number;
  /** `vlt:key=value` annotations that apply to it. */
  annotations?: Record<string, string>;
}

export interface StaleDoc {
  doc_path: string;
  /** The code node it describes whose files changed after it. */
  ref_id: string;
  /** The newest commit to that code, and the doc's last commit (ISO dates). */
  code_changed: string;
  doc_changed: string;
  code_file: string;
}

export interface Route {
  /** GET, POST, ... for HTTP; QUERY, MUTATION, SUBSCRIPTION for GraphQL; RPC for gRPC; `*` for any. */
  method: string;
  /** `/users/{id}`, a GraphQL field, or `Service/Method`. */
  path: string;
  handler: string;
  file: string;
  line: number;
  framework: string;
}

export type Coverage = 'high' | 'medium' | 'low' | 'none';

export interface TestInfo {
  /** The framework detected for the focus's language, or null when none is. */
  framework: string | null;
  test_files: string[];
  test_count: number;
  coverage_estimate: Coverage;
}

export interface ConstraintInfo {
  rule: string;
  description: string;
  type: 'deny' | 'require';
  definition: Record<string, unknown>;
}

/** The bundle `build_context` returns; `version` changes with any incompatible change. */
export interface ContextBundle {
  version: 2;
  focus: FocusInfo;
  /** Every focus, the first being `focus`. */
  focus_nodes: FocusInfo[];
  graph: { nodes: ArchNode[]; edges: ArchEdge[] };
  text_chunks: TextChunk[];
  code_symbols: CodeSymbol[];
  sync_status: { stale_docs: StaleDoc[]; last_reindex: string | null; history: 'git' | 'none' };
  constraints: ConstraintInfo[];
  routes: Route[];
  tests: TestInfo | null;
  warning: string | null;
  /**
   * The bundle's version tag (SHA-256 of the rest, 16 hex digits): pass it back as
   * `if_none_match` to be told `not_modified` instead of getting the same bundle again.
   */
  etag: string;
}

/** The answer to a request whose `if_none_match` is the bundle's current etag. */
export interface ContextNotModified {
  version: 2;
  etag: string;
  not_modified: true;
}
