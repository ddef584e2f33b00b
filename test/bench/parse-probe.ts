/**
 * Parse throughput probe: parses a corpus in this thread (one core) and reports files/s,
 * chunks, symbols and references, plus a few quality checks on the Go standard library.
 *
 * Node 20 cannot run TypeScript directly and the project has no tsx, so bundle it first:
 *   npx esbuild test/bench/parse-probe.ts --bundle --platform=node --format=cjs \
 *     --outfile=/tmp/parse-probe.js --log-level=warning && node /tmp/parse-probe.js [root] [ext...]
 * The root defaults to /usr/share/go-1.19/src and the extensions to `.go` (the files of
 * `find $root -name '*.go'` minus testdata directories).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { languageForPath } from '../../src/core/parse/languages';
import { createCodeParser } from '../../src/core/parse/parser';
import type { LanguageId, ParsedFile } from '../../src/core/types';

function walk(dir: string, exts: string[], out: string[]): void {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'testdata') walk(p, exts, out);
    } else if (e.isFile() && languageForPath(p) && exts.includes(path.extname(p))) out.push(p);
  }
}

async function main(): Promise<void> {
  const root = process.argv[2] ?? '/usr/share/go-1.19/src';
  const exts = process.argv.length > 3 ? process.argv.slice(3) : ['.go'];
  const files: string[] = [];
  walk(root, exts, files);
  files.sort();
  const sources = files.map((f) => fs.readFileSync(f, 'utf8'));
  const bytes = sources.reduce((n, s) => n + s.length, 0);
  const parser = await createCodeParser({ queriesDir: path.resolve('src/core/parse/queries') });

  const results = new Map<string, ParsedFile>();
  let chunks = 0;
  let symbols = 0;
  let refs = 0;
  let maxChunkChars = 0;
  let violations = 0;
  const t0 = performance.now();
  files.forEach((f, i) => {
    const r = parser.parse(f, languageForPath(f) as LanguageId, sources[i] as string);
    chunks += r.chunks.length;
    symbols += r.symbols.length;
    refs += r.refs.length;
    let prevEnd = 0;
    for (const c of r.chunks) {
      maxChunkChars = Math.max(maxChunkChars, c.text.length);
      // Chunks must be ordered and disjoint, and only single lines may exceed the limits.
      if (c.startLine <= prevEnd || c.endLine < c.startLine) violations++;
      if (c.endLine > c.startLine && (c.text.length > 1500 || c.endLine - c.startLine >= 80)) violations++;
      prevEnd = c.endLine;
    }
    if (f.startsWith(root)) results.set(path.relative(root, f), r);
  });
  const secs = (performance.now() - t0) / 1000;
  console.log(
    `${files.length} files, ${(bytes / 1e6).toFixed(1)} M chars in ${secs.toFixed(2)} s: ` +
      `${(files.length / secs).toFixed(0)} files/s, ${(bytes / 1e6 / secs).toFixed(1)} M chars/s`,
  );
  console.log(`chunks ${chunks}, symbols ${symbols}, refs ${refs}, largest chunk ${maxChunkChars} chars, ${violations} chunk violations`);

  const checks: [string, string, string][] = [
    ['time/format.go', 'ParseDuration', 'function'],
    ['net/http/server.go', 'Handler', 'interface'],
    ['net/http/server.go', 'HandlerFunc.ServeHTTP', 'method'],
    ['compress/gzip/gzip.go', 'Writer.Close', 'method'],
    ['encoding/json/stream.go', 'Decoder.Token', 'method'],
  ];
  for (const [file, qname, kind] of checks) {
    const r = results.get(file);
    if (!r) continue;
    const hit = r.symbols.find((s) => s.qualifiedName === qname && s.kind === kind);
    console.log(`${hit ? 'ok  ' : 'MISS'} ${file}: ${kind} ${qname}${hit ? ` (lines ${hit.startLine}-${hit.endLine})` : ''}`);
  }
  parser.dispose();
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
