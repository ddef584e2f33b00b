/**
 * A language server's process as the client sees it: the framing check of its stdout
 * ({@link FramingWatchdog}) and the process group that is reaped when it stops or this process
 * exits ({@link ProcessGroup}).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { delay } from './deadline';

/**
 * Checks that a server's stdout is LSP base-protocol framing (`Header: value\r\n` lines, a
 * blank line, then Content-Length bytes) without parsing bodies. The JSON-RPC reader alone
 * would buffer unframed output forever, waiting for a header that never ends; this turns
 * a server that prints to stdout into an immediate, explained failure.
 */
export class FramingWatchdog {
  private line = '';
  private headers: string[] = [];
  private bodyLeft = 0;
  private sawCR = false;

  /** Feeds one chunk; returns a description of the first framing violation, if any. */
  feed(chunk: Buffer): string | undefined {
    let i = 0;
    while (i < chunk.length) {
      if (this.bodyLeft > 0) {
        const n = Math.min(this.bodyLeft, chunk.length - i);
        this.bodyLeft -= n;
        i += n;
        continue;
      }
      const lineSoFar = this.line;
      const bad = this.headerByte(chunk[i]!);
      if (bad) return `${bad}: ${JSON.stringify((lineSoFar + chunk.subarray(i, i + 60).toString('latin1')).slice(0, 80))}`;
      i++;
    }
    return undefined;
  }

  private headerByte(b: number): string | undefined {
    if (this.sawCR) {
      this.sawCR = false;
      if (b !== 0x0a) return 'CR not followed by LF in a header';
      if (this.line === '') return this.endHeaders();
      this.headers.push(this.line);
      this.line = '';
      return undefined;
    }
    if (b === 0x0d) {
      this.sawCR = true;
      return undefined;
    }
    const ch = String.fromCharCode(b);
    const inName = !this.line.includes(':');
    // A header name is an RFC 7230 token; its value is printable text.
    if (inName ? !/[!#$%&'*+\-.^_`|~0-9A-Za-z:]/.test(ch) : b < 0x20 && b !== 0x09) return 'not an LSP header';
    if (b > 0x7e) return 'not an LSP header';
    this.line += ch;
    if (this.line.length > 1024 || this.headers.length > 32) return 'header too long';
    return undefined;
  }

  private endHeaders(): string | undefined {
    const lengthHeader = this.headers.find((h) => /^content-length:/i.test(h));
    this.headers = [];
    const length = lengthHeader ? Number(lengthHeader.slice(lengthHeader.indexOf(':') + 1).trim()) : NaN;
    if (!Number.isInteger(length) || length < 0) return 'header without a valid Content-Length';
    this.bodyLeft = length;
    return undefined;
  }
}

/**
 * Process groups of the servers started by this process, killed when it exits so that no
 * server outlives it. A group is forgotten once nothing in it is left.
 */
export class ProcessGroup {
  private static readonly live = new Set<ProcessGroup>();
  private static hooked = false;

  private constructor(private readonly pid: number) {}

  static track(pid: number): ProcessGroup {
    const g = new ProcessGroup(pid);
    ProcessGroup.live.add(g);
    if (!ProcessGroup.hooked) {
      ProcessGroup.hooked = true;
      // 'exit' handlers must be synchronous; SIGKILL is the only signal that needs no waiting.
      process.on('exit', () => {
        for (const group of ProcessGroup.live) group.signal('SIGKILL');
      });
    }
    return g;
  }

  /** Signals the whole group (the leader and what it spawned); false when none is left. */
  signal(sig: NodeJS.Signals | 0): boolean {
    try {
      process.kill(process.platform === 'win32' ? this.pid : -this.pid, sig);
      return true;
    } catch {
      return false;
    }
  }

  /** Terminates whatever is left of the group, waiting up to `graceMs` before SIGKILL. */
  async reap(graceMs: number): Promise<void> {
    if (this.alive()) {
      this.signal('SIGTERM');
      const until = Date.now() + graceMs;
      while (this.alive() && Date.now() < until) await delay(25);
      if (this.alive()) this.signal('SIGKILL');
    }
    ProcessGroup.live.delete(this);
  }

  /**
   * Whether a live member is left. On Linux zombies do not count: an orphan's zombie lingers
   * until init reaps it, and some container inits never do.
   */
  private alive(): boolean {
    if (process.platform !== 'linux') return this.signal(0);
    let pids: string[];
    try {
      pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n));
    } catch {
      return this.signal(0);
    }
    for (const pid of pids) {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
        // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
        const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        if (Number(pgrp) === this.pid && state !== 'Z' && state !== 'X') return true;
      } catch {
        // The process ended while we looked.
      }
    }
    return false;
  }
}
