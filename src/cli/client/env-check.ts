import { openSessions } from '../../repositories/env-servers';
import { EnvServerError, StepAnswer } from '../../training/envs/remote/protocol';
import type { RemoteSessions } from '../../training/envs/remote/sessions';
import type { Io } from './jobs';

/** Seeds replayed for determinism, and the most steps one replay takes. */
const SEEDS = [0, 1, 7];
const MAX_REPLAY_STEPS = 20;

interface Finding {
  ok: boolean;
  text: string;
}

/**
 * `starlab env check <url>`: runs a server through the StarLab protocol as a training job would
 * and says, in words an environment author can act on, what is wrong: the manifest, the same
 * episode for the same seed and actions, the shape of every answer (the client refuses a bad
 * one), the expert's actions inside the set, fork when offered, and the latency of a step.
 * Returns the exit status: 0 when every check passes, 1 on a violation.
 */
export async function checkEnvironmentServer(url: string, io: Io, options: { timeoutMs?: number } = {}): Promise<number> {
  const findings: Finding[] = [];
  const say = (ok: boolean, text: string) => {
    findings.push({ ok, text });
    io.out(`${ok ? '✓' : '✗'} ${text}`);
  };
  let sessions: RemoteSessions;
  try {
    sessions = await openSessions('checked', { url, protocol: 'starlab' }, { timeoutMs: options.timeoutMs ?? 5000, retries: 0 });
  } catch (error) {
    say(false, `manifest: ${reason(error)}`);
    return 1;
  }
  const { manifest } = sessions;
  say(true, `manifest: ${manifest.actions.length} actions (${manifest.actions.slice(0, 8).join(', ')}${manifest.actions.length > 8 ? ', …' : ''}), ${manifest.vocabulary.length} vocabulary words, maxTurns ${manifest.maxTurns ?? 'not given (the job decides)'}, expert ${manifest.expert ? 'yes' : 'no'}`);
  const latencies: number[] = [];
  const timed = async <T>(call: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await call();
    } finally {
      latencies.push(performance.now() - started);
    }
  };
  try {
    for (const seed of SEEDS) await checkDeterminism(sessions, seed, timed, say);
    if (manifest.expert) await checkExpert(sessions, say);
    await checkFork(sessions, say);
  } finally {
    sessions.dispose();
  }
  if (latencies.length > 0) {
    const sorted = [...latencies].sort((a, b) => a - b);
    const p50 = sorted[Math.floor(sorted.length / 2)];
    const p95 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))];
    say(p95 < 1000, `latency over ${sorted.length} requests: median ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms${p95 < 1000 ? '' : ' — a training step waits for the slowest answer of every turn; aim for well under a second'}`);
  }
  const failed = findings.filter((f) => !f.ok).length;
  io.out(failed === 0 ? 'the server follows the protocol' : `${failed} ${failed === 1 ? 'check' : 'checks'} failed`);
  return failed === 0 ? 0 : 1;
}

function reason(error: unknown): string {
  return error instanceof EnvServerError ? `${error.request} ${error.failure === 'unavailable' ? 'failed' : 'was answered badly'}: ${error.detail}` : (error as Error).message;
}

/** Plays seed `seed` twice with the same actions (cycling through the set): the two episodes must be equal. */
async function checkDeterminism(sessions: RemoteSessions, seed: number, timed: <T>(call: () => Promise<T>) => Promise<T>, say: (ok: boolean, text: string) => void): Promise<void> {
  const play = async (): Promise<(string | StepAnswer)[]> => {
    const first = await timed(() => sessions.reset(seed));
    const frames: (string | StepAnswer)[] = [first.observation];
    let offered = first.actions ?? sessions.manifest.actions;
    try {
      for (let i = 0; i < MAX_REPLAY_STEPS; i++) {
        const action = offered[i % offered.length];
        const answer = await timed(() => sessions.step(first.session, action));
        frames.push(answer);
        offered = answer.actions ?? sessions.manifest.actions;
        if (answer.done) break;
      }
    } finally {
      await sessions.close(first.session);
    }
    return frames;
  };
  try {
    const [a, b] = [await play(), await play()];
    const differs = a.findIndex((frame, i) => JSON.stringify(frame) !== JSON.stringify(b[i]));
    if (differs === -1 && a.length === b.length) say(true, `seed ${seed}: reset and ${a.length - 1} steps answer the same twice, every answer well-formed`);
    else say(false, `seed ${seed}: the same seed and actions gave another episode (they differ at ${differs <= 0 ? 'the first observation' : `step ${differs}`}); a seed must fix the episode, randomness included`);
  } catch (error) {
    say(false, `seed ${seed}: ${reason(error)}`);
  }
}

async function checkExpert(sessions: RemoteSessions, say: (ok: boolean, text: string) => void): Promise<void> {
  const first = await sessions.reset(SEEDS[0]);
  try {
    const plan = await sessions.expert(first.session);
    say(plan.length > 0, plan.length > 0 ? `expert: a plan of ${plan.length} actions, all in the action set` : 'expert: an empty plan at the start of an episode; the demonstrations warm-up has nothing to imitate');
  } catch (error) {
    say(false, `expert: ${reason(error)}`);
  } finally {
    await sessions.close(first.session);
  }
}

/** A fork and its source, given the same action, must answer alike. */
async function checkFork(sessions: RemoteSessions, say: (ok: boolean, text: string) => void): Promise<void> {
  const first = await sessions.reset(SEEDS[1]);
  try {
    const copy = await sessions.fork(first.session);
    const action = sessions.manifest.actions[0];
    const [a, b] = [await sessions.step(first.session, action), await sessions.step(copy, action)];
    await sessions.close(copy);
    const same = JSON.stringify(a) === JSON.stringify(b);
    say(same, same ? 'fork: offered, and a copy continues as its source does (arpo and aepo can run)' : 'fork: the copy answered the same action differently from its source; a fork must copy the whole state, randomness included');
  } catch (error) {
    if (error instanceof EnvServerError && error.status !== undefined && [404, 405, 501].includes(error.status)) say(true, 'fork: not offered (arpo and aepo will be refused for this environment)');
    else say(false, `fork: ${reason(error)}`);
  } finally {
    await sessions.close(first.session);
  }
}
