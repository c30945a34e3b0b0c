import { contextsFor, tokenizerFor } from '../episode-io';
import { evaluate } from '../evaluate';
import { RandomFormatPolicy } from '../policy/policy';
import { Rng } from '../random';
import { parseJobSpec } from '../spec/validate';
import { getEnvDefinition } from './registry';
import { SokobanEnv, type SokobanConfig } from './sokoban';
import { carveTopology, generateSokobanRoom } from './sokoban-generator';
import { solveSokoban } from './sokoban-solver';

const SEEDS = 1000;

function optimalLengths(config: Partial<SokobanConfig>, seeds: number): number[] {
  const env = new SokobanEnv(config);
  return Array.from({ length: seeds }, (_, seed) => {
    env.reset(seed);
    const plan = solveSokoban(env.state, 50);
    if (plan === null) throw new Error(`seed ${seed}: unsolvable\n${env.render()}`);
    return plan.length;
  });
}

describe("generateSokobanRoom (RAGEN's generator)", () => {
  it(`matches RAGEN's rooms over ${SEEDS} seeds: mean optimal solution ≈ 3.95 moves, 5–17% one-move rooms`, () => {
    const lengths = optimalLengths({}, SEEDS);
    const histogram: Record<number, number> = {};
    for (const length of lengths) histogram[length] = (histogram[length] ?? 0) + 1;
    const mean = lengths.reduce((a, b) => a + b, 0) / SEEDS;
    const oneMove = (histogram[1] ?? 0) / SEEDS;
    console.log(`RAGEN rooms, 6×6, 1 box, ${SEEDS} seeds: optimal solution lengths ${JSON.stringify(histogram)}; mean ${mean.toFixed(3)}, one-move ${(100 * oneMove).toFixed(1)}%`);
    expect(Math.abs(mean - 3.95)).toBeLessThanOrEqual(0.3);
    expect(oneMove).toBeGreaterThanOrEqual(0.05);
    expect(oneMove).toBeLessThanOrEqual(0.17);
    expect(Math.min(...lengths)).toBeGreaterThanOrEqual(1);
  });

  it('is solved by a random well-formed agent (1–5 uniform actions a turn, 5 turns, 10 actions) about 18% of the time', async () => {
    const spec = parseJobSpec({ environment: { id: 'sokoban' }, algorithm: { id: 'starpo-s' } });
    expect(spec.rollout).toMatchObject({ maxTurns: 5, maxActionsPerTurn: 5, maxActionsPerEpisode: 10 });
    const definition = getEnvDefinition('sokoban');
    const tokenizer = tokenizerFor(definition, spec);
    const random = new RandomFormatPolicy(tokenizer, () => definition.actionNames, spec.rollout.maxActionsPerTurn, spec.rollout.think, new Rng(7));
    const result = await evaluate(random, definition, spec.environment.config, spec.rollout, tokenizer, contextsFor(tokenizer, spec), SEEDS);
    console.log(`random agent on ${SEEDS} RAGEN rooms: success ${result.success.toFixed(3)}`);
    expect(Math.abs(result.success - 0.18)).toBeLessThanOrEqual(0.04);
  });

  it('makes solvable rooms with the player off the boxes for larger configs', () => {
    for (const [config, seeds] of [[{ width: 8, height: 8, boxes: 2 }, 40], [{ width: 7, height: 7, boxes: 2, searchDepth: 30 }, 40]] as const) {
      const env = new SokobanEnv(config);
      for (let seed = 0; seed < seeds; seed++) {
        env.reset(seed);
        expect(env.state.boxes.length).toBe(config.boxes);
        expect(env.state.boxes).not.toContain(env.state.player);
        expect(solveSokoban(env.state, 60)).not.toBeNull();
      }
    }
  });

  it('walls the border in whatever the masks carved', () => {
    const walls = carveTopology(6, 6, new Rng(4));
    for (let cell = 0; cell < 36; cell++) {
      const [row, col] = [Math.floor(cell / 6), cell % 6];
      if (row === 0 || col === 0 || row === 5 || col === 5) expect(walls[cell]).toBe(true);
    }
    expect(walls.filter((wall) => !wall).length).toBeGreaterThan(2);
  });

  it('is a pure function of the generator state', () => {
    const spec = { width: 6, height: 6, boxes: 1, searchDepth: 300 };
    expect(generateSokobanRoom(spec, new Rng(42))).toEqual(generateSokobanRoom(spec, new Rng(42)));
  });
});
