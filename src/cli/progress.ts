/**
 * Progress and logs for the CLI. Everything here writes to stderr: stdout carries results
 * only, so `vlt ... --json | jq` always works. On a TTY long work shows a redrawn bar with
 * rate and ETA; otherwise plain progress lines, at most one per second per phase.
 */
import type { Logger, ProgressEvent, ProgressSink } from '../core/ports';
import type { CliOutput } from '../protocol/cli';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const ORDER: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3, silent: 4 };

export function stderrLogger(stderr: CliOutput, level: LogLevel, clearLine: () => void = () => {}): Logger {
  const emit = (l: LogLevel, msg: string, args: unknown[]) => {
    if (ORDER[l] < ORDER[level]) return;
    clearLine();
    const extra = args.length ? ' ' + args.map((a) => (a instanceof Error ? a.message : typeof a === 'string' ? a : JSON.stringify(a))).join(' ') : '';
    stderr.write(`${l === 'info' ? '' : `${l}: `}${msg}${extra}\n`);
  };
  return {
    debug: (m, ...a) => emit('debug', m, a),
    info: (m, ...a) => emit('info', m, a),
    warn: (m, ...a) => emit('warn', m, a),
    error: (m, ...a) => emit('error', m, a),
  };
}

const PHASE_LABEL: Record<ProgressEvent['phase'], string> = {
  discover: 'discovering',
  parse: 'indexing',
  index: 'indexing',
  embed: 'embedding',
  persist: 'saving',
  eval: 'evaluating',
};

export class ProgressReporter {
  private readonly tty: boolean;
  private lastDraw = 0;
  private phaseStart = new Map<string, number>();
  private lastLine = new Map<string, number>();
  private drawn = false;

  constructor(
    private readonly stream: CliOutput,
    private readonly enabled = true,
    term: string | undefined = undefined,
  ) {
    this.tty = stream.isTTY && term !== 'dumb';
  }

  readonly sink: ProgressSink = (ev) => {
    if (!this.enabled) return;
    const now = Date.now();
    if (!this.phaseStart.has(ev.phase)) this.phaseStart.set(ev.phase, now);
    const started = this.phaseStart.get(ev.phase)!;
    const finished = ev.total > 0 && ev.done >= ev.total;
    const elapsed = (now - started) / 1000;
    const rate = elapsed > 0 ? ev.done / elapsed : 0;
    const unit = ev.phase === 'embed' ? 'chunks' : ev.phase === 'eval' ? 'commits' : 'files';
    if (this.tty) {
      if (ev.phase === 'persist') {
        this.stream.write(ev.done === 0 ? '\r\x1b[2Ksaving the index…' : '\r\x1b[2K');
        this.drawn = ev.done === 0;
        return;
      }
      if (!finished && now - this.lastDraw < 80) return;
      this.lastDraw = now;
      const width = 24;
      const frac = ev.total > 0 ? Math.min(1, ev.done / ev.total) : 0;
      const bar = ev.total > 0 ? '█'.repeat(Math.round(frac * width)).padEnd(width, '░') : ''.padEnd(width, '·');
      const eta = rate > 0 && ev.total > ev.done ? ` ETA ${formatSeconds((ev.total - ev.done) / rate)}` : '';
      const counts = ev.total > 0 ? `${ev.done}/${ev.total}` : `${ev.done}`;
      this.stream.write(`\r\x1b[2K${PHASE_LABEL[ev.phase]} ${bar} ${counts} ${unit} ${rate.toFixed(0)}/s${eta}`);
      this.drawn = true;
      if (finished) this.clear(true);
      return;
    }
    if (ev.phase === 'persist') {
      if (ev.done === 0) this.stream.write('saving the index…\n');
      return;
    }
    const last = this.lastLine.get(ev.phase) ?? 0;
    if (!finished && now - last < 1000) return;
    if (ev.total === 0 && ev.done === 0) return;
    this.lastLine.set(ev.phase, now);
    const counts = ev.total > 0 ? `${ev.done}/${ev.total}` : `${ev.done}`;
    this.stream.write(`${PHASE_LABEL[ev.phase]}: ${counts} ${unit} (${rate.toFixed(0)}/s)\n`);
  };

  /**
   * A one-line status ("searching code, notes…"): redrawn in place on a terminal, not printed at
   * all when stderr is a pipe, where a log of phases would only be noise.
   */
  status(message: string): void {
    if (!this.enabled || !this.tty) return;
    this.stream.write(`\r\x1b[2K${message}…`);
    this.drawn = true;
  }

  /** Erases the bar so that a log line prints cleanly. */
  clear(keepNewline = false): void {
    if (this.tty && this.drawn) {
      this.stream.write(keepNewline ? '\n' : '\r\x1b[2K');
      this.drawn = false;
    }
  }
}

export function formatSeconds(s: number): string {
  if (s < 60) return `${s.toFixed(0)}s`;
  return `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s`;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}
