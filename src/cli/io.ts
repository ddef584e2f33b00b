/** Writing a command's results (the I/O contract itself is `src/protocol/cli.ts`). */
import type { CliOutput } from '../protocol/cli';

/** `text` on stdout, with a final newline. */
export function writeLine(o: CliOutput, text: string): void {
  o.write(text.endsWith('\n') ? text : `${text}\n`);
}
