#!/usr/bin/env node
/**
 * Builds native/kernels.cc into native/build/starlab_kernels.node: the matrix products the wasm
 * backend hands to it (src/training/native-kernels.ts). Run by `npm install` / `npm ci` (the
 * package's own "install" script). It needs a C++ compiler and Node's headers, and nothing from
 * the network; when either is missing or the build fails it says so and exits 0: training then
 * runs on the wasm kernels alone, only slower. STARLAB_NATIVE_KERNELS=0 skips it.
 */
const { spawnSync } = require('node:child_process');
const { existsSync, mkdirSync, renameSync, rmSync } = require('node:fs');
const { dirname, join } = require('node:path');

const root = join(__dirname, '..');
const source = join(root, 'native', 'kernels.cc');
const target = join(root, 'native', 'build', 'starlab_kernels.node');

function headers() {
  const candidates = [process.env.STARLAB_NODE_INCLUDE, join(dirname(process.execPath), '..', 'include', 'node'), '/usr/include/node', '/usr/local/include/node'];
  return candidates.find((dir) => dir && existsSync(join(dir, 'node_api.h')));
}

function build() {
  if (process.env.STARLAB_NATIVE_KERNELS === '0') return 'skipped (STARLAB_NATIVE_KERNELS=0)';
  const include = headers();
  if (!include) return "not built: Node's headers (node_api.h) not found; set STARLAB_NODE_INCLUDE";
  const compiler = process.env.CXX || 'g++';
  mkdirSync(dirname(target), { recursive: true });
  const partial = `${target}.partial`;
  // -ffp-contract=off: no fused multiply-add, so sums round as the wasm kernel's do.
  const args = ['-O3', '-std=c++17', '-shared', '-fPIC', '-ffp-contract=off', '-fopenmp', '-Wno-psabi', '-DNODE_GYP_MODULE_NAME=starlab_kernels', `-I${include}`, '-o', partial, source];
  const run = spawnSync(compiler, args, { encoding: 'utf8' });
  if (run.error || run.status !== 0) {
    rmSync(partial, { force: true });
    return `not built (${compiler}: ${run.error ? run.error.message : run.stderr.trim().split('\n').slice(-3).join(' | ')})`;
  }
  renameSync(partial, target);
  return `built ${target}`;
}

let outcome;
try {
  outcome = build();
} catch (error) {
  outcome = `not built (${error.message})`;
}
console.log(`native kernels: ${outcome}${outcome.startsWith('not built') ? '; training uses the wasm kernels' : ''}`);
