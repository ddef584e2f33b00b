/**
 * The question analyzer: pattern-based, no model, a fraction of a millisecond. It decides
 * which retrieval paths run and how the context budget is spent, so it is deliberately
 * conservative: a question that matches no specific pattern is `conceptual`, the type that
 * runs every general path.
 *
 * Order matters: history is checked first ("why did X change" also looks conceptual), then
 * references ("where is X used" also looks like a definition question), then definitions,
 * structure and behaviour.
 */
import { analyzeQuery } from '../search/query';
import { isStopword } from '../search/tokenizer';
import { classifyReport } from './report';
import type { AnalyzedQuestion, QuestionType } from './types';

/** Words that carry the question's form, not its subject; they are not search terms. */
const QUESTION_WORDS = new Set(
  'go golang python typescript javascript consist consists they them their before after how what where which who whom whose why when does do did is are was were can could should would will the a an this that these those it its of in on for to from with by about into between explain describe tell me show find work works working happen happens happening there any some get gets used use uses using called call calls defined define definition declared declare declaration located implemented implement please code project repo repository codebase'.split(
    ' ',
  ),
);

const IDENT = String.raw`[A-Za-z_$][\w$]*(?:(?:\.|::|#|->)[A-Za-z_$][\w$]*)*(?:\(\))?`;
const SUBJECT = String.raw`(?:the\s+)?(?:(?:function|method|class|type|struct|interface|variable|constant|symbol|field|trait|enum|module|package)\s+)?` + '`?(' + IDENT + ')`?';

interface Rule {
  type: QuestionType;
  re: RegExp;
  why: string;
  /** Whether capture group 1 names the subject symbol. */
  subject?: boolean;
}

const RULES: Rule[] = [
  // History: why/when something changed, who wrote it, its history or blame.
  { type: 'history', re: /\b(?:why|when|who)\b.{0,80}\b(?:chang|add|remov|introduc|modif|refactor|renam|deprecat|rewr|revert|switch|mov|delet|wr[io]t)\w*/i, why: 'asks why/when/who changed something' },
  { type: 'history', re: /\b(?:history|blame|commit|commits|changelog|git log|regression|since when|last changed)\b/i, why: 'names history, commits or blame' },
  // References: callers and uses.
  { type: 'references', re: new RegExp(String.raw`\b(?:who|what|which\s+\w+)\s+(?:calls|uses|references|imports|implements|extends|instantiates|invokes)\s+` + SUBJECT, 'i'), why: 'asks who calls or uses a symbol', subject: true },
  { type: 'references', re: new RegExp(String.raw`\bwhere\s+(?:is|are|does|do)\s+` + SUBJECT + String.raw`\s+(?:being\s+)?(?:used|called|referenced|imported|invoked|instantiated|read|written|set)\b`, 'i'), why: 'asks where a symbol is used', subject: true },
  { type: 'references', re: new RegExp(String.raw`\b(?:callers|usages|uses|references|call sites|importers)\s+(?:of|to)\s+` + SUBJECT, 'i'), why: 'asks for callers or usages', subject: true },
  { type: 'references', re: /\b(?:find|list|show)\s+(?:all\s+)?(?:callers|usages|references|call sites)\b/i, why: 'asks for callers or usages' },
  // Definitions.
  { type: 'definition', re: new RegExp(String.raw`\bwhere\s+(?:is|are)\s+` + SUBJECT + String.raw`\s+(?:defined|declared|implemented|located|created|constructed)\b`, 'i'), why: 'asks where a symbol is defined', subject: true },
  { type: 'definition', re: new RegExp(String.raw`\b(?:definition|declaration|signature|implementation|source)\s+of\s+` + SUBJECT, 'i'), why: 'asks for the definition of a symbol', subject: true },
  { type: 'definition', re: new RegExp(String.raw`\b(?:go\s+to|jump\s+to|find|show)\s+(?:the\s+)?(?:definition|declaration)\s+(?:of\s+)?` + SUBJECT, 'i'), why: 'asks to go to a definition', subject: true },
  { type: 'definition', re: new RegExp(String.raw`^\s*where\s+(?:is|are)\s+` + SUBJECT + String.raw`\s*\??\s*$`, 'i'), why: 'asks where a symbol is', subject: true },
  { type: 'definition', re: new RegExp(String.raw`^\s*what\s+(?:is|are)\s+` + '`?(' + IDENT + ')`?' + String.raw`\s*\??\s*$`, 'i'), why: 'asks what a single identifier is', subject: true },
  { type: 'definition', re: new RegExp(String.raw`\bwhat\s+(?:does|do)\s+` + SUBJECT + String.raw`\s+return\b`, 'i'), why: 'asks for a signature', subject: true },
  // Structure.
  { type: 'structural', re: /\b(?:structure|architecture|layout|organi[sz](?:ed|ation)|overview|consists? of|made up of|components|layers|entry ?points?|high[- ]level|map of|which (?:files|packages|modules)|what (?:files|packages|modules))\b/i, why: 'asks how the code is organised' },
  {
    type: 'structural',
    re: /\bwhat(?:'s|\s+is|\s+are)\s+(?:inside|in)\s+(?:the\s+)?[\w.-]*\/[\w./-]*|\b(?:contents?|files)\s+of\s+(?:the\s+)?[\w.-]*\/|\bwhat\s+(?:are|is)\s+(?:the\s+)?.{0,60}\b(?:folders?|director(?:y|ies))\s+for\b/i,
    why: 'asks what a folder holds',
  },
  // Behaviour: what should happen, edge cases, errors, tests.
  { type: 'behavioural', re: /\b(?:should|expected|expect|behaviou?r|behaves?|edge cases?|what happens|happen when|when .{1,40} (?:fails?|is (?:empty|nil|null|invalid|missing))|invalid|malformed|tests?|tested|assert|panics?|throws?|raises?|errors? (?:when|if|on))\b/i, why: 'asks how something should behave' },
];

const LANGUAGE_WORDS: Array<[RegExp, string]> = [
  [/\b(?:go|golang)\b(?!\s+to\b)/i, 'go'],
  [/\bpython\b|\bdjango\b/i, 'python'],
  [/\btypescript\b|\bts\b/i, 'typescript'],
  [/\bjavascript\b|\bnode\.?js\b/i, 'javascript'],
  [/\brust\b/i, 'rust'],
  [/\bjava\b/i, 'java'],
  [/\bc\+\+|\bcpp\b/i, 'cpp'],
  [/\bc#|\bcsharp\b/i, 'csharp'],
  [/\bruby\b/i, 'ruby'],
];

const EXTENSION_LANGUAGE: Record<string, string> = {
  go: 'go',
  py: 'python',
  pyi: 'python',
  ts: 'typescript',
  mts: 'typescript',
  cts: 'typescript',
  tsx: 'tsx',
  js: 'javascript',
  jsx: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  rs: 'rust',
  java: 'java',
  rb: 'ruby',
};

/** Classifies a question and extracts its symbols, paths, languages and content terms. */
export function analyzeQuestion(text: string): AnalyzedQuestion {
  const q = analyzeQuery(text);
  const isLong = q.isLong;

  let type: QuestionType = 'conceptual';
  let typeReason = 'no specific pattern: a conceptual question';
  let subject: string | undefined;
  // A report (and every pasted document) is not matched against the question patterns: a
  // traceback's "raise" or a commit's "revert" say nothing about what the user asks.
  const report = classifyReport(text, isLong);
  if (report) {
    type = 'report';
    typeReason = report.why;
  } else {
    for (const rule of RULES) {
      const m = rule.re.exec(text);
      if (!m) continue;
      const cap = rule.subject ? m[1]?.replace(/\(\)$/, '') : undefined;
      // "What is the architecture?" must not make `architecture` a symbol: a lower-case plain
      // word is only a subject in the definition/reference rules when it reads like code.
      if (cap && QUESTION_WORDS.has(cap.toLowerCase())) continue;
      type = rule.type;
      typeReason = rule.why;
      subject = cap;
      break;
    }
  }

  const symbols: string[] = [];
  const addSymbol = (s: string) => {
    const clean = s.replace(/\(\)$/, '');
    if (clean.length >= 2 && !symbols.includes(clean)) symbols.push(clean);
  };
  if (subject) addSymbol(subject);
  for (const m of text.matchAll(/`([^`\s]{2,80})`/g)) if (/^[A-Za-z_$][\w$.:#]*(?:\(\))?$/.test(m[1]!)) addSymbol(m[1]!);
  for (const id of q.identifiers) if (!/^\d+$/.test(id)) addSymbol(id);
  // Call syntax marks code: "when timeout() fires".
  for (const m of text.matchAll(/(?:^|[^\w$.])([A-Za-z_$][\w$]*)\(\)/g)) addSymbol(m[1]!);
  // Capitalised words inside a sentence ("the Server type") are likely type names; the first
  // word of the question is capitalised for grammar, not because it is code. In a report they
  // are as often the reporter's browser, platform or language ("Fix Firefox compatibility").
  if (!isLong && !report) {
    const words = text.split(/\s+/);
    words.forEach((w, i) => {
      // "Django's ORM": the possessive is grammar, the name is Django.
      const bare = w.replace(/^[^\w$]+|[^\w$]+$/g, '').replace(/['’]s$/, '');
      if (i > 0 && /^[A-Z][a-z0-9]+[A-Za-z0-9]*$/.test(bare) && !QUESTION_WORDS.has(bare.toLowerCase()) && bare.length >= 3) addSymbol(bare);
      // An acronym ("ORM", "GraphQL's API") names a thing as surely as a capitalised word.
      else if (/^[A-Z]{2,5}[0-9]?$/.test(bare) && !QUESTION_WORDS.has(bare.toLowerCase())) addSymbol(bare);
    });
  }

  const languages: string[] = [];
  for (const [re, lang] of LANGUAGE_WORDS) if (re.test(text) && !languages.includes(lang)) languages.push(lang);
  for (const p of q.paths) {
    const ext = /\.([A-Za-z0-9]+)$/.exec(p.path)?.[1]?.toLowerCase();
    const lang = ext ? EXTENSION_LANGUAGE[ext] : undefined;
    if (lang && !languages.includes(lang)) languages.push(lang);
  }

  // A question word written as code (`get()`, `use`) is the subject, not the question's form.
  const asCode = new Set<string>();
  for (const m of text.matchAll(/`([A-Za-z_$][\w$]*)(?:\(\))?`|\b([A-Za-z_$][\w$]*)\(\)/g)) asCode.add((m[1] ?? m[2]!).toLowerCase());
  const terms: string[] = [];
  for (const w of q.words) {
    const lower = w.toLowerCase();
    if (lower.length < 2 || /^\d+$/.test(lower) || (QUESTION_WORDS.has(lower) && !asCode.has(lower)) || isStopword(lower)) continue;
    if (!terms.some((t) => t.toLowerCase() === lower)) terms.push(w);
  }

  const dirs: string[] = [];
  const addDir = (d: string) => {
    const clean = d.replace(/^\.?\/+|\/+$/g, '');
    if (clean && !dirs.includes(clean)) dirs.push(clean);
  };
  // `crypto/tls`, `src/core/memory/`: slash paths without a file extension.
  for (const m of text.matchAll(/(?:^|[\s`'"(])((?:[A-Za-z0-9_.@-]+\/)+[A-Za-z0-9_@-]+\/?)(?=$|[\s`'",.;:?!)])/g)) {
    const d = m[1]!;
    if (!/\.[A-Za-z0-9]{1,5}$/.test(d) && !/^https?:/.test(d)) addDir(d);
  }
  // "the bufio package", "package bufio", "the memory module".
  // A keyword that ends "the log package" does not also begin "package rotate" in "the log
  // package rotate log files".
  const named = new Set<number>();
  for (const m of text.matchAll(/\b(?:the\s+)?`?([A-Za-z_][\w./-]*)`?\s+(package|module|folder|directory|crate)\b/gi)) {
    if (QUESTION_WORDS.has(m[1]!.toLowerCase()) || isStopword(m[1]!.toLowerCase())) continue;
    addDir(m[1]!);
    named.add(m.index + m[0].length - m[2]!.length);
  }
  for (const m of text.matchAll(/\b(?:package|module|folder|directory|crate)\s+`?([A-Za-z_][\w./-]*)`?/gi)) if (!named.has(m.index) && !QUESTION_WORDS.has(m[1]!.toLowerCase())) addDir(m[1]!);

  return { text, type, typeReason, symbols, paths: q.paths, ...(dirs.length ? { dirs } : {}), languages, terms, isLong, ...(report ? { report } : {}) };
}
