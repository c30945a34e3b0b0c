import { Corridor, ScriptedDraws, ScriptedPolicy, cloneSeeds } from '../../../test/support/tree-fixtures';
import { FrozenLakeEnv } from '../envs/frozenlake';
import { NUMBER_HISTORY_TOKENS, Tokenizer } from '../policy/tokenizer';
import { Rng } from '../random';
import { globalSampleCount } from './branching';
import { ContextBuilder } from './context';
import type { ResponsePolicy, RolloutSettings } from './engine';
import { TreeSettings, treeRollout } from './tree';

describe('treeRollout', () => {
  const tokenizer = new Tokenizer(['P', '_'], ['Left', 'Right', 'Up', 'Down'], NUMBER_HISTORY_TOKENS);
  const contexts = new ContextBuilder(tokenizer, 200, 5);
  const settings: RolloutSettings = { maxTurns: 3, maxActionsPerTurn: 1, maxActionsPerEpisode: 10, temperature: 1, maxTokensPerTurn: 16, think: false, formatPenalty: -0.1 };
  const base: TreeSettings = { rule: 'arpo', groupSize: 4, initialShare: 0.5, threshold: 0.5, entropyWeight: 0.2, penalty: 0.05, entropyTokens: 20, branchesPerDecision: 1, preMonitoring: true, monitorBeta: 0.5 };
  // Segment entropies of turns 1, 2, 3: ΔH = 1.3 − 0.3 = 1 for a path at its second turn.
  const entropies = [0.3, 1.3, 0.5];

  it('ARPO: half of k from the prompt, then branches where clip(u − w·ΔH) ≤ τ, until k exist', async () => {
    const policy = new ScriptedPolicy(tokenizer, '<answer> Right </answer>', entropies);
    // Round 1 (ΔH = 0): s0 u = 0.7 → no; s1 u = 0.3 → branch s2.
    // Round 2: s0 has ΔH = 1.3 − 0.3 = 1: u = 0.65 → 0.65 − 0.2·1 = 0.45 ≤ 0.5 → branch s3; k reached.
    const draws = new ScriptedDraws([0.7, 0.3, 0.65]);
    const { trajectories, groups } = await treeRollout(policy, () => new Corridor(), [7], tokenizer, contexts, settings, base, draws);
    expect(draws.left).toBe(0);
    expect(trajectories.map((t) => [t.group, t.sample, t.seed])).toEqual([0, 1, 2, 3].map((s) => [0, s, 7]));
    expect(trajectories.map((t) => t.branchedFrom)).toEqual([undefined, undefined, { sample: 1, turn: 1 }, { sample: 0, turn: 2 }]);
    // Calls: 2 paths, then 3, then 4; every path plays 3 turns in all.
    expect(policy.batches).toEqual([2, 3, 4]);
    expect(trajectories.map((t) => t.turns.length)).toEqual([3, 3, 3, 3]);
    expect(groups).toEqual([
      {
        globalSamples: 2,
        branches: 2,
        branchRuns: [2],
        // Round 2: s0, s1 and s2 answered feedback (1.3 each); round 3: all four (0.5 each).
        afterFeedbackEntropies: [1.3, 1.3, 1.3, 0.5, 0.5, 0.5, 0.5].map((h) => expect.closeTo(h, 10)),
      },
    ]);
  });

  it('a branch carries its parent’s prefix and continues from the same state', async () => {
    const policy = new ScriptedPolicy(tokenizer, '<answer> Right </answer>', entropies);
    const made: Corridor[] = [];
    const make = () => made[made.push(new Corridor()) - 1];
    cloneSeeds.length = 0;
    const { trajectories } = await treeRollout(policy, make, [7], tokenizer, contexts, settings, base, new ScriptedDraws([0.7, 0.3, 0.65]));
    const [s0, s1, s2, s3] = trajectories;
    // The prefix is the parent's own turns (the same records), and the next turn starts where it left off.
    expect(s2.turns[0]).toBe(s1.turns[0]);
    expect(s3.turns.slice(0, 2)).toEqual(s0.turns.slice(0, 2));
    expect(s3.turns[2].observation).toBe(s0.turns[2].observation);
    expect(s2.turns[1].observation).toBe('_ P _ _ _ _'.replace(/ /g, ''));
    expect(s3.turns[2].context).toEqual(s0.turns[2].context);
    expect(s3.return).toBeCloseTo(s0.return, 12);
    expect(s2.actionCount).toBe(3);
    // Two environments were made (the global samples); each branch's is a clone with a seed of its own.
    expect(made).toHaveLength(2);
    expect(cloneSeeds).toEqual([1000, 1001]);
  });

  it('AEPO: two discarded probes set m, and the consecutive-branch penalty damps a run', async () => {
    const policy = new ScriptedPolicy(tokenizer, '<answer> Right </answer>', entropies);
    // H_root = 0.3; H̄_tool = (0.3 + 1.3 + 0.5)/3 = 0.7; m = ⌊4·σ(0.5·(0.3 − 0.7))⌋ + 1 = ⌊1.80⌋ + 1 = 2.
    const m = Math.floor(4 / (1 + Math.exp(-0.5 * (0.3 - 0.7)))) + 1;
    expect(m).toBe(2);
    // Round 1, l = 0, ΔH = 0: s0 u = 0.4 → 0.4 < 0.5 no; s1 u = 0.6 → branch s2.
    // Round 2, l = 1, ΔH = 1 for s0 and s1: s0 u = 0.32 → (0.32 + 0.2)·0.95 = 0.494 no (0.52 without
    // the penalty would have branched); s1 u = 0.33 → (0.53)·0.95 = 0.5035 → branch s3; k reached.
    const draws = new ScriptedDraws([0.4, 0.6, 0.32, 0.33]);
    const { trajectories, groups } = await treeRollout(policy, () => new Corridor(), [7], tokenizer, contexts, settings, { ...base, rule: 'aepo' }, draws);
    expect(draws.left).toBe(0);
    // Probes: one root response (1 prompt), one 3-turn episode; then the tree: 2, 3, 4 paths.
    expect(policy.batches).toEqual([1, 1, 1, 1, 2, 3, 4]);
    expect(trajectories).toHaveLength(4);
    expect(trajectories.map((t) => t.branchedFrom)).toEqual([undefined, undefined, { sample: 1, turn: 1 }, { sample: 1, turn: 2 }]);
    expect(groups[0]).toMatchObject({ globalSamples: m, branches: 2, branchRuns: [2] });
    expect(groups[0].rootEntropy).toBeCloseTo(0.3, 10);
    expect(groups[0].toolEntropy).toBeCloseTo((0.3 + 1.3 + 0.5) / 3, 10);
  });

  it('AEPO without pre-monitoring (its released scripts) starts round(share·k) from the prompt and probes nothing', async () => {
    const policy = new ScriptedPolicy(tokenizer, '<answer> Right </answer>', entropies);
    // m = 2; round 1: s0 u = 0.1 no, s1 u = 0.9 → branch; round 2 (l = 1): s0 u = 0.9 → (0.9 + 0.2)·0.95 ≥ 0.5 → branch.
    const draws = new ScriptedDraws([0.1, 0.9, 0.9]);
    const { groups } = await treeRollout(policy, () => new Corridor(), [7], tokenizer, contexts, settings, { ...base, rule: 'aepo', preMonitoring: false }, draws);
    expect(policy.batches).toEqual([2, 3, 4]);
    expect(groups[0]).toEqual(expect.objectContaining({ globalSamples: 2, branches: 2, branchRuns: [2] }));
    expect(groups[0].rootEntropy).toBeUndefined();
  });

  it('adds a fresh global sample per round when a group has no running path, so k are always reached', async () => {
    const policy = new ScriptedPolicy(tokenizer, '<answer> Right </answer>', entropies);
    // One turn per episode: nothing ever runs on to branch. m = round(0.5·3) = 2, then one fresh sample.
    const draws = new ScriptedDraws([]);
    const { trajectories, groups } = await treeRollout(policy, () => new Corridor(), [1, 2], tokenizer, contexts, { ...settings, maxTurns: 1 }, { ...base, groupSize: 3 }, draws);
    expect(trajectories.map((t) => [t.group, t.sample])).toEqual([
      [0, 0],
      [0, 1],
      [0, 2],
      [1, 0],
      [1, 1],
      [1, 2],
    ]);
    expect(trajectories.every((t) => t.branchedFrom === undefined)).toBe(true);
    expect(policy.batches).toEqual([4, 2]);
    expect(groups.map((g) => [g.globalSamples, g.branches, g.branchRuns])).toEqual([
      [2, 0, []],
      [2, 0, []],
    ]);
  });

  it('branches on slippery FrozenLake slip on their own: the same action from the same state can land elsewhere', async () => {
    const lakeTokenizer = new Tokenizer(new FrozenLakeEnv().vocabulary, ['Left', 'Right', 'Up', 'Down'], NUMBER_HISTORY_TOKENS);
    const lakeContexts = new ContextBuilder(lakeTokenizer, 400, 5);
    const policy = new ScriptedPolicy(lakeTokenizer, '<answer> Down </answer>', [0.3, 1.3, 0.5, 0.5, 0.5]);
    const seeds = Array.from({ length: 20 }, (_, i) => i);
    const { trajectories } = await treeRollout(policy, () => new FrozenLakeEnv({ size: 6 }), seeds, lakeTokenizer, lakeContexts, { ...settings, maxTurns: 4 }, { ...base, groupSize: 6 }, new Rng(9));
    let compared = 0;
    let differed = 0;
    for (const t of trajectories.filter((x) => x.branchedFrom)) {
      const parent = trajectories.find((x) => x.group === t.group && x.sample === t.branchedFrom!.sample)!;
      const next = t.branchedFrom!.turn + 1;
      if (t.turns.length <= next || parent.turns.length <= next) continue;
      compared++;
      if (t.turns[next].observation !== parent.turns[next].observation) differed++;
    }
    // Replaying the parent's slips would give the parent's lake every time; a third of moves go as meant.
    expect(compared).toBeGreaterThan(10);
    expect(differed).toBeGreaterThan(compared / 4);
  });

  it.each(['arpo', 'aepo'] as const)('%s: exactly k trajectories per group on slippery FrozenLake, whatever the draws', async (rule) => {
    const lakeTokenizer = new Tokenizer(new FrozenLakeEnv().vocabulary, ['Left', 'Right', 'Up', 'Down'], NUMBER_HISTORY_TOKENS);
    const lakeContexts = new ContextBuilder(lakeTokenizer, 400, 5);
    const rng = new Rng(5);
    const words = ['Left', 'Right', 'Up', 'Down'];
    const policy: ResponsePolicy = {
      respond: (prompts) =>
        prompts.map(() => {
          const tokens = [...lakeTokenizer.encode(`<answer> ${rng.pick(words)} </answer>`), lakeTokenizer.id('<eos>')];
          return { tokens, logProbs: tokens.map(() => -1), entropies: tokens.map(() => rng.next()), stopped: true };
        }),
    };
    for (const k of [1, 2, 5, 8]) {
      const { trajectories, groups } = await treeRollout(policy, () => new FrozenLakeEnv(), [3, 4, 5], lakeTokenizer, lakeContexts, { ...settings, maxTurns: 5 }, { ...base, rule, groupSize: k }, rng);
      for (let g = 0; g < 3; g++) expect(trajectories.filter((t) => t.group === g).map((t) => t.sample)).toEqual([...Array(k).keys()]);
      groups.forEach((stats) => expect(stats.globalSamples + stats.branches).toBeLessThanOrEqual(k));
      // A branch's first own turn sees the lake its parent saw right after the shared prefix.
      for (const t of trajectories.filter((x) => x.branchedFrom)) {
        const parent = trajectories.find((x) => x.group === t.group && x.sample === t.branchedFrom!.sample)!;
        expect(t.turns.slice(0, t.branchedFrom!.turn)).toEqual(parent.turns.slice(0, t.branchedFrom!.turn));
        if (parent.turns.length > t.branchedFrom!.turn) expect(t.turns[t.branchedFrom!.turn].observation).toBe(parent.turns[t.branchedFrom!.turn].observation);
      }
      if (rule === 'aepo') groups.forEach((stats) => expect(stats.globalSamples).toBe(globalSampleCount(k, stats.rootEntropy!, stats.toolEntropy!)));
    }
  });
});
