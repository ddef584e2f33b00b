/**
 * What `vlt coderag init --dry-run` suggests leaving out of a large tree: folders of
 * documentation, firmware, vendored and generated code, by name, and folders most of whose files
 * carry a generated-code marker, each with its file count and size, as the `[index] exclude`
 * glob that leaves it out. Nothing is excluded by itself: the user decides.
 */

export interface ExcludeSuggestion {
  /** The glob for vlt.toml's `[index] exclude`. */
  glob: string;
  files: number;
  bytes: number;
  /** What the folder holds, in words. */
  why: string;
}

/** Folder names that say what a folder holds, checked at any depth (the first match counts). */
const KINDS: ReadonlyArray<readonly [RegExp, string]> = [
  [/^(?:documentation|docs?)$/i, 'documentation'],
  [/firmware/i, 'firmware'],
  [/^(?:vendor|vendored|third[_-]party|thirdparty|external|extern)$/i, 'vendored code'],
  [/^(?:generated|gen|autogen|auto[_-]generated)$/i, 'generated code'],
];

/** A folder is suggested when it holds at least this many files that would be indexed… */
const MIN_FILES = 50;
/** …and at least this share of them. */
const MIN_SHARE = 0.02;
/** A folder most of whose files are marked generated: this share of them, at least. */
const GENERATED_SHARE = 0.5;

export class ExcludeSuggester {
  private readonly named = new Map<string, { files: number; bytes: number; why: string }>();
  /** Per top-level folder: files, generated files, bytes of the generated ones. */
  private readonly tops = new Map<string, { files: number; generated: number; generatedBytes: number }>();

  /** One file that would be indexed; `generated` when it carries a generated-code marker. */
  add(path: string, bytes: number, generated: boolean): void {
    const parts = path.split('/');
    for (let i = 0; i < parts.length - 1; i++) {
      const kind = KINDS.find(([re]) => re.test(parts[i]!));
      if (!kind) continue;
      const dir = parts.slice(0, i + 1).join('/');
      const e = this.named.get(dir) ?? { files: 0, bytes: 0, why: kind[1] };
      e.files++;
      e.bytes += bytes;
      this.named.set(dir, e);
      break;
    }
    if (parts.length > 1) {
      const t = this.tops.get(parts[0]!) ?? { files: 0, generated: 0, generatedBytes: 0 };
      t.files++;
      if (generated) {
        t.generated++;
        t.generatedBytes += bytes;
      }
      this.tops.set(parts[0]!, t);
    }
  }

  /** The suggestions for a tree of `total` files that would be indexed, largest first. */
  suggestions(total: number): ExcludeSuggestion[] {
    const big = (files: number) => files >= MIN_FILES && files >= total * MIN_SHARE;
    const out: ExcludeSuggestion[] = [];
    for (const [dir, e] of this.named) if (big(e.files)) out.push({ glob: `${dir}/**`, files: e.files, bytes: e.bytes, why: e.why });
    for (const [dir, t] of this.tops) {
      if (out.some((s) => s.glob === `${dir}/**`)) continue;
      if (big(t.generated) && t.generated >= t.files * GENERATED_SHARE) out.push({ glob: `${dir}/**`, files: t.generated, bytes: t.generatedBytes, why: `generated code (${t.generated} of its ${t.files} files are marked generated)` });
    }
    return out.sort((a, b) => b.bytes - a.bytes);
  }
}
