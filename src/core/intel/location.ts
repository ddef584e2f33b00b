/**
 * A place navigation found (a definition or a reference) and who found it: the one type that
 * navigate.ts (the chain of providers) and references.ts (gathering and ranking references)
 * both speak, kept apart so that neither imports the other's module for it.
 */

/** Who answered: the editor's language server, ctags, the import graph, or the search index. */
export type Provenance = 'lsp' | 'ctags' | 'graph' | 'search';

export interface NavLocation {
  path: string;
  line: number;
  col: number;
  /** The definition's kind and signature, when the index knows them. */
  kind?: string;
  signature?: string;
  provenance: Provenance;
  exact: boolean;
  confidence: 'high' | 'medium' | 'low';
  /** How this location was found, in a few words. */
  how: string;
}
