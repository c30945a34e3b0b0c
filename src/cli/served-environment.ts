import { connectServedEnvironment } from '../repositories/env-servers';
import { ADDRESSED_ENVIRONMENTS, readServerAddress } from '../training/envs/remote/address';
import type { EnvDefinition } from '../training/envs/types';
import { SpecValidationError } from '../training/spec/errors';

/**
 * For `npm run train` without the service: a spec whose environment is `{"id": "http", "config":
 * {"url": …}}` (or `"openenv"` with its mapping) trains on that server. Connects to it (its
 * manifest read and checked, one episode played) and returns the spec with the address taken out
 * of `environment.config`, and the served definition to train on; null for any other spec.
 */
export async function servedEnvironmentOf(raw: unknown): Promise<{ spec: unknown; definition: EnvDefinition; dispose: () => void } | null> {
  const environment = (raw as { environment?: { id?: unknown; config?: unknown } } | null)?.environment;
  const id = environment?.id;
  if (typeof id !== 'string' || !Object.prototype.hasOwnProperty.call(ADDRESSED_ENVIRONMENTS, id)) return null;
  const protocol = ADDRESSED_ENVIRONMENTS[id as keyof typeof ADDRESSED_ENVIRONMENTS];
  const { address, errors } = readServerAddress(protocol, environment!.config, 'environment.config');
  if (!address) throw new SpecValidationError(errors);
  const { definition, dispose } = await connectServedEnvironment(id, address);
  return { spec: { ...(raw as object), environment: { id } }, definition, dispose };
}
