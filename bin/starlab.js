#!/usr/bin/env node
// The `starlab` command. In a checkout with its dev dependencies it runs the TypeScript sources
// (through scripts/register.js, so it is never older than the code); elsewhere (an installed
// package, the Docker image) the build in dist/ from `npm run build`.
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const source = join(__dirname, '..', 'src', 'cli', 'starlab.ts');
const loader = join(__dirname, '..', 'scripts', 'register.js');
const canRunSource = () => {
  try {
    return existsSync(source) && existsSync(loader) && Boolean(require.resolve('@swc/core'));
  } catch {
    return false;
  }
};
if (canRunSource()) {
  require(loader);
  require(source);
} else {
  require(join(__dirname, '..', 'dist', 'src', 'cli', 'starlab.js'));
}
