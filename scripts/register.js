/**
 * Runs the TypeScript sources in Node (`node -r ./scripts/register.js src/worker.ts`): each .ts file
 * is transpiled by swc with the repository's .swcrc, and the result kept on disk under
 * node_modules/.cache/starlab-swc, keyed by the file's content and the options. A process that
 * starts again (a test's worker, the CLI) reads what an earlier one transpiled instead of
 * transpiling the whole service again, which took most of its start-up time.
 *
 * Types are not checked here (`npm run typecheck` does that), as with any transpile-only loader.
 * The output carries inline source maps; Node reads them only when asked (`node --enable-source-maps`
 * or NODE_OPTIONS), since reading them on every start costs about 0.4 s of CPU.
 */
const { createHash } = require('node:crypto');
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const Module = require('node:module');

const ROOT = join(__dirname, '..');
const CACHE = process.env.STARLAB_SWC_CACHE || join(ROOT, 'node_modules', '.cache', 'starlab-swc');
const swcrc = JSON.parse(readFileSync(join(ROOT, '.swcrc'), 'utf8'));
const OPTIONS = { ...swcrc, swcrc: false, sourceMaps: 'inline' };
const VERSION = createHash('sha1').update(JSON.stringify(OPTIONS)).update(require('@swc/core/package.json').version).digest('hex');

let swc = null;
function transpile(source, filename) {
  const key = createHash('sha1').update(VERSION).update(filename).update(source).digest('hex');
  const cached = join(CACHE, key.slice(0, 2), `${key}.js`);
  try {
    return readFileSync(cached, 'utf8');
  } catch {
    // Not transpiled yet.
  }
  swc ??= require('@swc/core');
  const { code } = swc.transformSync(source, { ...OPTIONS, filename });
  try {
    mkdirSync(join(CACHE, key.slice(0, 2)), { recursive: true });
    // Written aside and renamed, so a process starting alongside never reads half a file.
    const partial = `${cached}.${process.pid}`;
    writeFileSync(partial, code);
    renameSync(partial, cached);
  } catch {
    // A read-only tree: transpile each time.
  }
  return code;
}

Module._extensions['.ts'] = function loadTypeScript(module, filename) {
  module._compile(transpile(readFileSync(filename, 'utf8'), filename), filename);
};
