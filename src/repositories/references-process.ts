/**
 * Entry point of the child process that computes an experiment's references (see
 * references.repository.ts): the random agent, the optimum and the expert on each cell's
 * evaluation seeds. It answers once and exits, and exits when its parent goes away.
 */
import { references } from '../training/experiment/baselines';
import type { JobSpec } from '../training/spec/validate';
import { connectServedEnvironment } from './env-servers';
import type { ReferencesAnswer, ServedReferenceAddress } from './references.repository';

process.on('message', async ({ specs, served }: { specs: JobSpec[]; served: ServedReferenceAddress | null }) => {
  const answer = (message: ReferencesAnswer) => process.send!(message, () => process.exit(0));
  const connected = served ? await connectServedEnvironment(served.id, served.address).catch((error: Error) => error) : null;
  try {
    if (connected instanceof Error) throw connected;
    if (served && connected && connected.definition.served.digest !== served.digest) throw new Error(`environment '${served.id}' now serves another manifest than when it was registered`);
    const computed = [];
    for (const spec of specs) computed.push(await references(spec, connected?.definition));
    answer({ type: 'result', references: computed });
  } catch (error) {
    answer({ type: 'failed', error: (error as Error).message });
  } finally {
    if (connected && !(connected instanceof Error)) connected.dispose();
  }
});
process.on('disconnect', () => process.exit(70));
