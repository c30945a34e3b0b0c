/**
 * Unit specs live beside the code (src/**), integration and e2e specs in test/. test/capacity
 * (up to hours per case) runs only with STARLAB_CAPACITY=1: `npm run test:capacity`; the
 * learning tests too long for CI's 15 minutes (test/learning-long) only with
 * STARLAB_LONG_LEARNING=1: `npm run test:learning-long`.
 */
const fs = require('fs');
const swcrc = JSON.parse(fs.readFileSync(`${__dirname}/.swcrc`, 'utf8'));

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/src', '<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { ...swcrc, swcrc: false }] },
  moduleFileExtensions: ['ts', 'js', 'json'],
  testTimeout: 60_000,
  // One worker per core (two on the team's machines): the suites are mostly independent processes
  // over their own databases and queue prefixes. STARLAB_TEST_WORKERS overrides it.
  maxWorkers: process.env.STARLAB_TEST_WORKERS ?? '100%',
  testSequencer: '<rootDir>/test/support/sequencer.js',
  testPathIgnorePatterns: [
    '/node_modules/',
    ...(process.env.STARLAB_CAPACITY === '1' ? [] : ['<rootDir>/test/capacity/']),
    ...(process.env.STARLAB_LONG_LEARNING === '1' ? [] : ['<rootDir>/test/learning-long/']),
  ],
};
