import * as tf from '@tensorflow/tfjs';

/** Serialised optimiser state: step count and both moment estimates per parameter name. */
export interface AdamState {
  step: number;
  moments: Record<string, { m: Float32Array; v: Float32Array }>;
}

/**
 * AdamW (Loshchilov & Hutter 2019; Adam of Kingma & Ba 2015 with decoupled weight decay) over
 * named variables, written out rather than using tf.train.adam so that its state has stable names
 * and round-trips exactly through a checkpoint. As PyTorch's AdamW, which veRL (and so RAGEN)
 * trains actor and critic with:
 *   θ ← θ·(1 − lr·λ);  m ← β1 m + (1−β1) g;  v ← β2 v + (1−β2) g²;  θ ← θ − lr · m̂ / (√v̂ + ε)
 * with bias corrections m̂ = m/(1−β1^t), v̂ = v/(1−β2^t). With λ = 0 it is plain Adam.
 */
export class Adam {
  private step = 0;
  private readonly m = new Map<string, tf.Variable>();
  private readonly v = new Map<string, tf.Variable>();

  constructor(
    private readonly parameters: readonly [string, tf.Variable][],
    public learningRate: number,
    /** λ, the decoupled weight decay (0: Adam). */
    private readonly weightDecay = 0,
    private readonly beta1 = 0.9,
    private readonly beta2 = 0.999,
    private readonly epsilon = 1e-8,
  ) {
    for (const [name, variable] of parameters) {
      // tf.variable copies its initial value: the zeros would otherwise stay allocated.
      const zeros = tf.zerosLike(variable);
      this.m.set(name, tf.variable(zeros, false));
      this.v.set(name, tf.variable(zeros, false));
      zeros.dispose();
    }
  }

  /** Applies gradients given by parameter name; parameters without a gradient are left alone. */
  apply(gradients: ReadonlyMap<string, tf.Tensor>): void {
    this.step++;
    const correction1 = 1 - this.beta1 ** this.step;
    const correction2 = 1 - this.beta2 ** this.step;
    tf.tidy(() => {
      for (const [name, variable] of this.parameters) {
        const g = gradients.get(name);
        if (!g) continue;
        const m = this.m.get(name)!;
        const v = this.v.get(name)!;
        m.assign(tf.add(tf.mul(m, this.beta1), tf.mul(g, 1 - this.beta1)));
        v.assign(tf.add(tf.mul(v, this.beta2), tf.mul(tf.square(g), 1 - this.beta2)));
        const update = tf.div(tf.div(m, correction1), tf.add(tf.sqrt(tf.div(v, correction2)), this.epsilon));
        const decayed = this.weightDecay > 0 ? tf.mul(variable, 1 - this.learningRate * this.weightDecay) : variable;
        variable.assign(tf.sub(decayed, tf.mul(update, this.learningRate)));
      }
    });
  }

  getState(): AdamState {
    const moments: AdamState['moments'] = {};
    for (const [name] of this.parameters) {
      moments[name] = { m: this.m.get(name)!.dataSync() as Float32Array, v: this.v.get(name)!.dataSync() as Float32Array };
    }
    return { step: this.step, moments };
  }

  setState(state: AdamState): void {
    this.step = state.step;
    for (const [name, variable] of this.parameters) {
      const saved = state.moments[name];
      if (!saved) throw new Error(`optimizer state has no moments for ${name}`);
      tf.tidy(() => {
        this.m.get(name)!.assign(tf.tensor(saved.m, variable.shape));
        this.v.get(name)!.assign(tf.tensor(saved.v, variable.shape));
      });
    }
  }

  dispose(): void {
    tf.dispose([...this.m.values(), ...this.v.values()]);
  }
}
