/**
 * `vlt coderag status` without opening the index: what the index holds comes from the summary
 * its last commit wrote beside it (src/core/status.ts), what the configuration says from the
 * configuration, and the output from the same code as the full CLI's (status-output.ts). The
 * thin front loads this small bundle (status-fast.js) instead of the full CLI when no daemon
 * answers; anything it does not handle exactly as the full command would (other options, an
 * embedding provider, whose vector count needs the index, no current summary) it declines,
 * and the full CLI runs the command.
 */
import * as path from 'node:path';
import { loadConfig, warnIgnoredKeysOnce } from '../core/config';
import { bytesOnDisk, composeStatus, readStatusSummary, VECTORS_OFF_NOTE } from '../core/status';
import { EMBEDDINGS_FILE, INDEX_FILE, SCHEMA_VERSION, VLT_DIR } from '../core/store/schema';
import { stderrLogger, type LogLevel } from './progress';
import { renderStatus } from './status-output';

/** Runs `vlt coderag status` from the summary; its exit code, or undefined to run the full CLI. */
export async function fastStatus(argv: readonly string[], cwd: string): Promise<number | undefined> {
  const o = parse(argv);
  if (!o) return undefined;
  const root = path.resolve(cwd, o.workspace ?? '.');
  const dir = path.join(root, VLT_DIR);
  const indexFile = path.join(dir, INDEX_FILE);
  const stored = readStatusSummary(dir, indexFile, SCHEMA_VERSION);
  // An empty index is an error the full CLI words.
  if (!stored || stored.files === 0) return undefined;
  let config;
  try {
    config = await loadConfig(root, process.env);
  } catch {
    // A configuration error: the full CLI reports it as it always does.
    return undefined;
  }
  if (config.embeddings.enabled) return undefined;
  warnIgnoredKeysOnce(config, root, stderrLogger(process.stderr, o.level));
  const vectors = { enabled: false, count: 0, dimensions: null, model: null, note: VECTORS_OFF_NOTE };
  const report = composeStatus(root, stored, config, vectors, bytesOnDisk([indexFile, path.join(dir, EMBEDDINGS_FILE)], stored.sidecar_bytes));
  process.stdout.write(renderStatus(report, { json: o.json }));
  return 0;
}

/** The command line, when it is `coderag status` with only options this path handles. */
function parse(argv: readonly string[]): { json: boolean; workspace?: string; level: LogLevel } | undefined {
  const words: string[] = [];
  let json = false;
  let workspace: string | undefined;
  let level: LogLevel = 'info';
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--json') json = true;
    else if (a === '-C' || a === '--workspace') {
      workspace = argv[++i];
      if (workspace === undefined) return undefined;
    } else if (a.startsWith('--workspace=')) workspace = a.slice('--workspace='.length);
    else if (/^-C./.test(a)) workspace = a.slice(2);
    else if (a === '-q' || a === '--quiet') level = 'error';
    // Debug logs would come from opening the index: the full CLI prints those.
    else if (a === '-v' || a === '--verbose') return undefined;
    else if (a === '--no-daemon') continue;
    else if (a.startsWith('-')) return undefined;
    else words.push(a);
  }
  if (words.length !== 2 || words[0] !== 'coderag' || words[1] !== 'status') return undefined;
  return { json, level, ...(workspace !== undefined ? { workspace } : {}) };
}
