/**
 * ESLint rule `starlab/layers`: the import boundaries of docs/layers.md, checked on the
 * resolved path, so `../../services/errors` from src/training/signals/ is caught like
 * `../services/errors`. Type-only imports count: a type is a dependency too.
 */
const path = require('node:path');

const SRC = path.resolve(__dirname, '..', 'src');

/** Which layers each layer may import (its own always); '*' = any (the processes and modules that wire them). */
const LAYERS = {
  training: { may: [], why: 'the training core is a pure library that knows nothing of the service' },
  contracts: { may: ['training'], why: 'contracts are plain schemas, shared by the API and the services' },
  config: { may: ['training'], why: 'configuration is read first and depends on no layer of the service' },
  repositories: { may: ['config', 'contracts', 'training', 'generated'], why: 'repositories are adapters to the outside world and call no service' },
  services: { may: ['repositories', 'contracts', 'config', 'training'], why: 'services hold the rules, and HTTP is the API’s business' },
  api: { may: ['services', 'contracts', 'config', 'training'], why: 'the API reaches storage and queues only through services' },
  worker: { may: ['services', 'repositories', 'contracts', 'config', 'training'], why: 'the worker serves no HTTP' },
  cli: { may: '*' },
  root: { may: '*' },
};

/** Layers that may use only these packages (prefixes; `node:` = Node's built-ins). */
const ONLY_PACKAGES = {
  training: ['@tensorflow/', '@sinclair/', 'node:'],
  contracts: ['@sinclair/'],
};

/** One owner per external system: these packages only in these layers. */
const OWNERS = [
  { packages: ['@prisma/', 'pg', 'bullmq', 'ioredis'], layers: ['repositories'], rule: 'only src/repositories talks to Postgres and Redis' },
  { packages: ['node:http', 'node:https', 'node:net', 'node:tls', 'node:dns', 'http', 'https', 'net', 'tls', 'dns', 'undici', 'ws'], layers: ['repositories'], rule: 'only src/repositories opens network connections' },
  { packages: ['express', '@nestjs/platform-express', '@nestjs/swagger', 'swagger-ui-express'], layers: ['api', 'cli', 'root'], rule: 'only src/api (and the processes that start it) serves HTTP' },
];

const matches = (specifier, name) => (name.endsWith('/') || name.endsWith(':') ? specifier.startsWith(name) : specifier === name || specifier.startsWith(`${name}/`));

/** The layer of an absolute path: its first folder under src/ ('root' for src/*.ts), null outside src/. */
function layerOf(file) {
  const relative = path.relative(SRC, file);
  if (relative.startsWith('..') || path.isAbsolute(relative)) return null;
  const parts = relative.split(path.sep);
  return parts.length === 1 ? 'root' : parts[0];
}

const isSpec = (file) => /\.spec\.ts$/.test(file);

/** Why `specifier`, imported from `file`, breaks a boundary; null when it does not. */
function violation(file, specifier) {
  const from = layerOf(file);
  if (!from || !LAYERS[from]) return null;
  if (specifier.startsWith('.')) {
    const target = path.resolve(path.dirname(file), specifier);
    const to = layerOf(target);
    if (to === null) return isSpec(file) ? null : `src/${from} may not import ${specifier}: code outside src/ (tests, benches) is not part of the service`;
    const { may, why } = LAYERS[from];
    if (to === from || may === '*' || may.includes(to)) return null;
    return `src/${from} may not import src/${to === 'root' ? '' : to} (${specifier}): ${why}`;
  }
  const only = ONLY_PACKAGES[from];
  if (only && !only.some((name) => matches(specifier, name))) return `src/${from} may not import the package ${specifier}: only ${only.join(', ')}`;
  for (const owner of OWNERS) {
    if (owner.packages.some((name) => matches(specifier, name)) && !owner.layers.includes(from)) {
      return `src/${from} may not import ${specifier}: ${owner.rule}`;
    }
  }
  return null;
}

const rule = {
  meta: { type: 'problem', docs: { description: 'import boundaries between the layers of src/ (docs/layers.md)' }, schema: [] },
  create(context) {
    const file = context.filename ?? context.getFilename();
    const check = (node) => {
      if (!node || node.type !== 'Literal' || typeof node.value !== 'string') return;
      const message = violation(file, node.value);
      if (message) context.report({ node, message });
    };
    return {
      ImportDeclaration: (node) => check(node.source),
      ExportNamedDeclaration: (node) => check(node.source),
      ExportAllDeclaration: (node) => check(node.source),
      ImportExpression: (node) => check(node.source),
      TSImportEqualsDeclaration: (node) => check(node.moduleReference?.expression),
      CallExpression: (node) => {
        if (node.callee.type === 'Identifier' && node.callee.name === 'require' && node.arguments.length === 1) check(node.arguments[0]);
      },
    };
  },
};

module.exports = { rules: { layers: rule }, LAYERS, OWNERS, ONLY_PACKAGES, violation };
