// @ts-check
import tseslint from 'typescript-eslint';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';

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
    // No module imports itself through others (type-only imports included): a circle makes load
    // order matter and hides which module is the lower layer. A lazy `import()` is how a bundle
    // defers loading a part, so it does not count.
    files: ['src/**/*.ts', 'webview/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.json'] })],
      'import-x/extensions': ['.ts'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: { 'import-x/no-cycle': ['error', { allowUnsafeDynamicCyclicDependency: true }] },
  },
  {
    // A function a newcomer can read in one screen; a longer one says why where it starts
    // (an eslint-disable-next-line comment with its reason).
    files: ['src/**/*.ts', 'webview/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true, IIFEs: true }] },
  },
  {
    // The engine must stay host-neutral: no editor API, no DOM, no host wiring.
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'vscode', message: 'src/core must not depend on the VS Code API.' }],
          patterns: [{ group: ['**/cli/**', '**/mcp/**', '**/lsp/**', '**/daemon/**', '**/server/**', '**/vscode/**', '**/node/**', '**/webview/**'], message: 'src/core must not import a host.' }],
        },
      ],
    },
  },
  {
    // The wire types every front-end shares: a leaf.
    files: ['src/protocol/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'vscode', message: 'src/protocol is a leaf: types and message constants only.' }],
          patterns: [{ group: ['**/core/**', '**/node/**', '**/server/**', '**/mcp/**', '**/lsp/**', '**/daemon/**', '**/cli/**', '**/vscode/**', '**/webview/**'], message: 'src/protocol is a leaf: it imports nothing of this project.' }],
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
            { group: ['**/core/**', '**/node/**', '**/server/**', '**/mcp/**', '**/lsp/**', '**/daemon/**', '**/cli/**', '**/webview/**'], message: 'src/vscode talks to its server through src/protocol only.' },
          ],
        },
      ],
    },
  },
  // The hosts' layers: protocol (a leaf) and core ← node ← server ← {mcp, lsp, daemon} ← cli.
  // A layer imports only those below it; the three hosts over the server know nothing of each
  // other (the CLI, the one program, wires them together); the extension and the webview speak
  // the protocol only.
  ...[
    ['src/node/**/*.ts', ['server', 'mcp', 'lsp', 'daemon', 'cli', 'vscode'], 'src/node adapts the core to Node; it knows no server or host.'],
    ['src/server/**/*.ts', ['mcp', 'lsp', 'daemon', 'cli', 'vscode'], 'src/server is the workspace server core the hosts share; it imports no host.'],
    ['src/mcp/**/*.ts', ['lsp', 'daemon', 'cli', 'vscode'], 'src/mcp is one host over src/server; it imports no other host.'],
    ['src/lsp/**/*.ts', ['mcp', 'daemon', 'cli', 'vscode'], 'src/lsp is one host over src/server; it imports no other host (the program gives it the MCP endpoint).'],
    ['src/daemon/**/*.ts', ['mcp', 'lsp', 'cli', 'vscode'], 'src/daemon is one host over src/server; it imports no other host (the program gives it what it serves).'],
    ['src/cli/**/*.ts', ['vscode'], 'src/cli is the program; it never loads the editor extension.'],
  ].map(([files, above, message]) => ({
    files: [files],
    rules: {
      'no-restricted-imports': ['error', { paths: [{ name: 'vscode', message }], patterns: [{ group: [...above.map((d) => `**/${d}/**`), '**/webview/**'], message }] }],
    },
  })),
  {
    // The chat UI runs in a webview or a browser: the protocol only (its types and the citation parser).
    files: ['webview/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/src/*/**', '!**/src/protocol', '!**/src/protocol/*'],
              message: 'webview/ imports src/protocol only.',
            },
          ],
        },
      ],
    },
  },
);
