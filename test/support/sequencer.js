/**
 * Runs the longest suites first, so that with several Jest workers the run ends when the last
 * short suite does rather than when a learning test started late does. A clean clone has no
 * timing cache, so the order comes from where a suite lives (and, within test/learning, from
 * the measured order of their lengths), then from file size as Jest's own sequencer does.
 */
const Sequencer = require('@jest/test-sequencer').default;
const { statSync } = require('node:fs');
const { relative } = require('node:path');

const ROOT = `${__dirname}/../..`;
/** Path prefixes from the slowest kind of suite to the fastest. */
const TIERS = [
  'test/learning-long/',
  'test/learning/frozenlake-format',
  'test/learning/frozenlake',
  'test/learning/',
  'test/faults/',
  'test/e2e/dashboard',
  'test/cli/',
  'test/e2e/',
  'test/integration/',
  'test/contract/',
  'src/training/trainer',
];

function tier(path) {
  const index = TIERS.findIndex((prefix) => path.startsWith(prefix));
  return index < 0 ? TIERS.length : index;
}

class LongestFirst extends Sequencer {
  sort(tests) {
    const keyed = tests.map((test) => ({ test, path: relative(ROOT, test.path), size: statSync(test.path).size }));
    keyed.sort((a, b) => tier(a.path) - tier(b.path) || b.size - a.size);
    return keyed.map((k) => k.test);
  }
}

module.exports = LongestFirst;
