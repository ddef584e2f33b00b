/**
 * Architecture rules from `vlt.toml [[architecture.rule]]`, and `vlt lint`, which checks them:
 * - `deny`: component A must not depend on component B (no file of A imports a file of B);
 * - `require`: component A must be covered by a note (a Markdown file that describes it or
 *   code in it) and/or a test (a test file mapped to its code).
 */
import type { RuleConfig } from '../config';
import type { ArchitectureGraph } from './architecture-graph';
import { componentId, type ConstraintInfo } from './model';
import type { TestMap } from './test-map';

export interface Violation {
  rule: string;
  severity: 'error' | 'warn';
  message: string;
  /** Where: the importing file and line for `deny`, the component for `require`. */
  file?: string;
  line?: number;
  ref_id: string;
}

export interface LintReport {
  rules: number;
  components: number;
  violations: Violation[];
  errors: number;
  warnings: number;
}

/** A rule as a bundle lists it. */
export function constraintOf(r: RuleConfig): ConstraintInfo {
  const description = r.description ?? (r.kind === 'deny' ? `${r.from} must not depend on ${r.to.join(', ')}` : `${r.component} must be covered by ${r.coveredBy.join(' and ')}`);
  const definition: Record<string, unknown> = r.kind === 'deny' ? { from: r.from, to: r.to, severity: r.severity } : { component: r.component, covered_by: r.coveredBy, severity: r.severity };
  return { rule: r.name, description, type: r.kind, definition };
}

/** The rules that concern any of these components. */
export function rulesFor(rules: readonly RuleConfig[], components: ReadonlySet<string>): ConstraintInfo[] {
  return rules.filter((r) => (r.kind === 'deny' ? components.has(r.from) || r.to.some((t) => components.has(t)) : components.has(r.component))).map(constraintOf);
}

/** Checks every rule; `strict` also reports components no rule mentions and rules that match no file. */
export function lint(graph: ArchitectureGraph, tests: TestMap, rules: readonly RuleConfig[], opts: { strict?: boolean } = {}): LintReport {
  const violations: Violation[] = [];
  const components = graph.allComponents();
  for (const r of rules) {
    if (r.kind === 'deny') {
      const from = graph.node(componentId(r.from));
      const files = from ? graph.filesOf(from) : [];
      if (opts.strict && files.length === 0) violations.push({ rule: r.name, severity: 'warn', message: `component ${r.from} matches no indexed file`, ref_id: componentId(r.from) });
      const denied = new Set(r.to);
      for (const f of files) {
        for (const e of graph.code.imports(f.id)) {
          for (const t of e.targets) {
            const target = graph.fileById(t);
            if (!target) continue;
            const hit = graph.componentsOf(graph.fileNode(target)).find((c) => denied.has(c));
            if (hit && !graph.componentsOf(graph.fileNode(f)).includes(hit)) {
              violations.push({ rule: r.name, severity: r.severity, message: `${f.path} imports ${target.path} (${r.from} must not depend on ${hit})`, file: f.path, line: e.spec.line, ref_id: componentId(r.from) });
            }
          }
        }
      }
    } else {
      const node = graph.node(componentId(r.component));
      if (!node) continue;
      if (r.coveredBy.includes('note')) {
        const described = graph.notesFor(node).length > 0 || graph.filesOf(node).some((f) => graph.notesFor(graph.fileNode(f), { inherited: true }).length > 0);
        if (!described) violations.push({ rule: r.name, severity: r.severity, message: `no note describes ${r.component} (link to its files from a Markdown file, or give one \`ref: ${componentId(r.component)}\`)`, ref_id: node.ref_id });
      }
      if (r.coveredBy.includes('test')) {
        const t = tests.testsOf(node);
        if (t.test_files.length === 0) violations.push({ rule: r.name, severity: r.severity, message: `no test file is mapped to ${r.component}`, ref_id: node.ref_id });
      }
    }
  }
  if (opts.strict) {
    const named = new Set(rules.flatMap((r) => (r.kind === 'deny' ? [r.from, ...r.to] : [r.component])));
    for (const c of components) {
      const name = c.ref_id.slice('component:'.length);
      if (!named.has(name)) violations.push({ rule: 'strict', severity: 'warn', message: `component ${name} is named by no rule`, ref_id: c.ref_id });
    }
  }
  violations.sort((a, b) => (a.severity === b.severity ? 0 : a.severity === 'error' ? -1 : 1) || (a.file ?? '').localeCompare(b.file ?? '') || (a.line ?? 0) - (b.line ?? 0));
  return {
    rules: rules.length,
    components: components.length,
    violations,
    errors: violations.filter((v) => v.severity === 'error').length,
    warnings: violations.filter((v) => v.severity === 'warn').length,
  };
}
