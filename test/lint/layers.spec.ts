import { ESLint } from 'eslint';
import { join } from 'node:path';

/**
 * The layer boundaries are enforced by `npm run lint` (lint/layers.js, docs/layers.md): each
 * snippet is linted with the project's own config as if it were the file named, and a forbidden
 * import must be an error, however deep its relative path.
 */
describe('lint: layer boundaries', () => {
  const root = join(__dirname, '..', '..');
  // The project's eslint.config.js, required rather than found: ESLint's own loader imports it
  // dynamically, which Jest's module sandbox does not allow.
  const eslint = new ESLint({ cwd: root, overrideConfigFile: true, overrideConfig: require(join(root, 'eslint.config.js')) });
  const problems = async (filePath: string, code: string) => {
    const [result] = await eslint.lintText(code, { filePath });
    return result.messages.map((m) => `${m.ruleId}: ${m.message}`);
  };

  const forbidden: [file: string, code: string, message: string][] = [
    ['src/training/signals/fixture.ts', "import { ValidationFailed } from '../../services/errors';\nexport const x = ValidationFailed;\n", 'src/training may not import src/services (../../services/errors)'],
    ['src/training/fixture.ts', "import { loadConfig } from '../config/config';\nexport const x = loadConfig;\n", 'src/training may not import src/config'],
    ['src/training/policy/fixture.ts', "import { Injectable } from '@nestjs/common';\nexport const x = Injectable;\n", 'src/training may not import the package @nestjs/common'],
    ['src/services/fixture.ts', "import type { Problem } from '../api/problem.filter';\nexport type X = Problem;\n", 'src/services may not import src/api (../api/problem.filter)'],
    ['src/services/fixture.ts', "import type { Response } from 'express';\nexport type X = Response;\n", 'src/services may not import express'],
    ['src/services/fixture.ts', "import IORedis from 'ioredis';\nexport const x = IORedis;\n", 'src/services may not import ioredis: only src/repositories talks to Postgres and Redis'],
    ['src/api/fixture.ts', "import { JobRepository } from '../repositories/job.repository';\nexport const x = JobRepository;\n", 'src/api may not import src/repositories'],
    ['src/repositories/fixture.ts', "import { withRetry } from '../services/retry';\nexport const x = withRetry;\n", 'src/repositories may not import src/services'],
    ['src/repositories/fixture.ts', "export { ApiKeyGuard } from '../api/auth.guard';\n", 'src/repositories may not import src/api'],
    ['src/contracts/fixture.ts', "import { NotFound } from '../services/errors';\nexport const x = NotFound;\n", 'src/contracts may not import src/services'],
    ['src/worker/fixture.ts', "const http = require('../api/http');\nexport const x = http;\n", 'src/worker may not import src/api'],
    ['src/services/fixture.ts', "export const x = () => import('../worker/job-runner.service');\n", 'src/services may not import src/worker'],
    ['src/services/fixture.ts', "import { createServer } from 'node:http';\nexport const x = createServer;\n", 'only src/repositories opens network connections'],
    ['src/config/fixture.ts', "import { x } from '../../test/support/stack';\nexport const y = x;\n", 'code outside src/'],
  ];
  const specifier = (code: string) => /'([^']+)'/.exec(code)![1];

  it.each(forbidden.map(([file, code, message]) => [file, specifier(code), code, message]))('%s: importing %s is an error', async (filePath, _specifier, code, message) => {
    const found = await problems(filePath, code);
    expect(found).toEqual([expect.stringContaining(message)]);
    expect(found[0]).toMatch(/^starlab\/layers: /);
  });

  it('refuses fetch outside src/repositories', async () => {
    expect(await problems('src/services/fixture.ts', "export const x = () => fetch('http://127.0.0.1/');\n")).toEqual([expect.stringMatching(/^no-restricted-globals: .*fetch.*src\/repositories/)]);
  });

  const allowed: [file: string, code: string][] = [
    ['src/api/fixture.ts', "import { JobService } from '../services/job.service';\nimport { JobSchema } from '../contracts/jobs.dto';\nexport const x = [JobService, JobSchema];\n"],
    ['src/services/fixture.ts', "import { JobRepository } from '../repositories/job.repository';\nimport { parseJobSpec } from '../training/spec/validate';\nexport const x = [JobRepository, parseJobSpec];\n"],
    ['src/repositories/fixture.ts', "import type { AuditAction } from '../contracts/audit.dto';\nimport { PrismaClient } from '../generated/prisma/client';\nimport IORedis from 'ioredis';\nexport const x = [PrismaClient, IORedis];\nexport type A = AuditAction;\n"],
    ['src/worker/fixture.ts', "import { withRetry } from '../services/retry';\nimport { QueueRepository } from '../repositories/queue.repository';\nexport const x = [withRetry, QueueRepository];\n"],
    ['src/training/signals/fixture.ts', "import * as tf from '@tensorflow/tfjs';\nimport { Rng } from '../random';\nimport { join } from 'node:path';\nexport const x = [tf, Rng, join];\n"],
    ['src/training/envs/fixture.spec.ts', "import { expectIndependentClone } from '../../../test/support/env-checks';\nexport const x = expectIndependentClone;\n"],
    ['src/main-fixture.ts', "import { JobRepository } from './repositories/job.repository';\nimport { ApiModule } from './api.module';\nexport const x = [JobRepository, ApiModule];\n"],
  ];

  it.each(allowed)('%s: its layer\'s allowed imports pass', async (filePath, code) => {
    expect(await problems(filePath, code)).toEqual([]);
  });
});
