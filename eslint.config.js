// Flat config: typescript-eslint's recommended rules, plus the layer boundaries of src/ (lint/layers.js).
const tseslint = require('typescript-eslint');
const js = require('@eslint/js');
const layers = require('./lint/layers');

module.exports = tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'src/generated/**', 'test/client/generated/**', '.scratch/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2022, sourceType: 'module' },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  // The layers of src/ and the one owner of each external system (docs/layers.md).
  { files: ['src/**/*.ts'], plugins: { starlab: layers }, rules: { 'starlab/layers': 'error' } },
  {
    files: ['src/**/*.ts'],
    // The starlab client's one HTTP adapter: it calls a StarLab server, it is not part of one.
    ignores: ['src/repositories/**', 'src/cli/client/api-client.ts'],
    rules: { 'no-restricted-globals': ['error', { name: 'fetch', message: 'outbound HTTP belongs to src/repositories (WebhookTransport).' }] },
  },
  {
    files: ['**/*.js'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: Object.fromEntries(['require', 'module', '__dirname', 'process', 'console', 'fetch', 'setTimeout', 'URL', 'Buffer'].map((name) => [name, 'readonly'])),
    },
  },
  // The web dashboard: ES modules that run in the browser.
  {
    files: ['src/dashboard/**/*.js'],
    languageOptions: { sourceType: 'module', globals: { ...require('globals').browser } },
  },
  // JSON bodies in end-to-end tests are checked field by field; typing each response adds nothing.
  { files: ['test/**/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
);
