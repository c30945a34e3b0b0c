import type { EnvDefinition } from '../training/envs/types';
import { ServedEnvironment, probeServed, servedEnvDefinition } from '../training/envs/remote/remote-env';
import type { EnvServerAddress } from '../training/envs/remote/address';
import type { Manifest } from '../training/envs/remote/protocol';
import { OpenEnvSessions, RemoteSessions, StarLabSessions } from '../training/envs/remote/sessions';
import { EnvHttpOptions, EnvHttpTransport } from './env-http-transport';
import { openEnvSocketOpener } from './env-socket';


/** The sessions of a server: for StarLab's protocol its manifest is read and checked first. */
export async function openSessions(id: string, address: EnvServerAddress, options: Partial<EnvHttpOptions> = {}): Promise<RemoteSessions> {
  if (address.protocol === 'openenv') return new OpenEnvSessions(id, address.mapping, openEnvSocketOpener(id, address.url, options));
  const transport = new EnvHttpTransport(id, address.url, options);
  try {
    return await StarLabSessions.connect(id, transport);
  } catch (error) {
    transport.dispose();
    throw error;
  }
}

/**
 * A served environment ready to train on: its manifest read and checked, a first episode played
 * to size its observations and learn whether it forks. `dispose` closes its connections.
 */
export async function connectServedEnvironment(
  id: string,
  address: EnvServerAddress,
  options: Partial<EnvHttpOptions> = {},
): Promise<{ definition: EnvDefinition & { served: ServedEnvironment }; manifest: Manifest; dispose: () => void }> {
  const sessions = await openSessions(id, address, options);
  try {
    const served = await probeServed(sessions, address.url, address.protocol);
    return { definition: servedEnvDefinition(sessions, served), manifest: sessions.manifest, dispose: () => sessions.dispose() };
  } catch (error) {
    sessions.dispose();
    throw error;
  }
}
