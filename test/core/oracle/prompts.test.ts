import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PromptLibrary, placeholdersOf, type PromptName } from '../../../src/core/llm/prompts';
import { agentMessages, type AgentTool } from '../../../src/core/oracle/agent';
import { rewriteMessages } from '../../../src/core/oracle/rewrite';
import { noContextAnswer, synthesisMessages, type SynthesisRequest } from '../../../src/core/oracle/synthesize';
import type { AssembledContext, RetrievalResult } from '../../../src/core/oracle/types';

const prompts = new PromptLibrary(path.resolve(__dirname, '../../../prompts'));

/** What the engine fills in each oracle prompt: a placeholder added or dropped must show up here. */
const PLACEHOLDERS: Partial<Record<PromptName, string[]>> = {
  'oracle-system': ['max_words', 'not_found'],
  'oracle-synthesis': ['question_type', 'conversation', 'repo_map', 'context', 'question'],
  'oracle-no-context': ['question', 'why', 'searched'],
  'oracle-rewrite': ['focus_symbols', 'focus_files', 'conversation', 'question'],
  'oracle-agent': ['tools', 'max_turns', 'max_words', 'not_found', 'question_type', 'conversation', 'repo_map', 'context'],
  'oracle-rerank': ['question_type', 'question', 'documents'],
};

const result: RetrievalResult = {
  key: 'code:net/http/server.go:2040-2060',
  source: 'code',
  path: 'net/http/server.go',
  startLine: 2040,
  endLine: 2060,
  content: 'func (mux *ServeMux) Handle(pattern string, handler Handler) {\n\tmux.register(pattern, handler)\n}',
  score: 0.9,
  method: 'bm25+symbols',
  citation: '[net/http/server.go:2040-2060]',
  metadata: {},
};
const context: AssembledContext = {
  items: [
    { tier: 'selected', citation: '[net/http/server.go:2050]', text: 'mux.register(pattern, handler)', tokens: 8 },
    { tier: 'primary', citation: result.citation, text: result.content, tokens: 30, evidence: { result, fused: 0.03, score: 0.9, ranks: { bm25: 1 }, features: {} } },
    { tier: 'neighbour', citation: '[net/http/server.go:2700-2712]', text: 'func Handle(pattern string, handler Handler) { DefaultServeMux.Handle(pattern, handler) }', tokens: 20 },
    { tier: 'conversation', citation: '[thread:oracle-session-1#3]', text: 'Earlier answer: ServeMux matches the longest pattern.', tokens: 12 },
    { tier: 'map', citation: '[repo-map]', text: 'net/http/server.go:\n  L2040 func (mux *ServeMux) Handle(pattern string, handler Handler)', tokens: 20 },
  ],
  repoMap: 'net/http/server.go:\n  L2040 func (mux *ServeMux) Handle(pattern string, handler Handler)\n  L2700 func Handle(pattern string, handler Handler)\n',
  tokens: 90,
  budget: 6000,
  dropped: [],
};
const req: SynthesisRequest = {
  question: 'How does ServeMux register a handler?',
  analysis: { text: 'How does ServeMux register a handler?', type: 'conceptual', typeReason: 'no specific pattern', symbols: ['ServeMux'], paths: [], languages: ['go'], terms: ['ServeMux', 'register', 'handler'], isLong: false },
  context,
  conversation: 'Subjects: ServeMux, pattern matching. Files: net/http/server.go.',
};
const tools: AgentTool[] = [
  { name: 'find_definition', description: 'Where a symbol is defined.', parameters: { type: 'object' }, run: () => Promise.resolve('') },
  { name: 'read_file_range', description: 'Lines of a workspace file,\n  with line numbers.', parameters: { type: 'object' }, run: () => Promise.resolve('') },
];

describe('oracle prompts', () => {
  it('use exactly the placeholders the engine fills', () => {
    for (const [name, expected] of Object.entries(PLACEHOLDERS)) {
      expect(placeholdersOf(prompts.template(name as PromptName)), name).toEqual(expected);
    }
  });

  it('renders the synthesis messages', () => {
    const messages = synthesisMessages(req, prompts);
    expect(messages.map((m) => m.role)).toEqual(['system', 'user']);
    for (const m of messages) expect(m.content).not.toMatch(/\{\{|\}\}/);
    // The map is its own section: not repeated as a context block.
    expect(messages[1]!.content).not.toContain('### [repo-map]');
    expect(messages[0]!.content).toMatchSnapshot('oracle-system');
    expect(messages[1]!.content).toMatchSnapshot('oracle-synthesis');
  });

  it('renders the synthesis messages of an empty context', () => {
    const empty: SynthesisRequest = { ...req, context: { items: [], repoMap: '', tokens: 0, budget: 6000, dropped: [] } };
    const { conversation: _none, ...noConversation } = empty;
    const user = synthesisMessages(noConversation, prompts)[1]!.content ?? '';
    expect(user).toContain('Earlier in this conversation: (none)');
    expect(user).toContain('Repository map (definitions near the evidence):\n\n(none)');
    expect(user).toContain('Context:\n\n(no context items)');
  });

  it('renders the no-context answer', () => {
    const text = noContextAnswer('Where is the billing exporter?', ['code: bm25, symbols, paths (best score 0.08, needed 0.25)', 'notes: 0 results', 'threads: skipped (no memory)'], prompts, 'no chunk mentions billing');
    expect(text).toContain('Why: no chunk mentions billing.');
    expect(text).not.toMatch(/\{\{|\}\}/);
    expect(text).toMatchSnapshot('oracle-no-context');
  });

  it('renders the rewrite message', () => {
    const messages = rewriteMessages(
      'what calls it?',
      {
        recent: [
          { role: 'user', text: 'Where is ServeMux.Handle defined?' },
          { role: 'assistant', text: 'In net/http/server.go [net/http/server.go:2040].' },
          { role: 'tool', text: '   ' },
        ],
        focus: { symbols: ['ServeMux', 'ServeMux.Handle'], files: ['net/http/server.go'] },
      },
      prompts,
    );
    expect(messages).toHaveLength(1);
    expect(messages[0]!.content).not.toMatch(/\{\{|\}\}/);
    expect(messages[0]!.content).toMatchSnapshot('oracle-rewrite');
  });

  it('renders the agent messages', () => {
    const messages = agentMessages(req, tools, 10, prompts);
    expect(messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(messages[0]!.content).not.toMatch(/\{\{|\}\}/);
    expect(messages[0]!.content).toContain('- read_file_range: Lines of a workspace file, with line numbers.');
    expect(messages[0]!.content).toMatchSnapshot('oracle-agent');
    expect(messages[1]!.content).toBe('How does ServeMux register a handler?');
  });
});
