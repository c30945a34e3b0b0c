// Flat config: typescript-eslint's recommended rules, plus the layering rule that keeps the
// training core a pure library (no service frameworks imported from src/training).
const tseslint = require('typescript-eslint');
const js = require('@eslint/js');

module.exports = tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'src/generated/**', '.scratch/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2022, sourceType: 'module' },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    files: ['src/training/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@nestjs/*', '@prisma/*', 'bullmq', 'ioredis', 'express', 'pg'], message: 'src/training is a pure library: no service imports.' },
            { group: ['../api/*', '../services/*', '../repositories/*', '../config/*'], message: 'src/training must not depend on the service layers.' },
          ],
        },
      ],
    },
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
