/**
 * Entry point of the child process that plays one evaluation (see evaluation-runner.service.ts):
 * it receives the checkpoint bytes and the request, answers with the result or the error, and
 * exits. It exits when its parent goes away, so a killed worker leaves no orphan.
 */
import { initBackend } from '../training/backend';
import { evaluateCheckpoint } from '../training/checkpoint-evaluation';
import type { EvaluationAnswer, EvaluationTask } from './evaluation-protocol';
import { connectRegistered } from './served-connection';

process.on('message', (task: EvaluationTask) => {
  const answer = (message: EvaluationAnswer) => process.send!(message, () => process.exit(0));
  initBackend(task.backend)
    .then(async () => {
      const started = Date.now();
      const served = task.served ? await connectRegistered(task.served) : null;
      try {
        const result = await evaluateCheckpoint(task.checkpoint, task.settings, task.request, served?.definition);
        answer({ type: 'result', result, durationMs: Date.now() - started });
      } finally {
        served?.dispose();
      }
    })
    .catch((error: Error) => answer({ type: 'failed', error: error.message }));
});
process.on('disconnect', () => process.exit(70));
