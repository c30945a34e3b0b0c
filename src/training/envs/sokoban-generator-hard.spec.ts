import { Rng } from '../random';
import { SokobanEnv, type SokobanConfig } from './sokoban';
import { generateHardSokobanRoom, MIN_SOLUTION_MOVES } from './sokoban-generator-hard';
import type { SokobanState } from './sokoban-rules';
import { solveSokoban } from './sokoban-solver';

/** Why a room is malformed, or null: walls all round, `boxes` boxes and targets, one player on free floor. */
function malformation(room: SokobanState, boxes: number): string | null {
  const { width, height, walls, targets, player } = room;
  for (let cell = 0; cell < width * height; cell++) {
    const row = Math.floor(cell / width);
    const col = cell % width;
    const border = row === 0 || col === 0 || row === height - 1 || col === width - 1;
    if (border && !walls[cell]) return `open border at ${row},${col}`;
  }
  if (room.boxes.length !== boxes || new Set(room.boxes).size !== boxes) return `${room.boxes.length} boxes`;
  if (targets.length !== boxes || new Set(targets).size !== boxes) return `${targets.length} targets`;
  if ([...room.boxes, ...targets, player].some((cell) => walls[cell])) return 'object inside a wall';
  if (room.boxes.includes(player)) return 'player on a box';
  return null;
}

/** Generates `seeds` rooms, checks each, and returns the histogram of optimal solution lengths. */
function surveyRooms(config: Partial<SokobanConfig>, seeds: number): { lengths: number[]; problems: string[] } {
  const env = new SokobanEnv({ difficulty: 'hard', ...config });
  const lengths: number[] = [];
  const problems: string[] = [];
  for (let seed = 0; seed < seeds; seed++) {
    const observation = env.reset(seed);
    const issue = malformation(env.state, env.config.boxes);
    const plan = solveSokoban(env.state, 50);
    if (issue || plan === null) problems.push(`seed ${seed}: ${issue ?? 'unsolvable'}\n${observation}`);
    else lengths.push(plan.length);
  }
  return { lengths, problems };
}

function histogram(lengths: readonly number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const length of lengths) counts[length] = (counts[length] ?? 0) + 1;
  return counts;
}

describe('generateHardSokobanRoom', () => {
  it('makes 500 well-formed, solvable 6×6 rooms with optimal solutions of 2–8 moves', () => {
    const { lengths, problems } = surveyRooms({}, 500);
    expect(problems).toEqual([]);
    const counts = histogram(lengths);
    console.log(`sokoban 6×6, 1 box: optimal solution lengths ${JSON.stringify(counts)}`);
    expect(Math.min(...lengths)).toBeGreaterThanOrEqual(MIN_SOLUTION_MOVES);
    expect(Math.max(...lengths)).toBeLessThanOrEqual(8);
    // The drawn length is uniform over 2..8, so every length is common.
    for (let length = 2; length <= 8; length++) expect(counts[length] ?? 0).toBeGreaterThan(500 * 0.04);
    const mean = lengths.reduce((sum, length) => sum + length, 0) / lengths.length;
    expect(mean).toBeGreaterThan(4);
    expect(mean).toBeLessThan(5.5);
  });

  it('starts 6×6 rooms with the box off its target', () => {
    const env = new SokobanEnv({ difficulty: 'hard' });
    const onTarget = Array.from({ length: 200 }, (_, seed) => {
      env.reset(seed);
      return env.state.boxes.filter((box) => env.state.targets.includes(box)).length;
    });
    expect(new Set(onTarget)).toEqual(new Set([0]));
  });

  it.each<[Partial<SokobanConfig>, number]>([
    [{ width: 8, height: 8, boxes: 2 }, 100],
    [{ width: 5, height: 5, boxes: 3 }, 50],
    [{ width: 10, height: 7, boxes: 3, reverseSteps: 12 }, 20],
  ])('makes solvable rooms for %j', (config, seeds) => {
    const { lengths, problems } = surveyRooms(config, seeds);
    expect(problems).toEqual([]);
    console.log(`sokoban ${JSON.stringify(config)}: optimal solution lengths ${JSON.stringify(histogram(lengths))}`);
    expect(Math.min(...lengths)).toBeGreaterThanOrEqual(MIN_SOLUTION_MOVES);
    expect(Math.max(...lengths)).toBeLessThanOrEqual(config.reverseSteps ?? 8);
  });

  it('is a pure function of the generator state', () => {
    const spec = { width: 6, height: 6, boxes: 1, reverseSteps: 8 };
    expect(generateHardSokobanRoom(spec, new Rng(42))).toEqual(generateHardSokobanRoom(spec, new Rng(42)));
  });
});
