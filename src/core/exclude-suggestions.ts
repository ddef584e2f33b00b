/**
 * What `vlt coderag init --dry-run` suggests leaving out of a large tree: folders of
 * documentation, firmware, vendored and generated code, by name; folders most of whose files
 * carry a generated-code marker; and folders of large machine-written files (the Linux kernel's
 * AMD register headers: 721 files, 373 MiB). Each comes with its file count and size, as the
 * `[index] exclude` glob that leaves it out. Nothing is excluded by itself: the user decides.
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
/**
 * A folder of large machine-written files (register maps, tables): at least this share of the
 * tree's bytes, in files of at least {@link BULKY_AVG_BYTES} on average.
 */
const BULKY_SHARE = 0.05;
const BULKY_AVG_BYTES = 100 * 1024;
/** Folder depths looked at for bulky folders. */
const BULKY_DEPTH = 6;

export class ExcludeSuggester {
  private readonly named = new Map<string, { files: number; bytes: number; why: string }>();
  /** Per top-level folder: files, generated files, bytes of the generated ones. */
  private readonly tops = new Map<string, { files: number; generated: number; generatedBytes: number }>();
  /** Per folder (to {@link BULKY_DEPTH} levels): files and bytes. */
  private readonly dirs = new Map<string, { files: number; bytes: number }>();
  private bytes = 0;

  /** One file that would be indexed; `generated` when it carries a generated-code marker. */
  add(path: string, bytes: number, generated: boolean): void {
    const parts = path.split('/');
    this.bytes += bytes;
    for (let i = 1; i < Math.min(parts.length, BULKY_DEPTH + 1); i++) {
      const dir = parts.slice(0, i).join('/');
      const d = this.dirs.get(dir) ?? { files: 0, bytes: 0 };
      d.files++;
      d.bytes += bytes;
      this.dirs.set(dir, d);
    }
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
    // The deepest folders of bulky files: a parent is left alone when a folder in it qualifies.
    const bulky = [...this.dirs].filter(([, d]) => d.files >= 1 && d.bytes >= this.bytes * BULKY_SHARE && d.bytes / d.files >= BULKY_AVG_BYTES).map(([dir]) => dir);
    for (const dir of bulky) {
      if (bulky.some((o) => o !== dir && o.startsWith(`${dir}/`)) || out.some((s) => dir.startsWith(s.glob.slice(0, -2)))) continue;
      const d = this.dirs.get(dir)!;
      out.push({ glob: `${dir}/**`, files: d.files, bytes: d.bytes, why: `large machine-written files (${Math.round(d.bytes / d.files / 1024)} KiB each on average; register maps, tables)` });
    }
    return out.sort((a, b) => b.bytes - a.bytes);
  }
}
