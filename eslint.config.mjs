// Lint enforces the architecture: only src/extension may import `vscode`, and the pure
// core (src/core, src/protocol) and the webview may not import Node built-ins either.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const nodeBuiltins = [
  'fs',
  'path',
  'os',
  'child_process',
  'crypto',
  'http',
  'https',
  'net',
  'stream',
  'url',
  'util',
  'worker_threads',
  'zlib',
  'events',
  'buffer',
  'process',
];

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'node_modules/**', '.vscode-test/**', 'test-results/**', '**/*.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportDefaultDeclaration', message: 'Use named exports (CONTRIBUTING.md, "Conventions").' },
      ],
    },
  },
  {
    files: ['src/core/**/*.ts', 'src/protocol/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'vscode', message: 'src/core and src/protocol are pure: no vscode.' },
            ...nodeBuiltins.map((name) => ({ name, message: 'src/core is pure: no Node built-ins.' })),
          ],
          patterns: [
            { group: ['node:*'], message: 'src/core is pure: no Node built-ins.' },
            {
              group: ['**/extension/**', '**/cli/**', '**/node/**', '**/webview/**'],
              message: 'The core depends on nothing outside itself.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['webview/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'vscode', message: "Can't use vscode in the webview: talk to the host through src/protocol." },
            ...nodeBuiltins.map((name) => ({ name, message: 'The webview runs in a browser.' })),
          ],
          patterns: [
            { group: ['node:*'], message: 'The webview runs in a browser.' },
            {
              group: ['**/extension/**', '**/cli/**', '**/node/**'],
              message: 'The webview imports only core and protocol.',
            },
            // The price list is ≈500 kB minified: the host prices calls and sends the rates, so the webview bundle stays lean.
            {
              group: ['@pydantic/genai-prices', '**/cost/genaiPrices', '**/cost/priceBook'],
              message: 'The webview gets prices from the host (CallRow.cost); it never loads the price library.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/cli/**/*.ts', 'src/node/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [{ name: 'vscode', message: 'Only src/extension imports vscode.' }] },
      ],
    },
  },
  {
    // Build, test and benchmark scripts in plain ESM run in Node: its globals exist there.
    files: ['**/*.mjs'],
    languageOptions: { globals: globals.node },
  },
  {
    // Tool configs must export their config as the default export.
    files: ['eslint.config.mjs', '.vscode-test.mjs'],
    rules: { 'no-restricted-syntax': 'off' },
  },
);
