import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { REMOTE_BOUNDS } from '../../src/training/envs/remote-bounds';
import { MAX_MANIFEST_TURNS } from '../../src/training/envs/remote/protocol';
import { evaluationSeed } from '../../src/training/seeds';
import { RolloutSchema } from '../../src/training/spec/job-spec';

const ROOT = join(__dirname, '..', '..');
const PATH = join(ROOT, 'docs', 'environment-protocol.yaml');

/**
 * docs/environment-protocol.yaml is what environment authors validate their servers against: it
 * must say exactly the protocol docs/environments.md describes, with the bounds the clients enforce.
 */
describe('docs/environment-protocol.yaml', () => {
  const document = parse(readFileSync(PATH, 'utf8'));
  const schemas = document.components.schemas;
  const required = (name: string) => [...schemas[name].required].sort();

  it('is a valid OpenAPI 3.1 document by swagger-parser (Redocly lints it in .ci/run)', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [join(ROOT, 'scripts', 'validate-openapi.js'), PATH]);
    expect(stdout).toContain('valid OpenAPI 3.1.0');
  });

  it('has the protocol’s six requests and no other', () => {
    const operations = Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`));
    expect(operations.sort()).toEqual(['GET /manifest', 'POST /close', 'POST /expert', 'POST /fork', 'POST /reset', 'POST /step']);
  });

  it('requires the fields of the table and types them', () => {
    expect(required('Manifest')).toEqual(['actions']);
    expect(Object.keys(schemas.Manifest.properties).sort()).toEqual(['actions', 'description', 'expert', 'maxTurns', 'vocabulary']);
    expect(required('ResetRequest')).toEqual(['seed']);
    expect(required('ResetAnswer')).toEqual(['observation', 'session']);
    expect(required('StepRequest')).toEqual(['action', 'session']);
    expect(required('StepAnswer')).toEqual(['done', 'observation', 'reward']);
    expect(schemas.StepAnswer.properties).toMatchObject({ reward: { type: 'number' }, done: { type: 'boolean' }, success: { type: 'boolean' } });
    expect(required('ActionList')).toEqual(['actions']);
    expect(required('SessionAnswer')).toEqual(['session']);
    expect(schemas.Manifest.properties.expert.default).toBe(false);
  });

  it('says that success defaults to reward > 0 on the step that ends the episode', () => {
    expect(schemas.StepAnswer.properties.success.description).toMatch(/reward > 0. on the step that ends the episode/);
  });

  it('states the bounds of REMOTE_BOUNDS, and the manifest’s maxTurns bound is the job spec’s', () => {
    expect(schemas.Observation.maxLength).toBe(REMOTE_BOUNDS.observationChars);
    expect(schemas.ActionSet.maxItems).toBe(REMOTE_BOUNDS.actions);
    expect(schemas.ActionList.properties.actions.maxItems).toBe(REMOTE_BOUNDS.actions);
    expect(schemas.Action.maxLength).toBe(REMOTE_BOUNDS.actionChars);
    expect([schemas.StepAnswer.properties.reward.minimum, schemas.StepAnswer.properties.reward.maximum]).toEqual([-REMOTE_BOUNDS.reward, REMOTE_BOUNDS.reward]);
    expect(schemas.Session.maxLength).toBe(REMOTE_BOUNDS.sessionChars);
    expect(schemas.Manifest.properties.vocabulary.maxItems).toBe(REMOTE_BOUNDS.vocabularyWords);
    expect(schemas.Manifest.properties.vocabulary.items.maxLength).toBe(REMOTE_BOUNDS.wordChars);
    expect(schemas.Manifest.properties.description.maxLength).toBe(REMOTE_BOUNDS.descriptionChars);
    expect(schemas.Manifest.properties.maxTurns.maximum).toBe(REMOTE_BOUNDS.maxTurns);
    expect(REMOTE_BOUNDS.maxTurns).toBe(RolloutSchema.properties.maxTurns.maximum);
    expect(REMOTE_BOUNDS.observationChars).toBe(16 * 1024);
    expect(schemas.ResetRequest.properties.seed.maximum).toBe(REMOTE_BOUNDS.maxSeed);
    expect(evaluationSeed(1023)).toBeLessThanOrEqual(REMOTE_BOUNDS.maxSeed);
  });

  it('caps a manifest’s maxTurns where the client does (MAX_MANIFEST_TURNS); the client’s other limits are REMOTE_BOUNDS itself', () => {
    expect(MAX_MANIFEST_TURNS).toBe(REMOTE_BOUNDS.maxTurns);
  });
});
