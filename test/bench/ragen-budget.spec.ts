import { COLUMNS, RAGEN_BUDGET, RAGEN_STEPS, ROWS, runKey, specOf } from '../../bench/learning-table';
import { parseJobSpec } from '../../src/training/spec/validate';

/**
 * RAGEN's rows at RAGEN's budget (issue: the like-for-like rows ran 100 steps with a cosine decay
 * and the default column added self-imitation): the jobs those cells train are RAGEN's update
 * alone from the format warm-up, 200 steps at a constant learning rate, while the other cells keep
 * the row's budget and the recipe's schedule.
 */
describe("bench/learning's RAGEN's-budget columns", () => {
  const sokoban = ROWS.find((r) => r.name === 'sokoban')!;
  const budget = COLUMNS.filter((c) => c.name.endsWith(`/${RAGEN_BUDGET}`));

  it('are StarPO-S, PPO and GRPO from the format warm-up, 3 seeds each', () => {
    expect(budget.map((c) => [c.name, c.warmup, c.seeds])).toEqual(
      ['starpo-s', 'starpo-ppo', 'starpo-grpo'].map((preset) => [`format/${preset}/${RAGEN_BUDGET}`, 'format', [1, 2, 3]]),
    );
  });

  it('train 200 constant-rate steps without self-imitation', () => {
    for (const column of budget) {
      const spec = parseJobSpec(specOf(runKey(sokoban, column, 1)));
      expect([spec.training.steps, spec.training.lrSchedule, spec.algorithm.config.selfImitationSteps, spec.training.warmup.kind]).toEqual([RAGEN_STEPS, 'constant', 0, 'format']);
    }
  });

  it("draw RAGEN's 8 × 16 rollouts of up to 5 actions an answer on the non-slippery lake too, whose format recipe draws 64 × 4 at one", () => {
    const lake = ROWS.find((r) => r.name === 'frozenlake')!;
    for (const column of budget) expect(parseJobSpec(specOf(runKey(lake, column, 1))).rollout).toMatchObject({ groups: 8, groupSize: 16, maxActionsPerTurn: 5 });
    const recipe = parseJobSpec({ environment: { id: 'frozenlake', config: lake.envConfig }, algorithm: { id: 'starpo-s' }, training: { warmup: { kind: 'format' } } });
    expect(recipe.rollout).toMatchObject({ groups: 64, groupSize: 4, maxActionsPerTurn: 1 });
    // The lake's format default column trains the recipe's rollout, which the row's pin leaves alone.
    const oneAction = COLUMNS.find((c) => c.name === 'format/starpo-s/self-imitation 16 200 RL steps 64x4 one action a turn')!;
    expect(parseJobSpec(specOf(runKey(lake, oneAction, 1))).rollout).toMatchObject(recipe.rollout);
    // The headline's column for it is the recipe's whole job, at the job's 200 steps.
    const byDefault = parseJobSpec(specOf(runKey(lake, COLUMNS.find((c) => c.name === 'format/starpo-s/self-imitation 16 200 RL steps 64x4 one action a turn advantage-weighted replay')!, 1)));
    expect([byDefault.rollout, byDefault.algorithm.config, byDefault.model.config, byDefault.training.steps]).toEqual([recipe.rollout, recipe.algorithm.config, recipe.model.config, recipe.training.steps]);
  });

  it("draw RAGEN's 5 turns of up to 5 actions, 8 × 16, on the slippery lake, whose format recipe plays ten turns of one action, 64 × 4, the first half without slips", () => {
    const slippery = ROWS.find((r) => r.name === 'frozenlake-slippery')!;
    for (const column of budget) {
      const spec = parseJobSpec(specOf(runKey(slippery, column, 1)));
      expect(spec.rollout).toMatchObject({ groups: 8, groupSize: 16, maxActionsPerTurn: 5, maxTurns: 5 });
      // RAGEN's update alone: the recipe's curriculum (the first half without slips) is pinned off.
      expect(spec.training.curriculumShare).toBe(0);
    }
    const recipe = parseJobSpec({ environment: { id: 'frozenlake', config: slippery.envConfig }, algorithm: { id: 'starpo-s' }, training: { warmup: { kind: 'format' } } });
    expect(recipe.rollout).toMatchObject({ groups: 64, groupSize: 4, maxActionsPerTurn: 1, maxTurns: 10 });
    // The headline's column for it names the recipe in full: the same job as the default's, at its 200 steps.
    const byDefault = COLUMNS.find((c) => c.name === 'format/starpo-s/self-imitation 16 200 RL steps 64x4 one action a turn ten turns advantage-weighted replay first half without slips')!;
    const column = parseJobSpec(specOf(runKey(slippery, byDefault, 1)));
    expect([column.rollout, column.algorithm.config, column.model.config, column.training.steps]).toEqual([recipe.rollout, recipe.algorithm.config, recipe.model.config, recipe.training.steps]);
    expect(recipe.training).toMatchObject({ curriculumShare: 0.5, curriculumConfig: { slippery: false } });
    expect([column.training.curriculumShare, column.training.curriculumConfig]).toEqual([0.5, { slippery: false }]);
    // The column trained before the curriculum keeps it off.
    const before = COLUMNS.find((c) => c.name === 'format/starpo-s/self-imitation 16 64x4 one action a turn ten turns advantage-weighted replay')!;
    expect(parseJobSpec(specOf(runKey(slippery, before, 1))).training.curriculumShare).toBe(0);
    // The self-imitation column trained before keeps replaying every success alike.
    expect(parseJobSpec(specOf(runKey(slippery, COLUMNS.find((c) => c.name === 'format/starpo-s/self-imitation 16')!, 1))).algorithm.config.selfImitationSelect).toBe('all');
  });

  it("draw RAGEN's 5 turns of up to 5 actions, 8 × 16, on Sokoban, whose format recipe plays ten turns of one action, 64 × 4", () => {
    for (const column of budget) {
      const spec = parseJobSpec(specOf(runKey(sokoban, column, 1)));
      expect(spec.rollout).toMatchObject({ groups: 8, groupSize: 16, maxActionsPerTurn: 5, maxTurns: 5 });
      // RAGEN's model reads the room without grid positions, whatever the recipe gives.
      expect(spec.model.config.gridPositions).toBe(false);
    }
    const recipe = parseJobSpec({ environment: { id: 'sokoban' }, algorithm: { id: 'starpo-s' }, training: { warmup: { kind: 'format' } } });
    expect(recipe.rollout).toMatchObject({ groups: 64, groupSize: 4, maxActionsPerTurn: 1, maxTurns: 10 });
    expect(recipe.model.config.gridPositions).toBe(true);
    // The column that measured the recipe at the default job's 200 steps trains the same job.
    const name = 'format/starpo-s/self-imitation 16 200 RL steps 64x4 one action a turn ten turns advantage-weighted replay';
    const byDefault = COLUMNS.find((c) => c.name === `${name} grid positions`)!;
    const column = parseJobSpec(specOf(runKey(sokoban, byDefault, 1)));
    expect([column.rollout, column.algorithm.config, column.model.config, column.training.steps]).toEqual([recipe.rollout, recipe.algorithm.config, recipe.model.config, recipe.training.steps]);
    // The same column without them, the recipe before, keeps the row's pin.
    expect(parseJobSpec(specOf(runKey(sokoban, COLUMNS.find((c) => c.name === name)!, 1))).model.config.gridPositions).toBe(false);
    // The self-imitation columns trained before keep their 8 × 16 of up to 5 actions, every success alike.
    const before = parseJobSpec(specOf(runKey(sokoban, COLUMNS.find((c) => c.name === 'format/starpo-s/self-imitation 32')!, 1)));
    expect([before.rollout.maxActionsPerTurn, before.rollout.maxTurns, before.algorithm.config.selfImitationSelect]).toEqual([5, 5, 'all']);
  });

  it("leave the other columns at the row's budget and the recipe's cosine decay", () => {
    const recipe = parseJobSpec(specOf(runKey(sokoban, COLUMNS.find((c) => c.name === 'format/starpo-s')!, 1)));
    expect([recipe.training.steps, recipe.training.lrSchedule]).toEqual([100, 'cosine']);
  });

  it("label the self-imitation and demonstrations columns as StarLab's recipe, not as the preset", () => {
    expect(COLUMNS.find((c) => c.name === 'format/starpo-s/self-imitation 16')!.label).toBe("StarLab's recipe: starpo-s + self-imitation 16");
    expect(COLUMNS.find((c) => c.name === 'demonstrations/starpo-s')!.label).toBe('SFT, then starpo-s');
  });
});
