/** Path conventions the oracle ranks by: test files, and directories a question names. */

/** Test files by the naming conventions of the common languages. */
export function isTestPath(p: string): boolean {
  return (
    /(?:^|\/)(?:tests?|__tests__|specs?)\//.test(p) ||
    /_test\.(?:go|py|rs|rb|exs?)$/.test(p) ||
    /(?:^|\/)test_[^/]*\.py$/.test(p) ||
    /\.(?:test|spec)\.[cm]?[jt]sx?$/.test(p) ||
    /(?:Test|Tests|Spec)\.(?:java|kt|cs|swift|php)$/.test(p)
  );
}

/** Whether `p` lies under one of the named directories (matched as a path suffix of a directory). */
export function inNamedDir(p: string, dirs: readonly string[]): boolean {
  const dir = p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '';
  return dirs.some((d) => dir === d || dir.endsWith(`/${d}`) || dir.startsWith(`${d}/`) || dir.includes(`/${d}/`));
}
