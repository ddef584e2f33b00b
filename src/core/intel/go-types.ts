/**
 * Go types without a type checker: the type of an expression as far as declarations state it,
 * for member accesses whose receiver is not a declared name (`f().x`, `a.b.c`, `xs[i].m()`,
 * `for _, v := range vs`, `v := x.(*T)`, `a, err := f()`), and the members of a type: its
 * methods (from the index), its struct fields and interface methods (from its declaration's
 * syntax), then those promoted through embedded fields, shallowest first, as the language
 * selects them.
 *
 * A type is a type expression in some file (`TypeRef`): names in it are resolved in that file
 * (its scopes, its package, its imports). Refs hold offsets, not tree nodes, because a long
 * search may free a tree between two steps; each step takes the file's tree again.
 *
 * What is not followed: generic type parameters, builtins other than `new`, `make` and
 * `append`, function values, untyped constants. Those give no type, and the caller falls back
 * to names.
 */
import type { Node } from 'web-tree-sitter';
import type { IndexStore } from '../store/store';
import { goFileMatches } from './go-build';
import { nameCol, type FileFacts, type Loc, type SourceTree } from './sources';
import { identifierAt } from './syntax';

/** A type expression in a file, by its node's offsets. */
export interface TypeRef {
  path: string;
  start: number;
  end: number;
}

/** A member a selector can reach, with the type it gives (a field's type; a method's results). */
export interface GoMember {
  loc: Loc;
  kind: 'field' | 'method';
  /** The field's declared type. */
  type?: TypeRef;
}

export interface GoTypesDeps {
  store: IndexStore;
  fileFacts(rel: string): Promise<FileFacts | undefined>;
  syntax(rel: string, facts: FileFacts): Promise<SourceTree>;
  /** The files of the package a name in `file` imports (`fmt` in `fmt.Sprintf`), when it is one. */
  packageFiles(file: string, facts: FileFacts, local: string): Promise<string[] | undefined>;
  /** A package-level name that `file` exports (its package), following sibling files. */
  exportsOf(file: string, name: string, depth: number): Promise<Loc[]>;
  /** A name no local scope binds, as `file` sees it: its own, its package's, dot imports. */
  freeName(file: string, facts: FileFacts, name: string, depth: number): Promise<Loc[]>;
}

/** How many steps (declarations, selectors, embeddings, calls) one answer may follow: a chain such as `f.Names[0]` over `range iface.Methods.List` takes a dozen. */
const MAX_STEPS = 30;

interface At {
  path: string;
  facts: FileFacts;
  tree: SourceTree;
  node: Node;
}

const ref = (path: string, n: Node): TypeRef => ({ path, start: n.startIndex, end: n.endIndex });
const loc = (path: string, n: Node): Loc => ({ path, line: n.startPosition.row + 1, col: n.startPosition.column + 1 });

export class GoTypes {
  constructor(private readonly deps: GoTypesDeps) {}

  private async open(path: string): Promise<{ facts: FileFacts; tree: SourceTree } | undefined> {
    const facts = await this.deps.fileFacts(path);
    if (!facts || facts.language !== 'go') return undefined;
    return { facts, tree: await this.deps.syntax(path, facts) };
  }

  /** The node a ref names, in a tree taken again now. */
  private async node(r: TypeRef): Promise<At | undefined> {
    const f = await this.open(r.path);
    if (!f) return undefined;
    let n: Node | null = f.tree.root.descendantForIndex(r.start, r.end);
    while (n && (n.startIndex !== r.start || n.endIndex !== r.end)) n = n.parent;
    return n ? { path: r.path, ...f, node: n } : undefined;
  }

  private async nodeAtLoc(l: Loc): Promise<At | undefined> {
    const f = await this.open(l.path);
    const n = f?.tree.root.descendantForPosition({ row: l.line - 1, column: l.col - 1 });
    return f && n ? { path: l.path, ...f, node: n } : undefined;
  }

  // ---- entry points --------------------------------------------------------------------------

  /**
   * The definition of the identifier at a position when it is a member a type selects: the
   * field or method of `x.name` where `x` is a value (not a package), or a key of a struct
   * literal. Undefined when it is neither, or when the type is not known.
   */
  async definitionAt(path: string, line: number, col: number): Promise<{ locs: Loc[]; how: string } | undefined> {
    const f = await this.open(path);
    const n = f ? identifierAt(f.tree.root, line - 1, col - 1) : undefined;
    if (!n) return undefined;
    const p = n.parent;
    if (p?.type === 'literal_element') {
      const fields = await this.literalKeyField(path, n);
      return fields && fields.length > 0 ? { locs: fields.map((m) => m.loc), how: 'a field of the composite literal\'s struct type' } : undefined;
    }
    if (p?.type !== 'selector_expression' || p.childForFieldName('field')?.startIndex !== n.startIndex) return undefined;
    const operand = p.childForFieldName('operand');
    if (!operand || (await this.packageVar(path, operand, n.text)) !== undefined) return undefined;
    const t = await this.typeOfExpr(path, operand, 0);
    const ms = t ? await this.members(t, n.text, 0) : [];
    return ms.length > 0 ? { locs: ms.map((m) => m.loc), how: `member of ${operand.type === 'identifier' ? `the type of ${operand.text}` : 'its receiver\'s type'}, as declarations state it` } : undefined;
  }

  /**
   * The field a key of a composite literal names (`T{Name: …}`, and an element of `[]T{{Name: …}}`
   * whose type is elided); undefined when the literal is not a struct (a map's keys are values).
   */
  async literalKeyField(path: string, key: Node): Promise<GoMember[] | undefined> {
    const element = key.parent;
    const keyed = element?.parent;
    if (element?.type !== 'literal_element' || keyed?.type !== 'keyed_element' || keyed.childForFieldName('key')?.startIndex !== element.startIndex) return undefined;
    const value = keyed.parent;
    if (value?.type !== 'literal_value') return undefined;
    const t = await this.literalType(path, value, 0);
    if (!t) return undefined;
    const u = await this.underlying(t, 0);
    const un = u ? await this.node(u) : undefined;
    if (un?.node.type !== 'struct_type') return undefined;
    return this.structFields(un, key.text).map((f) => f.member);
  }

  // ---- the type of an expression ------------------------------------------------------------

  /** The type of a `literal_value`: its composite literal's, or the element type its enclosing literal implies. */
  private async literalType(path: string, value: Node, steps: number): Promise<TypeRef | undefined> {
    if (steps > MAX_STEPS) return undefined;
    const p = value.parent;
    if (p?.type === 'composite_literal') {
      const t = p.childForFieldName('type');
      return t ? ref(path, t) : undefined;
    }
    if (p?.type !== 'literal_element') return undefined;
    const holder = p.parent;
    const outerValue = holder?.type === 'keyed_element' ? holder.parent : holder;
    if (outerValue?.type !== 'literal_value') return undefined;
    const outer = await this.literalType(path, outerValue, steps + 1);
    if (!outer) return undefined;
    const isKey = holder?.type === 'keyed_element' && holder.childForFieldName('key')?.startIndex === p.startIndex;
    return this.elementOf(outer, isKey ? 'key' : 'value', steps + 1);
  }

  async typeOfExpr(path: string, e: Node, steps: number): Promise<TypeRef | undefined> {
    if (steps > MAX_STEPS) return undefined;
    switch (e.type) {
      case 'parenthesized_expression': {
        const inner = e.namedChildren[0];
        return inner ? this.typeOfExpr(path, inner, steps + 1) : undefined;
      }
      case 'unary_expression': {
        const op = e.childForFieldName('operator')?.text ?? e.child(0)?.text;
        const operand = e.childForFieldName('operand');
        if (!operand) return undefined;
        const t = await this.typeOfExpr(path, operand, steps + 1);
        if (op === '<-') return t ? this.elementOf(t, 'value', steps + 1) : undefined;
        return t;
      }
      case 'composite_literal':
      case 'type_assertion_expression': {
        const t = e.childForFieldName('type');
        return t ? ref(path, t) : undefined;
      }
      case 'identifier':
        return this.typeOfName(path, e, steps + 1);
      case 'selector_expression': {
        const operand = e.childForFieldName('operand');
        const field = e.childForFieldName('field');
        if (!operand || !field) return undefined;
        const pkg = await this.packageVar(path, operand, field.text);
        if (pkg !== undefined) return pkg ? this.typeOfDeclared(pkg, undefined, steps + 1) : undefined;
        const t = await this.typeOfExpr(path, operand, steps + 1);
        const m = t ? (await this.members(t, field.text, steps + 1))[0] : undefined;
        return m?.kind === 'field' ? m.type : undefined;
      }
      case 'call_expression':
        return this.resultOf(path, e, 0, steps + 1);
      case 'index_expression': {
        const operand = e.childForFieldName('operand');
        const t = operand ? await this.typeOfExpr(path, operand, steps + 1) : undefined;
        return t ? this.elementOf(t, 'value', steps + 1) : undefined;
      }
      case 'slice_expression': {
        const operand = e.childForFieldName('operand');
        return operand ? this.typeOfExpr(path, operand, steps + 1) : undefined;
      }
      default:
        return undefined;
    }
  }

  /**
   * `pkg.Name` where `pkg` is an imported package: the declaration of `Name` in it (null when the
   * package does not define it); undefined when `operand` is not a package name.
   */
  private async packageVar(path: string, operand: Node, name: string): Promise<Loc | null | undefined> {
    if (operand.type !== 'identifier') return undefined;
    const f = await this.open(path);
    if (!f) return undefined;
    if (f.tree.scopes?.lookup(operand, operand.text)?.kind === 'definition') return undefined;
    const files = await this.deps.packageFiles(path, f.facts, operand.text);
    if (!files || files.length === 0) return undefined;
    for (const file of files) {
      const found = await this.deps.exportsOf(file, name, 1);
      if (found[0]) return found[0];
    }
    return null;
  }

  /** The declaration a name refers to in `path`: its local binding, else its package-level definition. */
  private async declarationOf(path: string, n: Node): Promise<Loc | undefined> {
    const f = await this.open(path);
    if (!f) return undefined;
    const b = f.tree.scopes?.lookup(n, n.text);
    if (b?.kind === 'import') return undefined;
    if (b) return { path, line: b.line, col: b.col };
    return (await this.deps.freeName(path, f.facts, n.text, 1))[0];
  }

  private async typeOfName(path: string, n: Node, steps: number): Promise<TypeRef | undefined> {
    const d = await this.declarationOf(path, n);
    return d ? this.typeOfDeclared(d, { path, node: n }, steps + 1) : undefined;
  }

  /**
   * The type a declaration gives the name at `d`: a parameter's or a `var`'s written type, the
   * value it is initialised with (`:=`, `var x = …`, also the i-th result of a call), a range
   * variable's element, a type switch's case type (for `use`, the use being asked about).
   */
  private async typeOfDeclared(d: Loc, use: { path: string; node: Node } | undefined, steps: number): Promise<TypeRef | undefined> {
    if (steps > MAX_STEPS) return undefined;
    const at = await this.nodeAtLoc(d);
    if (!at) return undefined;
    const n = at.node;
    const decl = n.parent;
    if (!decl) return undefined;
    const path = d.path;
    const indexIn = (list: Node | null | undefined): number => (list?.namedChildren ?? []).findIndex((c) => c?.startIndex === n.startIndex);
    switch (decl.type) {
      case 'parameter_declaration':
      case 'field_declaration': {
        const t = decl.childForFieldName('type');
        return t ? ref(path, t) : undefined;
      }
      case 'var_spec':
      case 'const_spec': {
        const t = decl.childForFieldName('type');
        if (t) return ref(path, t);
        const names = decl.namedChildren.filter((c) => c?.type === 'identifier');
        const i = names.findIndex((c) => c?.startIndex === n.startIndex);
        return this.assigned(path, decl.childForFieldName('value'), i, names.length, steps);
      }
      case 'expression_list': {
        const stmt = decl.parent;
        const i = indexIn(decl);
        if (stmt?.type === 'short_var_declaration' && stmt.childForFieldName('left')?.startIndex === decl.startIndex) {
          return this.assigned(path, stmt.childForFieldName('right'), i, decl.namedChildren.length, steps);
        }
        if (stmt?.type === 'range_clause') {
          const over = stmt.childForFieldName('right');
          const t = over ? await this.typeOfExpr(path, over, steps + 1) : undefined;
          return t ? this.rangeElement(t, i, steps) : undefined;
        }
        if (stmt?.type === 'receive_statement' && i === 0) {
          const right = stmt.childForFieldName('right');
          return right ? this.typeOfExpr(path, right, steps + 1) : undefined;
        }
        if (stmt?.type === 'type_switch_statement') {
          // In a case naming one type, the alias has that type; elsewhere the operand's.
          let cur: Node | null = use && use.path === path ? use.node : null;
          while (cur && cur.type !== 'type_case' && cur.startIndex >= stmt.startIndex && cur.endIndex <= stmt.endIndex) cur = cur.parent;
          if (cur?.type === 'type_case' && cur.parent?.startIndex === stmt.startIndex) {
            const types = cur.childrenForFieldName('type').filter((c): c is Node => c !== null);
            if (types.length === 1 && types[0]!.text !== 'nil') return ref(path, types[0]!);
          }
          const value = stmt.childForFieldName('value');
          return value ? this.typeOfExpr(path, value, steps + 1) : undefined;
        }
        return undefined;
      }
      default:
        return undefined;
    }
  }

  /** The type of the i-th of `count` names assigned from an expression list. */
  private async assigned(path: string, values: Node | null, i: number, count: number, steps: number): Promise<TypeRef | undefined> {
    if (!values || i < 0) return undefined;
    const list = values.type === 'expression_list' ? values.namedChildren.filter((c): c is Node => c !== null) : [values];
    if (list.length === count) {
      const v = list[i];
      return v ? this.typeOfExpr(path, v, steps + 1) : undefined;
    }
    const only = list.length === 1 ? list[0] : undefined;
    if (!only) return undefined;
    // `a, err := f()`; `v, ok := x.(T)`, `m[k]`, `<-ch` (the second name is a bool).
    if (only.type === 'call_expression') return this.resultOf(path, only, i, steps + 1);
    return i === 0 ? this.typeOfExpr(path, only, steps + 1) : undefined;
  }

  /** The i-th result type of a call: a function's or method's declared results, a conversion's type, `new`/`make`/`append`. */
  private async resultOf(path: string, call: Node, i: number, steps: number): Promise<TypeRef | undefined> {
    if (steps > MAX_STEPS) return undefined;
    let fn = call.childForFieldName('function');
    while (fn?.type === 'parenthesized_expression') fn = fn.namedChildren[0] ?? null;
    if (!fn) return undefined;
    const args = (call.childForFieldName('arguments')?.namedChildren ?? []).filter((a): a is Node => a !== null && a.type !== 'comment');
    // `(*T)(x)`: a conversion to a pointer type.
    if (fn.type === 'unary_expression' && fn.childForFieldName('operand')) fn = fn.childForFieldName('operand')!;
    // `[]byte(s)`, `map[K]V(m)`: conversions to a type written in place.
    if (/_type$/.test(fn.type) && fn.type !== 'qualified_type') return i === 0 ? ref(path, fn) : undefined;
    let decl: Loc | undefined;
    if (fn.type === 'identifier') {
      decl = await this.declarationOf(path, fn);
      if (!decl) {
        const first = args[0];
        if (i !== 0 || !first) return undefined;
        if (fn.text === 'new' || fn.text === 'make') return ref(path, first);
        if (fn.text === 'append') return this.typeOfExpr(path, first, steps + 1);
        return undefined;
      }
    } else if (fn.type === 'selector_expression' || fn.type === 'qualified_type') {
      const operand = fn.childForFieldName('operand') ?? fn.childForFieldName('package');
      const field = fn.childForFieldName('field') ?? fn.childForFieldName('name');
      if (!operand || !field) return undefined;
      const pkg = await this.packageVar(path, operand, field.text);
      if (pkg === null) return undefined;
      if (pkg) decl = pkg;
      else {
        const t = await this.typeOfExpr(path, operand, steps + 1);
        const m = t ? (await this.members(t, field.text, steps + 1))[0] : undefined;
        if (m?.kind === 'field') return m.type ? this.funcResult(m.type, i, steps) : undefined;
        decl = m?.loc;
      }
    } else return undefined;
    if (!decl) return undefined;
    const at = await this.nodeAtLoc(decl);
    const d = at?.node.parent;
    if (!at || !d) return undefined;
    if (d.type === 'type_spec' || d.type === 'type_alias') return i === 0 ? ref(at.path, at.node) : undefined;
    if (d.type === 'function_declaration' || d.type === 'method_declaration' || d.type === 'method_elem') return this.nthResult(at.path, d, i);
    // A variable or field of function type.
    const t = await this.typeOfDeclared(decl, undefined, steps + 1);
    return t ? this.funcResult(t, i, steps) : undefined;
  }

  /** The i-th result of a function type (a variable or field holding a function). */
  private async funcResult(t: TypeRef, i: number, steps: number): Promise<TypeRef | undefined> {
    const u = await this.underlying(t, steps + 1);
    const at = u ? await this.node(u) : undefined;
    return at?.node.type === 'function_type' ? this.nthResult(at.path, at.node, i) : undefined;
  }

  /** The i-th declared result of a function, method or function type. */
  private nthResult(path: string, fn: Node, i: number): TypeRef | undefined {
    const result = fn.childForFieldName('result');
    if (!result) return undefined;
    if (result.type !== 'parameter_list') return i === 0 ? ref(path, result) : undefined;
    const types: Node[] = [];
    for (const p of result.namedChildren) {
      if (p?.type !== 'parameter_declaration') continue;
      const t = p.childForFieldName('type');
      if (!t) continue;
      const names = p.childrenForFieldName('name').filter((c) => c !== null).length;
      for (let k = 0; k < Math.max(1, names); k++) types.push(t);
    }
    const t = types[i];
    return t ? ref(path, t) : undefined;
  }

  // ---- types and their parts ------------------------------------------------------------------

  /** The declaration of the named type a type expression stands for (pointers looked through). */
  private async named(t: TypeRef, steps: number): Promise<{ at: At; name: string; spec: Node } | undefined> {
    if (steps > MAX_STEPS) return undefined;
    const at = await this.node(t);
    if (!at) return undefined;
    let n: Node | null = at.node;
    while (n && (n.type === 'pointer_type' || n.type === 'parenthesized_type')) n = n.namedChildren[0] ?? null;
    if (n?.type === 'generic_type') n = n.childForFieldName('type');
    if (!n) return undefined;
    let decl: Loc | undefined;
    if (n.type === 'type_identifier') {
      // The declaration's own name: the type itself.
      if ((n.parent?.type === 'type_spec' || n.parent?.type === 'type_alias') && n.parent.childForFieldName('name')?.startIndex === n.startIndex) {
        return { at: { ...at, node: n }, name: n.text, spec: n.parent };
      }
      decl = await this.declarationOf(at.path, n);
    } else if (n.type === 'qualified_type') {
      const pkg = n.childForFieldName('package');
      const name = n.childForFieldName('name');
      if (!pkg || !name) return undefined;
      const files = (await this.deps.packageFiles(at.path, at.facts, pkg.text)) ?? [];
      for (const f of files) {
        decl = (await this.deps.exportsOf(f, name.text, 1))[0];
        if (decl) break;
      }
    } else return undefined;
    if (!decl) return undefined;
    const d = await this.nodeAtLoc(decl);
    const spec = d?.node.parent;
    if (!d || !spec || (spec.type !== 'type_spec' && spec.type !== 'type_alias')) return undefined;
    return { at: d, name: d.node.text, spec };
  }

  /** The type literal under named types (`struct{…}`, `[]T`, `map[K]V`, `interface{…}`), pointers looked through. */
  private async underlying(t: TypeRef, steps: number): Promise<TypeRef | undefined> {
    for (let cur: TypeRef | undefined = t, k = steps; cur && k <= MAX_STEPS; k++) {
      const at = await this.node(cur);
      if (!at) return undefined;
      let n: Node | null = at.node;
      while (n && (n.type === 'pointer_type' || n.type === 'parenthesized_type')) n = n.namedChildren[0] ?? null;
      if (!n) return undefined;
      if (n.type !== 'type_identifier' && n.type !== 'qualified_type' && n.type !== 'generic_type') return ref(at.path, n);
      const named = await this.named(ref(at.path, n), k + 1);
      const under = named?.spec.childForFieldName('type');
      cur = named && under ? ref(named.at.path, under) : undefined;
    }
    return undefined;
  }

  /** The element (or key) type of a slice, array, map or channel type, or of a pointer to an array. */
  private async elementOf(t: TypeRef, which: 'key' | 'value', steps: number): Promise<TypeRef | undefined> {
    const u = await this.underlying(t, steps + 1);
    const at = u ? await this.node(u) : undefined;
    if (!at) return undefined;
    const n = at.node;
    if (n.type === 'map_type') {
      const part = n.childForFieldName(which);
      return part ? ref(at.path, part) : undefined;
    }
    if (which === 'key') return undefined;
    const part = n.type === 'slice_type' || n.type === 'array_type' || n.type === 'implicit_length_array_type' ? n.childForFieldName('element') : n.type === 'channel_type' ? n.childForFieldName('value') : null;
    return part ? ref(at.path, part) : undefined;
  }

  /** The type of the i-th range variable over a value of type `t`. */
  private async rangeElement(t: TypeRef, i: number, steps: number): Promise<TypeRef | undefined> {
    const u = await this.underlying(t, steps + 1);
    const at = u ? await this.node(u) : undefined;
    if (!at) return undefined;
    if (at.node.type === 'map_type') return this.elementOf(t, i === 0 ? 'key' : 'value', steps + 1);
    if (at.node.type === 'channel_type') return i === 0 ? this.elementOf(t, 'value', steps + 1) : undefined;
    return i === 1 ? this.elementOf(t, 'value', steps + 1) : undefined;
  }

  /** The fields named `name` declared in a struct type node, with embedded fields' types. */
  private structFields(st: At, name: string): Array<{ member: GoMember; embedded?: TypeRef }> {
    const out: Array<{ member: GoMember; embedded?: TypeRef }> = [];
    const list = st.node.namedChildren.find((c) => c?.type === 'field_declaration_list');
    for (const fd of list?.namedChildren ?? []) {
      if (fd?.type !== 'field_declaration') continue;
      const type = fd.childForFieldName('type');
      const names = fd.childrenForFieldName('name').filter((c): c is Node => c !== null);
      if (names.length === 0 && type) {
        // An embedded field is named by its type's last identifier.
        const id = embeddedName(type);
        out.push({ member: { loc: loc(st.path, id ?? type), kind: 'field', type: ref(st.path, type) }, embedded: ref(st.path, type) });
        continue;
      }
      for (const nm of names) if (nm.text === name) out.push({ member: { loc: loc(st.path, nm), kind: 'field', ...(type ? { type: ref(st.path, type) } : {}) } });
    }
    return out;
  }

  /**
   * Members named `name` of type `t`: at the shallowest embedding depth that has any, its
   * methods (the index's, in the type's package) and fields; interface methods likewise.
   */
  async members(t: TypeRef, name: string, steps: number): Promise<GoMember[]> {
    let level: TypeRef[] = [t];
    const seen = new Set<string>();
    for (let depth = 0; depth < 6 && level.length > 0 && steps + depth <= MAX_STEPS; depth++) {
      const found: GoMember[] = [];
      const next: TypeRef[] = [];
      for (const cur of level) {
        const named = await this.named(cur, steps + depth);
        if (named) {
          const key = `${named.at.path}:${named.at.node.startIndex}`;
          if (seen.has(key)) continue;
          seen.add(key);
          found.push(...(await this.methods(named.at.path, named.name, name)));
        }
        const u = await this.underlying(cur, steps + depth);
        const at = u ? await this.node(u) : undefined;
        if (at?.node.type === 'struct_type') {
          for (const f of this.structFields(at, name)) {
            if (f.embedded) {
              next.push(f.embedded);
              const id = embeddedName((await this.node(f.embedded))?.node);
              if (id?.text === name) found.push(f.member);
            } else found.push(f.member);
          }
        } else if (at?.node.type === 'interface_type') {
          for (const c of at.node.namedChildren) {
            if (c?.type === 'method_elem' && c.childForFieldName('name')?.text === name) found.push({ loc: loc(at.path, c.childForFieldName('name')!), kind: 'method' });
            else if (c?.type === 'type_elem') for (const e of c.namedChildren) if (e && e.type !== 'comment') next.push(ref(at.path, e));
          }
        }
      }
      if (found.length > 0) return this.preferBuild(dedupe(found));
      level = next;
    }
    return [];
  }

  /** Methods named `name` declared on type `typeName` in the package of `typePath`, from the index. */
  private async methods(typePath: string, typeName: string, name: string): Promise<GoMember[]> {
    const dir = typePath.slice(0, typePath.lastIndexOf('/') + 1);
    const rows = this.deps.store
      .findSymbols(name, { limit: 500 })
      .filter((s) => s.name === name && s.kind === 'method' && s.path.slice(0, s.path.lastIndexOf('/') + 1) === dir && s.path.endsWith('.go') && s.container?.split('.').pop() === typeName);
    const out: GoMember[] = [];
    for (const s of rows) {
      const sf = await this.deps.fileFacts(s.path);
      out.push({ loc: { path: s.path, line: s.startLine, col: sf ? nameCol(sf, s.startLine, name) : 1 }, kind: 'method' });
    }
    return out;
  }

  /** Members in files of the default build first; the others only when no such file has one. */
  private async preferBuild(ms: GoMember[]): Promise<GoMember[]> {
    if (ms.length < 2) return ms;
    const ok: GoMember[] = [];
    for (const m of ms) {
      const f = await this.deps.fileFacts(m.loc.path);
      if (f && goFileMatches(m.loc.path, f.text)) ok.push(m);
    }
    return ok.length > 0 ? ok : ms;
  }
}

/** The identifier that names an embedded field: `T`, `*T`, `pkg.T`, `T[int]`. */
function embeddedName(t: Node | undefined | null): Node | undefined {
  let n: Node | null | undefined = t;
  while (n && (n.type === 'pointer_type' || n.type === 'parenthesized_type')) n = n.namedChildren[0];
  if (n?.type === 'generic_type') n = n.childForFieldName('type');
  if (n?.type === 'qualified_type') n = n.childForFieldName('name');
  return n?.type === 'type_identifier' ? n : undefined;
}

function dedupe(ms: GoMember[]): GoMember[] {
  const seen = new Set<string>();
  return ms.filter((m) => {
    const k = `${m.loc.path}:${m.loc.line}:${m.loc.col}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
