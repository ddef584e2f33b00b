/**
 * What the index reads off the code around a use to order several candidate definitions
 * without types: discriminated unions (`switch (issue.code)`, `x.kind === "a"`) and overloads
 * (arity and a few plain parameter facts).
 */
import type { Node } from 'web-tree-sitter';
import type { SymbolRow } from '../store/store';
import { nameCol, type Loc, type SourceFiles } from './sources';
import { arityAt, type CallShape } from './syntax';

/**
 * Discriminated unions, read off the code around a member access: in
 * `switch (issue.code) { case "too_big": … issue.maximum }` and after
 * `if (x.format === "regex")`, candidates whose owner declares the discriminant with that
 * literal (`code: "too_big"`) come first. For the discriminant itself
 * (`switch (issue.code)`), the declarations typed by one of the case labels come first.
 */
export async function narrowByDiscriminant(files: SourceFiles, file: string, line: number, col: number, candidates: SymbolRow[]): Promise<SymbolRow[]> {
  const facts = await files.fileFacts(file);
  if (!facts || (facts.language !== 'typescript' && facts.language !== 'tsx')) return candidates;
  const { root } = await files.syntax(file, facts);
  const access = root.descendantForPosition({ row: line - 1, column: col - 1 })?.parent;
  const receiver = access?.type === 'member_expression' ? access.childForFieldName('object')?.text : undefined;
  if (!access || !receiver) return candidates;
  // The use is the switch subject: `switch (issue.code)`.
  const subject = access.parent?.type === 'parenthesized_expression' ? access.parent.parent : undefined;
  const labels = subject?.type === 'switch_statement' ? caseLabels(subject) : undefined;
  const wanted = labels ? [] : discriminantsAround(access, receiver);
  if (!labels && wanted.length === 0) return candidates;
  const good = new Set<SymbolRow>();
  for (const c of candidates) {
    if (c.kind !== 'field') continue;
    const cf = await files.fileFacts(c.path);
    if (!cf) continue;
    const croot = (await files.syntax(c.path, cf)).root;
    const field = croot.descendantForPosition({ row: c.startLine - 1, column: nameCol(cf, c.startLine, c.name) - 1 })?.parent;
    if (field?.type !== 'property_signature') continue;
    if (labels) {
      const type = literalTypeOf(field);
      if (type !== undefined && labels.includes(type)) good.add(c);
    } else if (field.parent && wanted.some((w) => field.parent!.namedChildren.some((f) => f?.type === 'property_signature' && f.childForFieldName('name')?.text === w.field && literalTypeOf(f) === w.literal))) {
      good.add(c);
    }
  }
  if (good.size === 0) return candidates;
  return [...candidates.filter((c) => good.has(c)), ...candidates.filter((c) => !good.has(c))];
}

/** The leading candidates that are overloads of one another (same file and owner), by arity. */
export async function orderCandidateOverloads(files: SourceFiles, candidates: SymbolRow[], call: CallShape): Promise<SymbolRow[]> {
  const top = candidates[0]!;
  const group = candidates.filter((c) => c.path === top.path && c.container === top.container);
  if (group.length < 2) return candidates;
  const facts = await files.fileFacts(top.path);
  if (!facts) return candidates;
  const byLine = new Map(group.map((c) => [c.startLine, c]));
  const ordered = await orderOverloads(files, 
    group.map((c) => ({ path: c.path, line: c.startLine, col: nameCol(facts, c.startLine, c.name) })),
    call,
  );
  const rest = candidates.filter((c) => !group.includes(c));
  return [...ordered.map((l) => byLine.get(l.line)!), ...rest];
}

/**
 * Overloads (several declarations of one name in one file): the ones whose arity accepts
 * the call's arguments first, and among those, the ones taking a function where the call
 * passes one. Language servers pick by types; arity settles most real cases, and two
 * plain type facts settle more: a parameter typed as a type guard (`(v) => v is S`) does
 * not take a function known to return a plain boolean, and a parameter typed `undefined`
 * takes nothing but `undefined` (`switchMap(project, resultSelector: undefined)`).
 */
export async function orderOverloads(files: SourceFiles, locs: Loc[], call: CallShape): Promise<Loc[]> {
  const scored: Array<{ loc: Loc; score: number; i: number }> = [];
  for (const [i, loc] of locs.entries()) {
    const facts = await files.fileFacts(loc.path);
    const arity = facts ? arityAt((await files.syntax(loc.path, facts)).root, loc.line, loc.col) : undefined;
    let score = 0;
    if (arity) {
      if (call.args < arity.min || call.args > arity.max) score += 10;
      call.fnArgs.forEach((isFn, k) => {
        if (isFn && arity.fnParams[k] === false) score += 1;
        if (call.predArgs[k] === false && arity.predParams[k] === true) score += 1;
        if (!call.undefArgs[k] && arity.undefParams[k] === true) score += 1;
      });
    }
    scored.push({ loc, score, i });
  }
  return scored.sort((a, b) => a.score - b.score || a.i - b.i).map((x) => x.loc);
}
/** The value of a string literal node, without its quotes. */
function stringValue(n: Node | null | undefined): string | undefined {
  return n?.type === 'string' ? n.text.slice(1, -1) : undefined;
}

/** The string labels of a switch statement's cases. */
function caseLabels(sw: Node): string[] {
  return (sw.childForFieldName('body')?.namedChildren ?? []).flatMap((c) => {
    const v = c?.type === 'switch_case' ? stringValue(c.childForFieldName('value')) : undefined;
    return v === undefined ? [] : [v];
  });
}

/**
 * The discriminants the code around a member access fixes for its receiver: an enclosing
 * `case "a":` of `switch (recv.kind)`, and `recv.kind === "a"` in the condition of an enclosing
 * `if` or `?:`, up to the enclosing function.
 */
function discriminantsAround(access: Node, receiver: string): Array<{ field: string; literal: string }> {
  const out: Array<{ field: string; literal: string }> = [];
  const onReceiver = (n: Node | null | undefined): string | undefined =>
    n?.type === 'member_expression' && n.childForFieldName('object')?.text === receiver ? n.childForFieldName('property')?.text : undefined;
  const comparisons = (n: Node): void => {
    if (n.type === 'binary_expression' && /^={2,3}$/.test(n.childForFieldName('operator')?.text ?? '')) {
      const [l, r] = [n.childForFieldName('left'), n.childForFieldName('right')];
      const field = onReceiver(l) ?? onReceiver(r);
      const literal = stringValue(r) ?? stringValue(l);
      if (field && literal !== undefined) out.push({ field, literal });
    }
    for (const c of n.namedChildren) if (c) comparisons(c);
  };
  for (let cur = access.parent; cur; cur = cur.parent) {
    if (cur.type === 'switch_case') {
      const literal = stringValue(cur.childForFieldName('value'));
      const field = onReceiver(cur.parent?.parent?.childForFieldName('value')?.namedChildren[0]);
      if (field && literal !== undefined) out.push({ field, literal });
    } else if (cur.type === 'if_statement' || cur.type === 'ternary_expression') {
      const condition = cur.childForFieldName('condition');
      if (condition) comparisons(condition);
    }
    if (cur.type === 'function_declaration' || cur.type === 'arrow_function' || cur.type === 'method_definition' || cur.type === 'function_expression') break;
  }
  return out;
}

/** The string literal type of a property signature (`code: "too_big"`), without quotes. */
function literalTypeOf(field: Node): string | undefined {
  const t = field.childForFieldName('type')?.namedChildren[0];
  return t?.type === 'literal_type' ? stringValue(t.namedChildren[0]) : undefined;
}
