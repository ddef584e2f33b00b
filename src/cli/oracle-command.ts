/**
 * `vlt oracle`: a question about the codebase answered short and cited, streamed to the
 * terminal as the model writes it; the extractive evidence brief without a model. The same
 * Oracle as the ask_oracle tool, with the terminal's options (agent mode, turns, sources,
 * a context budget, --explain).
 */
import type { Command } from 'commander';
import { SOURCE_FAMILIES, type SourceFamily } from '../core/oracle/oracle';
import type { CommandContext } from './command-context';
import { formatExplain } from './format';
import { positiveInt, sourceFamilies } from './options';

export function registerOracleCommand(program: Command, c: CommandContext): void {
  const { io, out, json } = c;
  program
    .command('oracle')
    .description('answer a question about the codebase: short, cited [path:line]; an extractive evidence brief without a language model')
    .argument('<question...>', 'the question, or a pasted bug report (quote it, or pass - to read it from stdin)')
    .option('--source <list>', `sources to consult, comma-separated: ${SOURCE_FAMILIES.join(',')}`, sourceFamilies)
    .option('--explain', 'each retrieval path with its results and timing, the fusion and rerank, and the context with token counts')
    .option('--json', 'machine-readable output (the whole answer object)')
    .option('--session <id>', 'the shared conversation context to read follow-ups from and record into')
    .option('--no-llm', 'the extractive evidence brief even when a language model is configured')
    .option('--agent', 'let the language model call search and navigation tools in a loop')
    .option('--max-turns <n>', 'agent mode: most model turns', positiveInt)
    .option('--tokens <n>', 'context budget in tokens (default by question type)', positiveInt)
    .option('--lsp', 'ask language servers and ctags for definitions and references (slower to start)')
    .action(async (words: string[], o: { source?: SourceFamily[]; explain?: boolean; json?: boolean; session?: string; llm?: boolean; agent?: boolean; maxTurns?: number; tokens?: number; lsp?: boolean }) => {
      const { logger, progress } = c.wiring();
      const question = words.length === 1 && words[0] === '-' ? ((await io.readStdin()) ?? '') : words.join(' ');
      let streamed = false;
      const ans = await c.workspace().oracle({ lsp: Boolean(o.lsp), noLlm: o.llm === false }, (oracle) =>
        oracle.ask(question, {
          ...(o.source ? { sources: o.source } : {}),
          explain: Boolean(o.explain),
          ...(o.session !== undefined ? { session: o.session } : {}),
          author: 'user',
          noLlm: o.llm === false,
          agent: Boolean(o.agent),
          ...(o.maxTurns ? { maxTurns: o.maxTurns } : {}),
          ...(o.tokens ? { budgetTokens: o.tokens } : {}),
          signal: io.signal,
          onEvent: (e) => {
            if (e.type === 'phase') progress.status(e.message);
            else if (e.type === 'tool') logger.info(`oracle: calling ${e.name} ${e.args.slice(0, 160)}`);
            else if (e.type === 'text' && !o.json) {
              if (!streamed) progress.clear();
              streamed = true;
              io.stdout.write(e.text);
            }
          },
        }),
      );
      progress.clear();
      if (o.json) json(ans);
      else {
        // A streamed answer is already on stdout; the brief and the no-context reply are not.
        if (!streamed || ans.mode === 'extractive') out(`${streamed ? '\n\n' : ''}${ans.answer}`);
        else out('');
        if (ans.details) out(`\n**Details**\n\n${ans.details}`);
        if (ans.degraded) logger.warn(`oracle: ${ans.degraded}`);
        if (o.explain && ans.explain) out(formatExplain(ans.explain));
      }
    });
}
