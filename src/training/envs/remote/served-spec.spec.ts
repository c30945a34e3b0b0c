import { SpecValidationError } from '../../spec/errors';
import { parseJobSpec } from '../../spec/validate';
import { readServerAddress } from './address';
import { readManifest } from './protocol';
import { servedEnvDefinition } from './remote-env';
import type { RemoteSessions } from './sessions';

/** A served definition over sessions that are never called: job specs only read the manifest. */
function served(options: { expert: boolean; fork: boolean }) {
  const manifest = readManifest('maze', { actions: ['north', 'south'], maxTurns: 7, expert: options.expert });
  const sessions = { environment: 'maze', manifest } as RemoteSessions;
  return servedEnvDefinition(sessions, { url: 'http://127.0.0.1:1', protocol: 'starlab', digest: 'd', fork: options.fork, observationTokens: 12 });
}

const fieldsOf = (run: () => unknown): string[] => {
  try {
    run();
  } catch (error) {
    return (error as SpecValidationError).errors.map((e) => e.field);
  }
  return [];
};

describe('job specs on a served environment', () => {
  it('default to the format warm-up with self-imitation and one action per turn without an expert, and to demonstrations with one', () => {
    const bare = parseJobSpec({ environment: { id: 'maze' }, algorithm: { id: 'starpo-s' } }, served({ expert: false, fork: false }));
    expect([bare.training.warmup.kind, bare.algorithm.config.selfImitationSteps, bare.rollout.maxTurns, bare.rollout.maxActionsPerTurn]).toEqual(['format', 16, 7, 1]);
    const taught = parseJobSpec({ environment: { id: 'maze' }, algorithm: { id: 'starpo-s' } }, served({ expert: true, fork: false }));
    expect([taught.training.warmup.kind, taught.training.warmup.steps, taught.rollout.maxActionsPerTurn]).toEqual(['demonstrations', 400, 5]);
    // The job's own value wins over the recipe's.
    expect(parseJobSpec({ environment: { id: 'maze' }, algorithm: { id: 'starpo-s' }, rollout: { maxActionsPerTurn: 3 } }, served({ expert: false, fork: false })).rollout.maxActionsPerTurn).toBe(3);
  });

  it('refuse demonstrations without an expert, branching presets without fork, and a config', () => {
    const bare = served({ expert: false, fork: false });
    expect(fieldsOf(() => parseJobSpec({ environment: { id: 'maze' }, algorithm: { id: 'starpo-s' }, training: { warmup: { kind: 'demonstrations' } } }, bare))).toEqual(['training.warmup.kind']);
    for (const preset of ['arpo', 'aepo']) expect(fieldsOf(() => parseJobSpec({ environment: { id: 'maze' }, algorithm: { id: preset } }, bare))).toEqual(['algorithm.id']);
    expect(fieldsOf(() => parseJobSpec({ environment: { id: 'maze' }, algorithm: { id: 'arpo' } }, served({ expert: false, fork: true })))).toEqual([]);
    expect(fieldsOf(() => parseJobSpec({ environment: { id: 'maze', config: { url: 'http://elsewhere' } }, algorithm: { id: 'dapo' } }, bare))).toEqual(['environment.config.url']);
    // Without the definition, the id is unknown.
    expect(fieldsOf(() => parseJobSpec({ environment: { id: 'maze' }, algorithm: { id: 'dapo' } }))).toEqual(['environment.id']);
  });
});

describe('a server address in a job spec run without the service', () => {
  it('reads the StarLab form and the OpenEnv form, its WebSocket URL back to the server’s base', () => {
    expect(readServerAddress('starlab', { url: 'http://127.0.0.1:8765' }, 'environment.config')).toEqual({ address: { protocol: 'starlab', url: 'http://127.0.0.1:8765' }, errors: [] });
    const openenv = readServerAddress('openenv', { url: 'ws://127.0.0.1:8000/ws', observationField: 'text', actionField: 'move', actions: ['Up', 'Down'], maxTurns: 4 }, 'environment.config');
    expect(openenv.address).toEqual({ protocol: 'openenv', url: 'http://127.0.0.1:8000', mapping: { observationField: 'text', actionField: 'move', actions: ['Up', 'Down'], maxTurns: 4 } });
  });

  it('names every bad field', () => {
    const fields = (protocol: 'starlab' | 'openenv', value: unknown) => readServerAddress(protocol, value, 'environment.config').errors.map((e) => e.field);
    expect(fields('starlab', { url: 'file:///etc/passwd', token: 'x' })).toEqual(['environment.config.token', 'environment.config.url']);
    expect(fields('starlab', 'http://x')).toEqual(['environment.config']);
    expect(fields('openenv', { url: 'ws://x/ws', observationField: 'a b', actions: [] })).toEqual(['environment.config.observationField', 'environment.config.actionField', 'environment.config.actions']);
    expect(fields('openenv', { url: 'ws://x/ws', observationField: 'text', actionField: 'move', actions: Array.from({ length: 300 }, (_, i) => `a${i}`) })).toEqual(['environment.config.actions']);
  });
  it('refuses a manifest whose action is a word StarLab keeps for itself, saying what to name it instead', () => {
    // "3" is a reward digit of the history, "||" the action separator, "<EOS>" the end token in any case.
    for (const action of ['3', '-', '||', '<EOS>', '<answer>']) {
      expect(() => readManifest('quiz', { actions: ['a1', action] })).toThrow(`environment 'quiz': GET /manifest was answered badly: "actions" names "${action}", one of the tokens StarLab keeps for itself`);
    }
    expect(() => readManifest('quiz', { actions: ['3'] })).toThrow(/name the action in words \("three"\) or with a prefix \("a3"\)/);
    // Words that only contain a digit, or look like a tag, are actions like any other.
    expect(readManifest('quiz', { actions: ['a3', '12', 'x-y', '<go>'] }).actions).toEqual(['a3', '12', 'x-y', '<go>']);
  });
});
