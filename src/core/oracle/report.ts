/**
 * Is the text a report rather than a question? Issue reports, feature requests, commit-style
 * change descriptions, tracebacks and error output are pasted into the oracle as often as
 * questions are, and they are read differently:
 *
 * - they are about this project by nature (a user pastes a report about the code in front of
 *   them), so words the index never mentions are the reporter's own (their code's names, their
 *   environment, people, tools), not a sign the subject is missing (see relevance.ts);
 * - the file to change is what they need, so the `locate` path runs for them.
 *
 * Pattern-based and conservative: a text that asks (a question word first, or a question mark
 * at the end of a short text) is a question, whatever words it holds.
 */
import { parseReport } from '../locate/report';

export type ReportKind = 'traceback' | 'error' | 'issue' | 'feature' | 'change' | 'statement' | 'pasted';

export interface ReportClass {
  kind: ReportKind;
  /** Why, in words, for `--explain`. */
  why: string;
}

/** Words a change description starts with: the imperative, the third person and the past. */
const CHANGE_VERBS = new Set(
  (
    // Verbs that change code, not verbs that say what code does ("parse", "merge", "return"
    // describe behaviour: "parse a Range header into byte ranges" is a search, not a commit).
    'fix fixe fixes fixed fixing add adds added adding remove removes removed removing delete deletes deleted update updates ' +
    'updated updating revert reverts reverted use uses using improve improves improved refactor refactors refactored rename ' +
    'renames renamed support supports allow allows allowed ensure ensures ensured avoid avoids avoided prevent prevents prevented ' +
    'drop drops dropped bump bumps bumped move moves moved change changes changed replace replaces replaced implement implements ' +
    'implemented correct corrects corrected clean cleans cleaned cleanup simplify simplifies simplified switch switches switched ' +
    'omit omits omitted deprecate deprecates deprecated expose exposes exposed enable enables enabled disable disables disabled ' +
    'restore restores restored respect respects preserve preserves preserved document documents documented optimize optimise ' +
    'optimized optimised speed reduce reduces reduced introduce introduces introduced upgrade upgraded downgrade tweak tweaks ' +
    'tweaked give gives import imports resolve resolves resolved patch patches patched migrate migrated reorganize reorganized ' +
    'unify unified rewrite rewrote rewritten port ported relax relaxes relaxed tighten tightens tightened attempt attempts ' +
    'release released prepare prepared consider considers ignore ignores ignored install installs reset resets prefer prefers ' +
    'bugfix hotfix typo typos polish lint linting tidy don\'t dont do not never always properly correctly'
  ).split(' '),
);
/**
 * Words that say a text is a report and of what kind, not what it is about: the change verbs,
 * and the words for defects and their size. They are not subject words of a report.
 */
const FORM_WORDS = new Set(['bug', 'bugs', 'issue', 'issues', 'typo', 'typos', 'failing', 'failure', 'failures', 'broken', 'wrong', 'incorrect', 'minor', 'small', 'lint', 'linting', 'nit', 'nits', 'misc', 'various', 'some', 'stuff', 'cleanup', 'problem', 'problems']);

/** Whether `word` says what kind of report a text is rather than what it is about ("fix", "typo"). */
export function isReportFormWord(word: string): boolean {
  const w = word.toLowerCase();
  const base = w.replace(/(?:ing|ed|s)$/, '');
  return [w, base, `${base}e`].some((x) => CHANGE_VERBS.has(x) || FORM_WORDS.has(x));
}

/** `fix:`, `feat(types):`, `chore!:`: a conventional-commit prefix. */
const CONVENTIONAL = /^\s*(?:\[[^\]]{1,40}\]\s*)?(?:fix|feat|feature|chore|docs?|refactor|perf|test|tests|build|ci|style|revert|types?|deps)(?:\([^)]{0,40}\))?!?:\s/i;
/** `[2609] fix …`, `#123: …`, `GH-12 …`, `Issue 1144: …`. */
const TICKET = /^\s*(?:\[[^\]]{1,40}\]|#\d+:?|[A-Z][A-Z0-9]{1,9}-\d+:?|(?:issue|bug|pr|gh)\s*#?\d+\s*:)\s*/i;
/** A fix named anywhere in the first line: "sphinx extension fix", "Bug fix: …". */
const FIX_WORD = /\b(?:fix|fixes|fixed|bugfix|hotfix|bug fix)\b/i;
/** Headings and phrases of issue templates and bug reports. */
const ISSUE_MARKERS =
  /(?:^|\n)\s*(?:#{1,4}\s*)?(?:steps to reproduce|to reproduce|reproduction|minimal (?:reproducible )?example|expected (?:behaviou?r|result|output)|actual (?:behaviou?r|result|output)|current behaviou?r|environment|versions?\s*:|python version|os\s*:|platform\s*:|describe the bug|bug report|what happened)\b|\b(?:doesn'?t work|does not work|not working|no longer works|stopped working|is broken|are broken|breaks when|unexpected(?:ly)?|regression|i(?:'m| am) (?:getting|seeing)|i (?:get|got|see|tried|noticed|expected)|we (?:get|got|see|noticed))\b/i;
const FEATURE_MARKERS = /\b(?:feature request|it would be (?:nice|great|useful|helpful)|would be (?:nice|great) (?:to|if)|please (?:add|support|consider|allow)|add (?:an? )?(?:option|support|way) (?:to|for)|support for\b|proposal:|is there (?:a|any) way to)\b/i;
const ERROR_LINE = /(?:^|\n)\s*(?:[A-Z]\w*(?:Error|Exception|Warning)\b[:(]|error(?:\[\w+\])?:|fatal:|panic:|thread '.*' panicked)|\bat [\w$.<>]+ \([^)]*:\d+:\d+\)/;
/** A question: a question word first, or an auxiliary verb first with a question mark. */
const QUESTION_START = /^\s*(?:how|what|where|why|when|who|whom|whose|which|explain|describe|tell me|show me|list|find)\b/i;
const AUX_START = /^\s*(?:is|are|was|were|does|do|did|can|could|should|would|will|has|have)\b/i;

/** The kind of report `text` is, or undefined for a question. `long`: the text is a pasted document. */
export function classifyReport(text: string, long: boolean): ReportClass | undefined {
  const trimmed = text.trim();
  const firstLine = trimmed.split('\n', 1)[0] ?? '';
  const asks = QUESTION_START.test(firstLine) || (AUX_START.test(firstLine) && /\?\s*$/.test(firstLine));
  if (!long && asks) return undefined;
  if (parseReport(trimmed).frames.length > 0) return { kind: 'traceback', why: 'a traceback: stack frames name files and functions' };
  if (ERROR_LINE.test(trimmed)) return { kind: 'error', why: 'error output: an exception or error line' };
  if (CONVENTIONAL.test(firstLine)) return { kind: 'change', why: `a commit message: "${firstLine.slice(0, firstLine.indexOf(':') + 1)}" prefix` };
  const rest = firstLine.replace(TICKET, '').replace(/^\s*revert\s+"/i, '');
  const first = /^[\s"'`*-]*([A-Za-z']+)(?:\s+(not)\b)?/.exec(rest);
  const verb = first?.[1]?.toLowerCase();
  if (verb && CHANGE_VERBS.has(verb) && !(verb === 'do' && !first?.[2])) return { kind: 'change', why: `a change description: it starts with "${first![1]}"` };
  if (FIX_WORD.test(firstLine) && !asks) return { kind: 'change', why: 'a change description: it names a fix' };
  if (FEATURE_MARKERS.test(trimmed)) return { kind: 'feature', why: 'a feature request' };
  if (ISSUE_MARKERS.test(trimmed)) return { kind: 'issue', why: 'an issue report: it describes what happens and what was expected' };
  if (long) return { kind: 'pasted', why: 'a pasted text: ranked by the files and identifiers it mentions' };
  // A sentence that does not ask ("Safer error response handling.", "Invoke callback for
  // sendfile when client aborts") states something about the code: a change, a report's title.
  if (/[a-z]{2,}\s+\S+\s+\S+/i.test(firstLine) && !trimmed.includes('?')) return { kind: 'statement', why: 'a statement, not a question: read as a description of a change or a problem' };
  return undefined;
}
