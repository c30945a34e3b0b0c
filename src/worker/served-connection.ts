import { connectServedEnvironment } from '../repositories/env-servers';
import type { ServedAddress } from './training-protocol';

/**
 * A registered environment, connected from a child process (training or evaluation): its
 * manifest read and a first episode played. A server that now serves another manifest than at
 * registration is refused before any policy plays on it, since its tokens would not match.
 */
export async function connectRegistered({ id, address, digest }: ServedAddress): ReturnType<typeof connectServedEnvironment> {
  const connected = await connectServedEnvironment(id, address);
  if (connected.definition.served.digest !== digest) {
    connected.dispose();
    throw new Error(`environment '${id}' at ${address.url} now serves another manifest than when it was registered; register it again (under a new id) and train a new job on it`);
  }
  return connected;
}
