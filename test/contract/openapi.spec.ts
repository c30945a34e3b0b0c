import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { generateOpenApiYaml } from '../../src/cli/openapi';

/** openapi.yaml is the contract: it must be exactly what the code generates. */
describe('openapi.yaml', () => {
  let generated: string;
  beforeAll(async () => {
    generated = await generateOpenApiYaml();
  }, 60_000);

  it('equals the document generated from the controllers and schemas (run `npm run openapi` to update)', () => {
    const committed = readFileSync(join(__dirname, '..', '..', 'openapi.yaml'), 'utf8');
    expect(committed).toBe(generated);
  });

  it('documents every route with a unique operation id and problem responses', () => {
    const document = parse(generated);
    const operations = Object.values(document.paths as Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>>).flatMap((path) => Object.values(path));
    const ids = operations.map((op) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(expect.arrayContaining(['submitJob', 'listJobs', 'getJob', 'cancelJob', 'pauseJob', 'resumeJob', 'getJobMetrics', 'listJobEvents', 'streamJobEvents', 'listJobTrajectories', 'listJobCheckpoints', 'downloadCheckpoint', 'listEnvironments', 'listAlgorithms', 'createUser', 'getHealth', 'getReadiness']));
    expect(document.components.schemas.JobSpec.properties.rollout.properties.groups).toMatchObject({ minimum: 1, maximum: 128 });
    expect(document.paths['/v1/jobs'].post.responses['400'].content['application/problem+json']).toBeDefined();
  });
});
