/**
 * Conversions between LSP's coordinates (URIs, 0-based lines and UTF-16 characters) and the
 * engine's (workspace-relative POSIX paths, 1-based lines and columns).
 */
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Location, Range } from 'vscode-languageserver-protocol';
import { VltError } from '../core/errors';
import type { SourceRange } from '../core/intel/lsp';

export class Coordinates {
  constructor(readonly root: string) {}

  /** The workspace-relative path of a `file:` URI (USAGE for another scheme, PATH_OUTSIDE_WORKSPACE outside the root). */
  relPath(uri: string): string {
    let abs: string;
    try {
      abs = fileURLToPath(uri);
    } catch {
      throw new VltError('USAGE', `not a file URI: ${uri.slice(0, 200)}`);
    }
    const rel = path.relative(this.root, abs);
    if (rel.startsWith('..') || path.isAbsolute(rel)) throw new VltError('PATH_OUTSIDE_WORKSPACE', `${abs} is outside the workspace ${this.root}`);
    return rel.split(path.sep).join('/');
  }

  /** A workspace-relative (or absolute) path as a `file:` URI. */
  uri(p: string): string {
    return pathToFileURL(path.isAbsolute(p) ? p : path.join(this.root, p)).toString();
  }

  /** A 1-based line and column as an empty LSP range at that place. */
  point(line: number, col: number): Range {
    const pos = { line: Math.max(0, line - 1), character: Math.max(0, col - 1) };
    return { start: pos, end: pos };
  }

  /** An LSP location as the engine's range; a location outside the workspace keeps its absolute path. */
  sourceRange(loc: Location): SourceRange {
    let p: string;
    try {
      p = this.relPath(loc.uri);
    } catch {
      p = loc.uri.startsWith('file:') ? fileURLToPath(loc.uri) : loc.uri;
    }
    return { path: p, startLine: loc.range.start.line + 1, startCol: loc.range.start.character + 1, endLine: loc.range.end.line + 1, endCol: loc.range.end.character + 1 };
  }
}
