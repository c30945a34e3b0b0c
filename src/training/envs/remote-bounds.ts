/**
 * The size bounds of the StarLab environment protocol (docs/environment-protocol.yaml): what an
 * environment server may send and what StarLab sends it. A client refuses an answer outside them
 * with an error naming the bound, so one server cannot flood a worker's memory or a job's
 * vocabulary; the conformance checker reports them in the same words. Lengths count characters
 * (UTF-16 code units, JavaScript's `length`), as JSON Schema's `maxLength` does for the BMP.
 */
export const REMOTE_BOUNDS = {
  /** One observation: 16 KiB of text. */
  observationChars: 16 * 1024,
  /** The manifest's action set, an answer's narrowed `actions`, and an expert's plan. */
  actions: 256,
  /** One action string. */
  actionChars: 64,
  /** Extra words of the manifest's `vocabulary` (the actions are words already). */
  vocabularyWords: 1024,
  /** One vocabulary word. */
  wordChars: 64,
  /** The manifest's `description`. */
  descriptionChars: 2000,
  /** A session id as the server chose it. */
  sessionChars: 256,
  /**
   * The manifest's `maxTurns`: the job spec's own bound on `rollout.maxTurns`
   * (src/training/spec/job-spec.ts), since the manifest's value becomes that default.
   */
  maxTurns: 10,
  /**
   * The largest seed StarLab sends to `reset`: training seeds lie below 2^31 and the held-out
   * evaluation seeds from 2^31 up (src/training/seeds.ts), so a server takes any unsigned 32-bit integer.
   */
  maxSeed: 2 ** 32 - 1,
  /** Absolute value of one step's reward. */
  reward: 1e6,
  /** Any one answer's body, whatever its fields: a client stops reading past it. */
  bodyBytes: 1024 * 1024,
} as const;

export type RemoteBound = keyof typeof REMOTE_BOUNDS;
