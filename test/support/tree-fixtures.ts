import type { Env, StepResult } from '../../src/training/envs/types';
import type { Generation } from '../../src/training/policy/generate';
import type { Tokenizer } from '../../src/training/policy/tokenizer';
import type { ResponsePolicy } from '../../src/training/rollout/engine';
import type { BranchRng } from '../../src/training/rollout/tree';

/** Branch seeds the corridors were cloned with, in order. */
export const cloneSeeds: (number | undefined)[] = [];

/** A corridor of 6 cells: Right moves on; cell 5 pays 1 and ends the episode. */
export class Corridor implements Env {
  readonly id = 'corridor';
  readonly actionNames = ['Left', 'Right'];
  readonly symbolLegend = { P: 'player', _: 'floor' };
  readonly vocabulary = ['P', '_'];
  position = 0;
  done = false;
  reset(): string {
    this.position = 0;
    this.done = false;
    return this.render();
  }
  step(action: string): StepResult {
    const valid = this.actionNames.includes(action);
    if (action === 'Right') this.position++;
    if (action === 'Left') this.position = Math.max(0, this.position - 1);
    this.done = this.position === 5;
    return { observation: this.render(), reward: this.done ? 1 : 0, done: this.done, info: { success: this.done, actionValid: valid, actionEffective: valid } };
  }
  render(): string {
    return [0, 1, 2, 3, 4, 5].map((i) => (i === this.position ? 'P' : '_')).join('');
  }
  clone(branchSeed?: number): Env {
    cloneSeeds.push(branchSeed);
    return Object.assign(new Corridor(), this);
  }
}

/**
 * Answers every prompt with `text` (or `text(n)` for its n-th response); the segment entropy of
 * turn t (counted from the prompt's <resp> markers) is `segmentEntropies[t]` exactly: each of
 * its n < 20 tokens has entropy segmentEntropies[t]·ln|V|/n. Records the size of each call.
 */
export class ScriptedPolicy implements ResponsePolicy {
  batches: number[] = [];
  private responses = 0;
  constructor(
    private readonly tokenizer: Tokenizer,
    private readonly text: string | ((n: number) => string),
    private readonly segmentEntropies: readonly number[],
  ) {}
  respond(prompts: readonly (readonly number[])[]): Generation[] {
    this.batches.push(prompts.length);
    const resp = this.tokenizer.id('<resp>');
    return prompts.map((prompt) => {
      const turn = prompt.filter((t) => t === resp).length - 1;
      const text = typeof this.text === 'string' ? this.text : this.text(this.responses++);
      const tokens = [...this.tokenizer.encode(text), this.tokenizer.id('<eos>')];
      const perToken = (this.segmentEntropies[turn] * Math.log(this.tokenizer.size)) / tokens.length;
      return { tokens, logProbs: tokens.map(() => -1), entropies: tokens.map(() => perToken), stopped: true };
    });
  }
}

/** Hands out the given u's in order (and fails when asked for more); branch seeds count up from 1000. */
export class ScriptedDraws implements BranchRng {
  private seed = 1000;
  constructor(private readonly us: number[]) {}
  next(): number {
    const u = this.us.shift();
    if (u === undefined) throw new Error('more decisions than scripted');
    return u;
  }
  nextUint32(): number {
    return this.seed++;
  }
  get left(): number {
    return this.us.length;
  }
}
