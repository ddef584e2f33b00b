/**
 * A readers-writer gate for one index state: requests run as readers, side by side; a step
 * that changes the state under them (loading another process's commit, indexing queued edits)
 * runs alone, after the readers in flight, and readers that arrive meanwhile wait for it.
 */
export class StateGate {
  private readers = 0;
  private writer: Promise<void> | undefined;
  private drained: Array<() => void> = [];

  /** No request is running and no exclusive step is running or waiting. */
  get idle(): boolean {
    return this.readers === 0 && this.writer === undefined;
  }

  async read<T>(fn: () => Promise<T>): Promise<T> {
    while (this.writer) await this.writer;
    this.readers++;
    try {
      return await fn();
    } finally {
      this.readers--;
      if (this.readers === 0) for (const wake of this.drained.splice(0)) wake();
    }
  }

  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    while (this.writer) await this.writer;
    let release!: () => void;
    this.writer = new Promise<void>((r) => (release = r));
    try {
      while (this.readers > 0) await new Promise<void>((r) => this.drained.push(r));
      return await fn();
    } finally {
      this.writer = undefined;
      release();
    }
  }
}
