import type { Env, StepResult } from '../envs/types';
import type { Generation } from '../policy/generate';
import { NUMBER_HISTORY_TOKENS, Tokenizer } from '../policy/tokenizer';
import { ContextBuilder } from './context';
import { ResponsePolicy, RolloutSettings, rollout } from './engine';

/** A corridor of 4 cells: Right moves on, reaching cell 3 pays 1 and ends the episode. */
class Corridor implements Env {
  readonly id = 'corridor';
  readonly actionNames = ['Left', 'Right'];
  readonly symbolLegend = { P: 'player', _: 'floor' };
  readonly vocabulary = ['P', '_'];
  position = 0;
  done = false;
  resets: number[] = [];
  reset(seed: number): string {
    this.resets.push(seed);
    this.position = seed % 2; // odd seeds start one cell closer
    this.done = false;
    return this.render();
  }
  step(action: string): StepResult {
    if (this.done) throw new Error('stepped after done');
    const valid = this.actionNames.includes(action);
    const before = this.position;
    if (action === 'Right') this.position++;
    if (action === 'Left') this.position = Math.max(0, this.position - 1);
    this.done = this.position === 3;
    return {
      observation: this.render(),
      reward: this.done ? 1 : 0,
      done: this.done,
      info: { success: this.done, actionValid: valid, actionEffective: valid && before !== this.position },
    };
  }
  render(): string {
    return [0, 1, 2, 3].map((i) => (i === this.position ? 'P' : '_')).join('');
  }
  clone(): Env {
    return Object.assign(new Corridor(), this);
  }
}

/** Answers turn k of every episode with script[k]; counts calls and batch sizes. */
class ScriptedPolicy implements ResponsePolicy {
  batches: number[] = [];
  constructor(
    private readonly tokenizer: Tokenizer,
    private readonly script: (turn: number, prompt: readonly number[]) => string,
  ) {}
  respond(prompts: readonly (readonly number[])[]): Generation[] {
    const turn = this.batches.length;
    this.batches.push(prompts.length);
    return prompts.map((prompt) => {
      const tokens = [...this.tokenizer.encode(this.script(turn, prompt)), this.tokenizer.id('<eos>')];
      return { tokens, logProbs: tokens.map(() => -1), entropies: tokens.map(() => 0.5), stopped: true };
    });
  }
}

describe('rollout', () => {
  const tokenizer = new Tokenizer(['P', '_'], ['Left', 'Right'], NUMBER_HISTORY_TOKENS);
  const settings: RolloutSettings = {
    maxTurns: 3,
    maxActionsPerTurn: 2,
    maxActionsPerEpisode: 3,
    temperature: 1,
    maxTokensPerTurn: 16,
    think: false,
    formatPenalty: -0.1,
  };
  const contexts = new ContextBuilder(tokenizer, 40, 5);
  const requests = [
    { seed: 2, group: 0, sample: 0 },
    { seed: 2, group: 0, sample: 1 },
    { seed: 3, group: 1, sample: 0 },
  ];

  it('batches one policy call per turn over the live episodes and scores turns', async () => {
    const policy = new ScriptedPolicy(tokenizer, (turn) => ['<answer> Right || Right || Right </answer>', '<answer> Right </answer>', '<answer> Right </answer>'][turn]);
    const trajectories = await rollout(policy, () => new Corridor(), requests, tokenizer, contexts, settings);
    // Seed 3 starts at cell 1: two Rights (the per-turn cap) reach the goal in turn 1.
    // Seed 2 starts at cell 0: two Rights, then one more in turn 2.
    expect(policy.batches).toEqual([3, 2]);
    const [a, b, c] = trajectories;
    expect(c.turns.map((t) => t.executed)).toEqual([['Right', 'Right']]);
    expect(c.return).toBeCloseTo(0 + 1, 10);
    expect(c.success).toBe(true);
    expect(a.turns.map((t) => t.executed)).toEqual([['Right', 'Right'], ['Right']]);
    expect(a.return).toBeCloseTo(0 + 1, 10);
    expect(a.actionCount).toBe(3);
    expect(b.initialObservation).toBe(a.initialObservation);
  });

  it('closes an ended episode’s session after its turn, the others’ at the end, and a failing close fails nothing', async () => {
    const policy = new ScriptedPolicy(tokenizer, () => '<answer> Right || Right </answer>');
    const closed: string[] = [];
    /** A served environment's shape: close is asynchronous, once per session, and c's server refuses it. */
    class Served extends Corridor {
      private open = true;
      constructor(private readonly name: string) {
        super();
      }
      async close(): Promise<void> {
        if (!this.open) return;
        this.open = false;
        closed.push(`${this.name} ${this.done ? 'ended' : 'cut'} after turn ${policy.batches.length}`);
        if (this.name === 'c') throw new Error('the server is gone');
      }
    }
    const names = ['a', 'b', 'c'];
    let made = 0;
    const trajectories = await rollout(policy, () => new Served(names[made++]), requests, tokenizer, contexts, { ...settings, maxTurns: 1 });
    await new Promise((resolve) => setImmediate(resolve));
    // c (seed 3, from cell 1) reaches the goal in turn 1 and is closed as soon as the turn is
    // played; a and b (from cell 0) are cut at the turn limit and closed when the rollout ends.
    expect(trajectories.map((t) => t.success)).toEqual([false, false, true]);
    expect(closed).toEqual(['c ended after turn 1', 'a cut after turn 1', 'b cut after turn 1']);
  });

  it('charges the format penalty for malformed responses and invalid actions, and sums the return', async () => {
    const policy = new ScriptedPolicy(tokenizer, (turn) => ['Right', '<answer> Right || Jump </answer>', '<answer> Left </answer>'][turn]);
    const [trajectory] = await rollout(policy, () => new Corridor(), [requests[0]], tokenizer, contexts, settings);
    expect(trajectory.turns.map((t) => t.reward)).toEqual([-0.1, 0 - 0.1, 0]);
    expect(trajectory.return).toBeCloseTo(-0.1 + -0.1 + 0, 10);
    expect(trajectory.formatErrors).toBe(2);
    expect(trajectory.turns[1].invalidActions).toBe(1);
    expect(trajectory.success).toBe(false);
    expect(trajectory.turns.length).toBe(3);
  });

  it('ends an episode when its action budget is spent', async () => {
    const policy = new ScriptedPolicy(tokenizer, () => '<answer> Left || Left </answer>');
    const [trajectory] = await rollout(policy, () => new Corridor(), [requests[0]], tokenizer, contexts, settings);
    // 2 actions in turn 1, the third (and last of the budget) in turn 2.
    expect(trajectory.turns.map((t) => t.executed.length)).toEqual([2, 1]);
    expect(trajectory.actionCount).toBe(3);
    expect(trajectory.terminated).toBe(false);
  });

  it('conditions each turn on the history (observation, actions left, response, reward)', async () => {
    const seen: string[] = [];
    const policy = new ScriptedPolicy(tokenizer, (turn, prompt) => {
      seen.push(tokenizer.decode([...prompt]));
      return '<answer> Left </answer>';
    });
    await rollout(policy, () => new Corridor(), [requests[0]], tokenizer, contexts, settings);
    expect(seen[1]).toBe('<bos> <obs> P _ _ _ <left> 3 <resp> <answer> Left </answer> <eos> <rwd> 0 <obs> P _ _ _ <left> 2 <resp>');
  });
});
