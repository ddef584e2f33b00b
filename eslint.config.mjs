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
);
