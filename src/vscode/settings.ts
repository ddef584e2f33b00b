/**
 * The extension's settings (`vlt.*`), read in one place with their defaults. The manifest's
 * `contributes.configuration` documents each one.
 */
import * as vscode from 'vscode';

export interface ExtensionSettings {
  /** null: automatic (languages no installed extension serves). */
  fallbackLanguages: string[] | null;
  headlessLanguageServers: boolean;
  editorTimeoutMs: number;
  referencesBudgetMs: number;
  mcpEnabled: boolean;
  /** 0: any free port. */
  mcpPort: number;
  /** Only the thresholds the user set; the others come from vlt.toml, then the defaults. */
  queue: { files?: number; lines?: number; timeoutSeconds?: number };
  include: string[] | undefined;
  exclude: string[] | undefined;
  whereUsedPresentation: 'peek' | 'quickPick';
  /** The user's OpenAI-compatible endpoint and model (user settings only; empty: the config files'). */
  llm: { baseUrl?: string; model?: string };
}

export function readSettings(scope?: vscode.ConfigurationScope): ExtensionSettings {
  const c = vscode.workspace.getConfiguration('vlt', scope);
  const list = (key: string): string[] | undefined => {
    const v = c.get<unknown>(key);
    return Array.isArray(v) && v.every((x) => typeof x === 'string') ? v : undefined;
  };
  const positive = (key: string, fallback: number): number => {
    const v = c.get<number>(key);
    return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : fallback;
  };
  const isSet = (key: string): boolean => {
    const i = c.inspect(key);
    return i !== undefined && [i.globalValue, i.workspaceValue, i.workspaceFolderValue].some((v) => v !== undefined);
  };
  // Where the key goes is the user's choice alone: a workspace's settings cannot set these
  // (the manifest scopes them to the application, and only the user's value is read).
  const userString = <K extends string>(key: string, name: K): { [P in K]?: string } => {
    const v = c.inspect<string>(key)?.globalValue;
    return (typeof v === 'string' && v.trim() ? { [name]: v.trim() } : {}) as { [P in K]?: string };
  };
  const include = list('index.include');
  const exclude = list('index.exclude');
  return {
    fallbackLanguages: list('navigation.fallbackLanguages') ?? null,
    headlessLanguageServers: c.get<boolean>('navigation.headlessLanguageServers') ?? false,
    editorTimeoutMs: positive('navigation.editorTimeoutMs', 10_000),
    referencesBudgetMs: positive('navigation.referencesBudgetMs', 5000),
    mcpEnabled: c.get<boolean>('mcp.enabled') ?? true,
    mcpPort: Math.max(0, Math.min(65_535, c.get<number>('mcp.port') ?? 0)),
    queue: {
      ...(isSet('index.queue.files') ? { files: positive('index.queue.files', 5) } : {}),
      ...(isSet('index.queue.lines') ? { lines: positive('index.queue.lines', 1000) } : {}),
      ...(isSet('index.queue.timeoutSeconds') ? { timeoutSeconds: positive('index.queue.timeoutSeconds', 300) } : {}),
    },
    include: include && include.length > 0 ? include : undefined,
    exclude: exclude && exclude.length > 0 ? exclude : undefined,
    whereUsedPresentation: c.get<string>('whereUsed.presentation') === 'quickPick' ? 'quickPick' : 'peek',
    llm: { ...userString('llm.baseUrl', 'baseUrl'), ...userString('llm.model', 'model') },
  };
}
