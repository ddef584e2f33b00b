// @ts-check
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'test/fixtures/**', '.vlt/**', '.bench/**', '**/*.mjs', '**/*.js', '**/*.cjs'] },
  ...tseslint.configs.recommended,
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'webview/**/*.ts'],
    languageOptions: {
      parserOptions: { project: ['./tsconfig.json', './tsconfig.vscode.json', './webview/tsconfig.json'], tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // An unawaited promise loses its error and races the rest of the program.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // The engine must stay host-neutral: no editor API, no DOM, no host wiring.
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'vscode', message: 'src/core must not depend on the VS Code API.' }],
          patterns: [
            { group: ['**/cli/**', '**/mcp/**', '**/vscode/**', '**/node/**', '**/webview/**'], message: 'src/core must not import a host.' },
          ],
        },
      ],
    },
  },
  {
    // The extension is a thin client of `vlt lsp`: the engine never loads in the extension host.
    files: ['src/vscode/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/core/**', '**/node/**', '**/server/**', '**/mcp/**', '**/cli/**'], message: 'src/vscode talks to its server through src/lsp/protocol only.' },
            { group: ['**/lsp/*', '!**/lsp/protocol'], message: 'src/vscode may import src/lsp/protocol only.' },
          ],
        },
      ],
    },
  },
  // The hosts' layers: core ← node ← server ← {mcp, lsp} ← {daemon, cli}. A layer imports only
  // those below it (lsp serves MCP beside the editor, so it may start mcp's endpoint); the
  // extension and the webview speak the protocol only.
  ...[
    ['src/node/**/*.ts', ['server', 'mcp', 'lsp', 'daemon', 'cli', 'vscode'], 'src/node adapts the core to Node; it knows no server or host.'],
    ['src/server/**/*.ts', ['mcp', 'lsp', 'daemon', 'cli', 'vscode'], 'src/server is the workspace server core the hosts share; it imports no host.'],
    ['src/mcp/**/*.ts', ['lsp', 'daemon', 'cli', 'vscode'], 'src/mcp is one host over src/server; it imports no other host.'],
    ['src/lsp/**/*.ts', ['daemon', 'cli', 'vscode'], 'src/lsp is one host over src/server (with mcp for its endpoint); it imports no other host.'],
  ].map(([files, above, message]) => ({
    files: [files],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: [...above.map((d) => `**/${d}/**`), '**/webview/**'], message }] }],
    },
  })),
  {
    // The chat UI runs in a webview or a browser: the protocol's types and the citation parser only.
    files: ['webview/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/src/*/**', '!**/src/lsp', '!**/src/lsp/protocol', '!**/src/core', '!**/src/core/oracle', '!**/src/core/oracle/citations'],
              message: 'webview/ imports src/lsp/protocol and src/core/oracle/citations only.',
            },
          ],
        },
      ],
    },
  },
);
