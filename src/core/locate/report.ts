/**
 * What a bug report carries besides its words: traceback frames, the error message, quoted code
 * and messages, identifiers, test names, and whether it is about tests or docs at all. Pattern
 * matching only; no model. The locate mode (locate.ts) turns each kind into evidence.
 */
import { analyzeQuery, type AnalyzedQuery } from '../search/query';

export interface ReportFrame {
  path: string;
  line?: number;
  /** The function the frame names, when the trace format gives it. */
  func?: string;
  /** 1-based position in the report. */
  index: number;
  /** 0 for the frame nearest the error (Python's last, everyone else's first), then 1, 2, … */
  distance: number;
}

export interface ParsedReport {
  analysis: AnalyzedQuery;
  frames: ReportFrame[];
  /** Error messages and quoted strings that may appear verbatim in the code (a `raise`, a `panic`). */
  messages: string[];
  /** Identifiers written as code: in backticks or code blocks, dotted, camelCase or snake_case. */
  codeIdentifiers: string[];
  /** Test functions or classes the report names (`test_parse_empty`, `TestParseDuration`). */
  testNames: string[];
  /** The report is about tests (then tests are not ranked down). */
  aboutTests: boolean;
  /** The report is about documentation. */
  aboutDocs: boolean;
}

const PY_FRAME = /File "([^"]+)", line (\d+)(?:, in ([A-Za-z_][\w.<>]*))?/g;
/** `at fn (path:line:col)` (Node), `at pkg.Class.fn(File.java:12)` (Java). */
const AT_FRAME = /\bat\s+(?:(?:async\s+)?([\w$.<>[\]]+)\s+)?\(?((?:[A-Za-z]:)?[^\s():]+\.[A-Za-z]{1,5}):(\d+)(?::\d+)?\)?/g;
const JAVA_FRAME = /\bat\s+([\w$.]+)\.([\w$<>]+)\(([\w$]+\.(?:java|kt|scala)):(\d+)\)/g;
/** Go panics: a function line then `\t/path/file.go:123 +0x1f`. */
const GO_FRAME = /^([\w./*()-]+\.[\w]+)\([^)]*\)\s*\n\s+(\S+\.go):(\d+)/gm;
/** `SomeError: message` / `error: message`, the last line of most traces. */
const ERROR_LINE = /(?:^|\s)(?:[\w.]*(?:Error|Exception|Warning|Panic|panic|error|Fault))\s*:\s*(.{6,200})$/gm;
const BACKTICK = /`([^`\n]{2,200})`/g;
const FENCE = /```[^\n]*\n([\s\S]*?)```/g;
const DOUBLE_QUOTED = /"([^"\n]{8,200})"/g;
const SINGLE_QUOTED = /(?:^|[\s(:=])'([^'\n]{8,200})'(?=[\s),.;:]|$)/gm;
const TEST_NAME = /\b(test_\w{3,}|Test[A-Z]\w{2,}|\w{3,}Test(?:s|Case)?\b|\w+_spec\b)/g;
const CODE_IDENT = /[A-Za-z_$][\w$]*(?:(?:\.|::|->|#)[A-Za-z_$][\w$]*)*/g;

const ABOUT_TESTS = /\b(?:tests?|testing|unit ?tests?|test suite|flaky|pytest|jest|vitest|mocha|spec)\b/i;
const ABOUT_DOCS = /\b(?:docs?|documentation|readme|docstrings?|changelog|typos?|examples?)\b/i;

function looksLikeCode(word: string): boolean {
  return /[a-z][A-Z]|[A-Z]{2,}[a-z]|_|\.|::|->|#/.test(word) || /^[A-Z][a-z0-9]+[A-Z]/.test(word);
}

function pushUnique(list: string[], seen: Set<string>, value: string): void {
  if (seen.has(value)) return;
  seen.add(value);
  list.push(value);
}

export function parseReport(text: string): ParsedReport {
  const frames: ReportFrame[] = [];
  const frameKeys = new Set<string>();
  const addFrame = (path: string, line: string | undefined, func: string | undefined, at: number, nearestLast: boolean): void => {
    const clean = path.replace(/^file:\/\//, '').replace(/^\.?\/+/, '');
    const key = `${clean}:${line ?? ''}`;
    if (frameKeys.has(key)) return;
    frameKeys.add(key);
    frames.push({ path: clean, ...(line ? { line: Number(line) } : {}), ...(func ? { func } : {}), index: at, distance: nearestLast ? -1 : 0 });
  };
  // Python prints the nearest frame last; Node, Java and Go print it first.
  const py = [...text.matchAll(PY_FRAME)];
  for (const m of py) addFrame(m[1]!, m[2], m[3], m.index, true);
  for (const m of text.matchAll(JAVA_FRAME)) addFrame(m[3]!, m[4], `${m[1]!.split('.').pop()!}.${m[2]!}`, m.index, false);
  for (const m of text.matchAll(GO_FRAME)) addFrame(m[2]!, m[3], m[1]!.split('.').pop()?.replace(/[()*]/g, ''), m.index, false);
  for (const m of text.matchAll(AT_FRAME)) {
    if (/\.(?:java|kt|scala)$/.test(m[2]!)) continue;
    addFrame(m[2]!, m[3], m[1], m.index, false);
  }
  frames.sort((a, b) => a.index - b.index);
  const pyFrames = frames.filter((f) => f.distance < 0);
  const others = frames.filter((f) => f.distance >= 0);
  pyFrames.forEach((f, i) => (f.distance = pyFrames.length - 1 - i));
  others.forEach((f, i) => (f.distance = i));
  frames.forEach((f, i) => (f.index = i + 1));

  const messages: string[] = [];
  const seenMsg = new Set<string>();
  const addMessage = (m: string): void => {
    const t = m.trim().replace(/\s+/g, ' ');
    // A message is words: at least two of them, not a path, not one identifier.
    if (t.split(' ').length < 2 || /^[\w./-]+\.[a-z]{1,4}$/.test(t)) return;
    pushUnique(messages, seenMsg, t);
  };
  for (const m of text.matchAll(ERROR_LINE)) addMessage(m[1]!.replace(/^['"]|['"]$/g, ''));
  for (const m of text.matchAll(DOUBLE_QUOTED)) addMessage(m[1]!);
  for (const m of text.matchAll(SINGLE_QUOTED)) addMessage(m[1]!);

  const codeIdentifiers: string[] = [];
  const seenIdent = new Set<string>();
  const codeSpans = [...[...text.matchAll(BACKTICK)].map((m) => m[1]!), ...[...text.matchAll(FENCE)].map((m) => m[1]!)];
  for (const span of codeSpans) {
    for (const m of span.matchAll(CODE_IDENT)) {
      // In a code span a plain word is code too (`render`), but not a keyword-sized one.
      if (m[0].length >= 3) pushUnique(codeIdentifiers, seenIdent, m[0]);
    }
    if (/\s/.test(span.trim()) && !/[(){};=]/.test(span)) addMessage(span);
  }
  const analysis = analyzeQuery(text);
  for (const id of analysis.identifiers) if (looksLikeCode(id) && !/^\d/.test(id)) pushUnique(codeIdentifiers, seenIdent, id);

  const testNames: string[] = [];
  const seenTests = new Set<string>();
  for (const m of text.matchAll(TEST_NAME)) pushUnique(testNames, seenTests, m[1]!);

  return {
    analysis,
    frames,
    messages: messages.slice(0, 12),
    codeIdentifiers: codeIdentifiers.slice(0, 64),
    testNames: testNames.slice(0, 16),
    aboutTests: ABOUT_TESTS.test(text),
    aboutDocs: ABOUT_DOCS.test(text),
  };
}
