/**
 * How `vlt coderag status` prints, shared by the full CLI and the status fast path
 * (status-fast.ts), so that both print the same bytes.
 */
import type { SkippedRow } from '../core/store/rows';
import type { StatusReport } from '../core/status';
import { readQueue } from '../server/queue-state';
import { formatSkippedFiles, formatStatus } from './format';

/** The status output: JSON (`--json`) or text, the queue of whoever keeps the index current included. */
export function renderStatus(s: StatusReport, opts: { json: boolean; skippedFiles?: SkippedRow[] }): string {
  const q = readQueue(s.workspace);
  const queue = q ? { host: q.host, pid: q.pid, ...q.queue } : null;
  if (opts.json) return `${JSON.stringify({ ...s, queue, ...(opts.skippedFiles ? { skipped_files: opts.skippedFiles } : {}) }, null, 2)}\n`;
  const lines = [formatStatus(s, opts.skippedFiles !== undefined)];
  if (opts.skippedFiles) lines.push(formatSkippedFiles(opts.skippedFiles));
  lines.push(
    queue
      ? `queue: ${queue.host} (pid ${queue.pid}): ${queue.pending} pending, ${queue.uncommittedFiles} file(s) / ~${queue.uncommittedLines} line(s) not yet committed; ${queue.commits} commit(s)${queue.lastCommit ? `, last ${queue.lastCommit}` : ''}${queue.error ? `; last error ${queue.error.code}: ${queue.error.message}` : ''}`
      : 'queue: no editor or watch process is keeping this index current',
  );
  return lines.map((l) => (l.endsWith('\n') ? l : `${l}\n`)).join('');
}
