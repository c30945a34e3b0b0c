import '@tensorflow/tfjs-backend-wasm';
import * as tf from '@tensorflow/tfjs';

import { entropyShapedAdvantages } from './advantages';
import { clippedValueLoss, entropyAwareAdvantages, k3, klK1, klK3, ppoPolicyLoss, type PolicyLossInputs } from './losses';

beforeAll(async () => {
  await tf.setBackend('wasm');
  await tf.ready();
});

const scalar = (t: tf.Tensor) => {
  expect(t.shape).toEqual([]);
  return t.dataSync()[0];
};

describe('ppoPolicyLoss', () => {
  // ε_low 0.2, ε_high 0.28, old log-probs 0 so that log π = log r. Token by token:
  //   0: A = +1, r = 1.1  inside the clip             ℓ = −1.1
  //   1: A = +1, r = 1.5  above 1 + ε_high            ℓ = max(−1.5, −1.28) = −1.28
  //   2: A = +1, r = 0.5  below, but A > 0 unclipped  ℓ = max(−0.5, −0.8) = −0.5
  //   3: A = −1, r = 0.9  inside                      ℓ = 0.9
  //   4: A = −1, r = 0.5  below 1 − ε_low             ℓ = max(0.5, 0.8) = 0.8
  //   5: A = −1, r = 1.5  above, A < 0 unclipped      ℓ = 1.5 (< 3: dual clip inactive)
  //   6: A = −1, r = 4    dual clip                   ℓ = min(max(4, 1.28), 3) = 3
  //   7: padding (w = 0), would count as clipped high
  const ratios = [1.1, 1.5, 0.5, 0.9, 0.5, 1.5, 4, 2];
  const advantages = [1, 1, 1, -1, -1, -1, -1, 1];
  const w = 1 / 7;
  const weights = [w, w, w, w, w, w, w, 0];
  const inputs = (overrides: Partial<PolicyLossInputs> = {}): PolicyLossInputs => ({
    logProbs: tf.tensor2d([ratios.map(Math.log)]),
    oldLogProbs: tf.zeros([1, 8]),
    advantages: tf.tensor2d([advantages]),
    weights: tf.tensor2d([weights]),
    clipLow: 0.2,
    clipHigh: 0.28,
    dualClip: 3,
    ...overrides,
  });
  const gradWrtLogProbs = (mode: 'ppo' | 'aepo') => {
    const base = inputs({ mode });
    const grad = tf.grad((logProbs: tf.Tensor) =>
      ppoPolicyLoss({ ...base, logProbs: logProbs as tf.Tensor2D }).loss,
    )(base.logProbs);
    expect(grad.shape).toEqual([1, 8]);
    return Array.from(grad.dataSync());
  };

  it('clips each token as PPO with dual clip and reports clip fractions', () => {
    const out = ppoPolicyLoss(inputs());
    expect(scalar(out.loss)).toBeCloseTo(w * (-1.1 - 1.28 - 0.5 + 0.9 + 0.8 + 1.5 + 3), 5);
    expect(scalar(out.clipFractionHigh)).toBeCloseTo(1 / 7, 6); // token 1 (token 7 is padding)
    expect(scalar(out.clipFractionLow)).toBeCloseTo(1 / 7, 6); // token 4
    // k3 per token: (r − 1) − ln r, e.g. r = 4 → 3 − 1.386 = 1.614; padding excluded.
    const k3Sum = [1.1, 1.5, 0.5, 0.9, 0.5, 1.5, 4].reduce((sum, r) => sum + (r - 1 - Math.log(r)), 0);
    expect(scalar(out.approxKl)).toBeCloseTo(w * k3Sum, 5);
    expect(k3Sum).toBeCloseTo(0.00469 + 0.09453 + 0.19315 + 0.00536 + 0.19315 + 0.09453 + 1.61371, 4);
  });

  it('rejects a dual-clip constant that is not above 1', () => {
    expect(() => ppoPolicyLoss(inputs({ dualClip: 1 }))).toThrow(RangeError);
  });

  it('leaves the runaway negative token unbounded without dual clip', () => {
    for (const dualClip of [null, undefined, 0]) {
      const loss = ppoPolicyLoss(inputs({ dualClip })).loss;
      expect(scalar(loss)).toBeCloseTo(w * (-1.1 - 1.28 - 0.5 + 0.9 + 0.8 + 1.5 + 4), 5);
    }
  });

  it('PPO: clipped tokens get no gradient', () => {
    // dℓ/dlog π = −A·r where the unclipped branch is active, else 0; times w.
    const grad = gradWrtLogProbs('ppo');
    const expected = [w * -1.1, 0, w * -0.5, w * 0.9, 0, w * 1.5, 0, 0];
    grad.forEach((g, i) => expect(g).toBeCloseTo(expected[i], 5));
  });

  it('AEPO: same forward value as PPO', () => {
    const ppo = ppoPolicyLoss(inputs({ mode: 'ppo' }));
    const aepo = ppoPolicyLoss(inputs({ mode: 'aepo' }));
    expect(scalar(aepo.loss)).toBeCloseTo(scalar(ppo.loss), 6);
    expect(scalar(aepo.clipFractionHigh)).toBeCloseTo(scalar(ppo.clipFractionHigh), 6);
  });

  it('AEPO: a token above the upper clip keeps gradient −w·(1 + ε_high)·A', () => {
    const grad = gradWrtLogProbs('aepo');
    const expected = [w * -1.1, -w * (1 + 0.28) * 1, w * -0.5, w * 0.9, 0, w * 1.5, 0, 0];
    grad.forEach((g, i) => expect(g).toBeCloseTo(expected[i], 5));
  });

  it('AEPO, one token by hand: A = 1, r = 1.5, ε_high = 0.2 gives loss −1.2 and gradient weight 1.2 (PPO: 0)', () => {
    // ℓ = max(−A·r, −A·(1 + ε_high)·r/sg(r)) = max(−1.5, −1.2·1) = −1.2, as PPO's max(−1.5, −1.2).
    // dℓ/dlog π: PPO's clipped branch is a constant, 0; AEPO's is −(1 + ε_high)·A·r/sg(r) = −1.2,
    // i.e. the objective −ℓ keeps the weight 1.2 on ∇log π.
    const one = (mode: 'ppo' | 'aepo') => tf.tidy(() => {
      const args = { oldLogProbs: tf.zeros([1, 1]) as tf.Tensor2D, advantages: tf.ones([1, 1]) as tf.Tensor2D, weights: tf.ones([1, 1]) as tf.Tensor2D, clipLow: 0.2, clipHigh: 0.2, mode };
      const logProbs = tf.tensor2d([[Math.log(1.5)]]);
      const loss = scalar(ppoPolicyLoss({ ...args, logProbs }).loss);
      const grad = tf.grad((lp: tf.Tensor) => ppoPolicyLoss({ ...args, logProbs: lp as tf.Tensor2D }).loss)(logProbs).dataSync()[0];
      return { loss, grad };
    });
    expect(one('aepo').loss).toBeCloseTo(-1.2, 6);
    expect(one('aepo').grad).toBeCloseTo(-1.2, 6);
    expect(one('ppo').loss).toBeCloseTo(-1.2, 6);
    expect(one('ppo').grad).toBeCloseTo(0, 12);
  });

  it('creates no tensors beyond its four outputs', () => {
    const args = inputs({ mode: 'aepo' });
    const before = tf.memory().numTensors;
    const out = ppoPolicyLoss(args);
    expect(tf.memory().numTensors).toBe(before + 4);
    tf.dispose(out);
    tf.tidy(() => {
      tf.grad((logProbs: tf.Tensor) => ppoPolicyLoss({ ...args, logProbs: logProbs as tf.Tensor2D }).loss)(
        args.logProbs,
      );
    });
    expect(tf.memory().numTensors).toBe(before);
  });
});

describe('entropyAwareAdvantages', () => {
  // Counted entropies 0.2, 0.4, 0.6: mean 0.4, unbiased std √((0.04 + 0 + 0.04) / 2) = 0.2,
  // so Ĥ = [−1, 0, 1]; the last position is padding (w = 0) and keeps its advantage.
  const advantages = () => tf.tensor2d([[1, 1, -1, 9]]);
  const entropy = () => tf.tensor2d([[0.2, 0.4, 0.6, 5]]);
  const weights = () => tf.tensor2d([[1 / 3, 1 / 3, 1 / 3, 0]]);

  it('scales A by 1 + α·Ĥ', () => {
    const shaped = entropyAwareAdvantages(advantages(), entropy(), weights(), 0.5);
    expect(shaped.shape).toEqual([1, 4]);
    const expected = [1 * (1 + 0.5 * -1), 1 * (1 + 0.5 * 0), -1 * (1 + 0.5 * 1), 9];
    Array.from(shaped.dataSync()).forEach((a, i) => expect(a).toBeCloseTo(expected[i], 5));
  });

  it('agrees with the number-array version the update uses, over the counted tokens', () => {
    const onTensors = Array.from(entropyAwareAdvantages(advantages(), entropy(), weights(), 0.3).dataSync()).slice(0, 3);
    const onArrays = entropyShapedAdvantages([[1, 1, -1]], [[0.2, 0.4, 0.6]], 0.3)[0];
    onTensors.forEach((a, i) => expect(a).toBeCloseTo(onArrays[i], 6));
  });

  it('passes no gradient into the entropy', () => {
    const grad = tf.grad((h: tf.Tensor) =>
      tf.sum(entropyAwareAdvantages(advantages(), h as tf.Tensor2D, weights(), 0.5)),
    )(entropy());
    expect(Array.from(grad.dataSync())).toEqual([0, 0, 0, 0]);
  });
});

describe('clippedValueLoss', () => {
  //   token 0: V = 1, V_old = 0, R = 2 → clipped V = 0.5: max((1 − 2)², (0.5 − 2)²) = 2.25 (clipped)
  //   token 1: V = 2, V_old = 0, R = 1 → clipped V = 0.5: max((2 − 1)², (0.5 − 1)²) = 1 (unclipped)
  const args = (values: tf.Tensor2D) => ({
    values,
    oldValues: tf.tensor2d([[0, 0]]),
    returns: tf.tensor2d([[2, 1]]),
    weights: tf.tensor2d([[0.5, 0.5]]),
    clip: 0.5,
  });

  it('takes the larger of the clipped and unclipped squared errors', () => {
    expect(scalar(clippedValueLoss(args(tf.tensor2d([[1, 2]]))))).toBeCloseTo(0.5 * (0.5 * 2.25 + 0.5 * 1), 6);
  });

  it('passes gradient only through the unclipped branch', () => {
    const grad = tf.grad((v: tf.Tensor) => clippedValueLoss(args(v as tf.Tensor2D)))(tf.tensor2d([[1, 2]]));
    expect(grad.shape).toEqual([1, 2]);
    const [clippedToken, unclippedToken] = grad.dataSync();
    expect(clippedToken).toBeCloseTo(0, 6);
    expect(unclippedToken).toBeCloseTo(0.5 * 0.5 * 2 * (2 - 1), 6);
  });
});

describe('KL estimators', () => {
  const args = () => ({
    logProbs: tf.tensor2d([[Math.log(0.5), Math.log(0.25)]]),
    refLogProbs: tf.tensor2d([[Math.log(0.25), Math.log(0.5)]]),
    weights: tf.tensor2d([[0.75, 0.25]]),
  });

  it('k1 = Σ w·(log π − log π_ref)', () => {
    expect(scalar(klK1(args()))).toBeCloseTo(0.75 * Math.log(2) + 0.25 * -Math.log(2), 6);
  });

  it('k3 = Σ w·(e^d − d − 1) with d = log π_ref − log π', () => {
    const expected = 0.75 * (0.5 + Math.log(2) - 1) + 0.25 * (2 - Math.log(2) - 1);
    expect(scalar(klK3(args()))).toBeCloseTo(expected, 6);
  });
});

describe('tensor bookkeeping', () => {
  it('every loss returns one tensor and keeps no intermediates', () => {
    const a = tf.tensor2d([[0.5, -1]]);
    const b = tf.tensor2d([[0.1, 0.2]]);
    const c = tf.tensor2d([[1, 0]]);
    const w = tf.tensor2d([[0.5, 0.5]]);
    const before = tf.memory().numTensors;
    const outputs = [
      entropyAwareAdvantages(a, b, w, 0.1),
      clippedValueLoss({ values: a, oldValues: b, returns: c, weights: w, clip: 0.2 }),
      klK1({ logProbs: a, refLogProbs: b, weights: w }),
      klK3({ logProbs: a, refLogProbs: b, weights: w }),
    ];
    expect(tf.memory().numTensors).toBe(before + outputs.length);
    tf.dispose(outputs);
    expect(tf.memory().numTensors).toBe(before);
    tf.dispose([a, b, c, w]);
  });
});

describe('k3', () => {
  it('is (r − 1) − ln r: zero for an unchanged token, positive either way', () => {
    expect(k3(0)).toBe(0);
    expect(k3(Math.log(4))).toBeCloseTo(3 - 1.386294, 5);
    expect(k3(Math.log(0.5))).toBeCloseTo(-0.5 + 0.693147, 5);
    expect(k3(-1e9)).toBeCloseTo(Math.expm1(-20) + 20, 5); // bounded like the PPO ratio
  });
});
