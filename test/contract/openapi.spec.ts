import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
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
    expect(document.components.schemas.JobSpec.properties.rollout.properties.groups).toMatchObject({ minimum: 1, maximum: 64 });
    expect(document.paths['/v1/jobs'].post.responses['400'].content['application/problem+json']).toBeDefined();
  });

  it('is a valid OpenAPI 3.1 document by swagger-parser, in the dialect TypeBox writes (JSON Schema 2020-12)', async () => {
    const document = parse(generated);
    expect(document.openapi).toBe('3.1.0');
    expect(generated).toMatch(/\bconst: /);
    // swagger-parser is an ES module Jest cannot load: it runs as a script, as in CI.
    const path = join(tmpdir(), `starlab-openapi-${process.pid}.yaml`);
    writeFileSync(path, generated);
    const { stdout } = await promisify(execFile)(process.execPath, [join(__dirname, '..', '..', 'scripts', 'validate-openapi.js'), path]);
    expect(stdout).toContain('valid OpenAPI 3.1.0');
  });

  it('declares what the HTTP layer answers: the stream as text, the key as an opaque bearer token, the registry’s environment ids', () => {
    const document = parse(generated);
    const stream = document.paths['/v1/jobs/{id}/stream'].get.responses['200'].content;
    expect(Object.keys(stream)).toEqual(['text/event-stream']);
    expect(document.components.schemas[stream['text/event-stream'].schema.$ref.split('/').pop()].type).toBe('string');
    expect(document.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(document.components.securitySchemes.bearer.bearerFormat).not.toMatch(/JWT/);
    const envIds = document.components.schemas.JobSpec.properties.environment.properties.id.anyOf.map((s: { const: string }) => s.const);
    expect(envIds.sort()).toEqual(['bandit', 'frozenlake', 'lookup-qa', 'sokoban']);
    const submit = document.paths['/v1/jobs'].post.responses;
    expect(Object.keys(submit).sort()).toEqual(['200', '201', '400', '401', '413', '415', '422', '429', '500']);
    expect(submit['200'].headers['Idempotent-Replayed'].required).toBe(true);
    expect(submit['429'].headers['Retry-After']).toEqual({ $ref: '#/components/headers/Retry-After' });
    expect(Object.keys(document.paths['/ready'].get.responses)).toEqual(expect.arrayContaining(['200', '503']));
    expect(document.paths['/v1/jobs/{id}'].get.responses['304'].headers.ETag).toBeDefined();
  });
});
