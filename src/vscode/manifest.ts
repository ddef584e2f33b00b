/**
 * The language-model tools this extension declares in its manifest. They are generated from
 * the core tool definitions (name, title, model description, JSON schema of the zod input) by
 * `UPDATE_MANIFEST=1 npx vitest run test/vscode-manifest.test.ts`, and that test fails when
 * the manifest and the definitions drift apart.
 */
export interface ManifestTool {
  name: string;
  displayName: string;
}

export function agentsManifestTools(packageJSON: unknown): ManifestTool[] {
  const tools = (packageJSON as { contributes?: { languageModelTools?: unknown } }).contributes?.languageModelTools;
  if (!Array.isArray(tools)) return [];
  return tools.filter((t): t is ManifestTool => typeof t === 'object' && t !== null && typeof (t as ManifestTool).name === 'string').map((t) => ({ name: t.name, displayName: t.displayName }));
}
