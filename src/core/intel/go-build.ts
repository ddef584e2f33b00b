/**
 * Go build constraints: whether a file belongs to the build a Go toolchain (and gopls) would
 * analyse by default, so that a package split by platform (`exec_plan9.go`, `exec_posix.go`;
 * `count_generic.go`, `count_native.go`) answers with the definition that build compiles.
 * The platform is linux/amd64 without cgo (`CGO_ENABLED=0`), the configuration of a build
 * without a C toolchain; files for other platforms stay answers when nothing else defines
 * the name.
 *
 * Rules (go/build): a file name `*_GOOS`, `*_GOARCH` or `*_GOOS_GOARCH` (before `_test`),
 * and a `//go:build` line, or the older `// +build` lines, before the package clause.
 */

const GOOS = 'linux';
const GOARCH = 'amd64';

const KNOWN_OS = new Set(['aix', 'android', 'darwin', 'dragonfly', 'freebsd', 'hurd', 'illumos', 'ios', 'js', 'linux', 'nacl', 'netbsd', 'openbsd', 'plan9', 'solaris', 'wasip1', 'windows', 'zos']);
const KNOWN_ARCH = new Set([
  '386', 'amd64', 'amd64p32', 'arm', 'armbe', 'arm64', 'arm64be', 'loong64', 'mips', 'mipsle', 'mips64', 'mips64le', 'mips64p32', 'mips64p32le',
  'ppc', 'ppc64', 'ppc64le', 'riscv', 'riscv64', 's390', 's390x', 'sparc', 'sparc64', 'wasm',
]);
/** GOOS values that satisfy the `unix` tag. */
const UNIX_OS = new Set(['aix', 'android', 'darwin', 'dragonfly', 'freebsd', 'hurd', 'illumos', 'ios', 'linux', 'netbsd', 'openbsd', 'solaris']);

function tagHolds(tag: string): boolean {
  if (tag === GOOS || tag === GOARCH || tag === 'gc') return true;
  if (tag === 'unix') return UNIX_OS.has(GOOS);
  // Release tags: every go1.N up to the toolchain's own.
  if (/^go1\.\d+$/.test(tag)) return true;
  return false;
}

/** Whether the file name's `_GOOS` / `_GOARCH` suffixes allow the build. */
export function goFileNameMatches(path: string): boolean {
  const base = path.slice(path.lastIndexOf('/') + 1).replace(/\.go$/, '').replace(/_test$/, '');
  const parts = base.split('_');
  if (parts.length < 2) return true;
  const last = parts[parts.length - 1]!;
  const prev = parts.length >= 3 ? parts[parts.length - 2]! : undefined;
  if (KNOWN_ARCH.has(last)) {
    if (last !== GOARCH) return false;
    return prev === undefined || !KNOWN_OS.has(prev) || prev === GOOS;
  }
  if (KNOWN_OS.has(last)) return last === GOOS;
  return true;
}

/** Evaluates a `//go:build` expression (`linux && (amd64 || arm64)`, `!plan9`). */
export function evalBuildExpr(expr: string): boolean | undefined {
  const tokens = expr.match(/&&|\|\||!|\(|\)|[\w.]+/g) ?? [];
  let i = 0;
  const or = (): boolean | undefined => {
    let v = and();
    while (tokens[i] === '||') {
      i++;
      const r = and();
      v = v === undefined || r === undefined ? undefined : v || r;
    }
    return v;
  };
  const and = (): boolean | undefined => {
    let v = not();
    while (tokens[i] === '&&') {
      i++;
      const r = not();
      v = v === undefined || r === undefined ? undefined : v && r;
    }
    return v;
  };
  const not = (): boolean | undefined => {
    const t = tokens[i++];
    if (t === '!') {
      const v = not();
      return v === undefined ? undefined : !v;
    }
    if (t === '(') {
      const v = or();
      if (tokens[i++] !== ')') return undefined;
      return v;
    }
    if (t === undefined || !/^[\w.]+$/.test(t)) return undefined;
    return tagHolds(t);
  };
  const v = or();
  return i === tokens.length ? v : undefined;
}

/** Whether the file's build constraint lines (before its package clause) allow the build; true when it has none. */
export function goConstraintMatches(text: string): boolean {
  const head = text.slice(0, Math.max(0, text.search(/^package\s/m)));
  const goBuild = /^\/\/go:build\s+(.+)$/m.exec(head)?.[1];
  if (goBuild !== undefined) return evalBuildExpr(goBuild.trim()) !== false;
  // `// +build a,b c` lines: each line an OR of space-separated terms, a term an AND of commas.
  for (const m of head.matchAll(/^\/\/ \+build\s+(.+)$/gm)) {
    const line = m[1]!.trim().split(/\s+/).some((term) => term.split(',').every((t) => (t.startsWith('!') ? !tagHolds(t.slice(1)) : tagHolds(t))));
    if (!line) return false;
  }
  return true;
}

/** Whether a Go file is part of the default build (its name and its constraint lines). */
export function goFileMatches(path: string, text: string): boolean {
  return goFileNameMatches(path) && goConstraintMatches(text);
}
