import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { listEnvironments } from '../../src/training/envs/registry';
import { parseJobSpec } from '../../src/training/spec/validate';

const DIR = join(__dirname, '..', '..', 'examples');

/** examples/ holds a valid job spec for every environment, so a newcomer can submit any of them as is. */
describe('examples/', () => {
  const examples = readdirSync(DIR)
    .filter((f) => f.endsWith('.json'))
    .map((file) => ({ file, spec: parseJobSpec(JSON.parse(readFileSync(join(DIR, file), 'utf8'))) }));

  it('has one valid spec per environment, named after it', () => {
    expect(examples.map((e) => e.spec.environment.id).sort()).toEqual(listEnvironments().map((e) => e.id).sort());
    for (const { file, spec } of examples) expect(file).toBe(`${spec.environment.id}.json`);
  });
});
