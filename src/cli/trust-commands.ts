/**
 * `vlt trust`: the user's decision that a workspace's own settings and programs may be used —
 * vlt.toml's endpoints, models and key variables, and the workspace's own TypeScript for the
 * language server. Recorded in the user's config folder (`trusted.json`) with the SHA-256 of the
 * workspace's vlt.toml, so that a vlt.toml changed afterwards (a pull) needs `vlt trust` again.
 */
import type { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { CONFIG_FILE_NAME, parseConfigText, TRUSTED_ONLY_KEYS } from '../core/config';
import { VltError } from '../core/errors';
import { writeLine } from './io';
import type { CommandContext } from './command-context';
import { listTrust, revokeTrust, trustWorkspace, userConfigDir } from '../core/trust';

/** The trust-only settings a workspace's vlt.toml holds, as `section.key` → value, for the user to review. */
async function trustedOnlySettings(root: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path.join(root, CONFIG_FILE_NAME), 'utf8');
  } catch {
    return {};
  }
  const toml = parseConfigText(text) as Record<string, Record<string, unknown> | undefined>;
  const settings: Record<string, unknown> = {};
  for (const name of TRUSTED_ONLY_KEYS) {
    const [section, key] = name.split('.') as [string, string];
    const value = toml[section]?.[key];
    if (value !== undefined) settings[name] = value;
  }
  return settings;
}

export function registerTrustCommands(program: Command, ctx: CommandContext): void {
  const out = (text: string) => writeLine(ctx.io.stdout, text);
  const json = (value: unknown) => out(JSON.stringify(value, null, 2));
  program
    .command('trust')
    .description(`trust a workspace: its ${CONFIG_FILE_NAME} may then choose endpoints, models and API key variables, and its own TypeScript runs in the language server (recorded with a hash of ${CONFIG_FILE_NAME}: a changed one needs \`vlt trust\` again)`)
    .argument('[path]', 'workspace root (default: -C, or the current directory)')
    .option('--revoke', 'stop trusting the workspace')
    .option('--list', 'list the trusted workspaces')
    .option('--json', 'machine-readable output')
    .action(async (p: string | undefined, o: { revoke?: boolean; list?: boolean; json?: boolean }) => {
      if (o.revoke && o.list) throw new VltError('USAGE', '--revoke and --list cannot be combined');
      const env = process.env;
      if (o.list) {
        const list = await listTrust(env);
        if (o.json) return json(list);
        if (list.length === 0) return out(`no trusted workspaces${userConfigDir(env) ? '' : ' (no user config folder: set HOME or VLT_CONFIG_HOME)'}`);
        for (const r of list) {
          const note = !r.exists ? 'missing' : r.current ? 'trusted' : `${CONFIG_FILE_NAME} changed since; run \`vlt trust\` there again`;
          out(`${r.path}  (${note}; since ${r.trusted_at})`);
        }
        return;
      }
      ctx.here('trust');
      const root = ctx.root(p);
      if (o.revoke) {
        const r = await revokeTrust(root, env);
        if (o.json) return json({ trusted: false, ...r });
        return out(r.revoked ? `no longer trusted: ${r.path}` : `${r.path} was not trusted`);
      }
      const settings = await trustedOnlySettings(root);
      const rec = await trustWorkspace(root, env);
      if (o.json) return json({ trusted: true, ...rec, settings });
      out(`trusted ${rec.path} (recorded in ${rec.file})`);
      const keys = Object.entries(settings);
      if (keys.length) {
        out(`its ${CONFIG_FILE_NAME} now applies in full, including:`);
        for (const [k, v] of keys) out(`  ${k} = ${JSON.stringify(v)}`);
      }
      out(rec.config_sha256 ? `a change to its ${CONFIG_FILE_NAME} needs \`vlt trust\` again` : `it has no ${CONFIG_FILE_NAME}; one added later needs \`vlt trust\` again`);
    });
}
