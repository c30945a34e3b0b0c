import * as tf from '@tensorflow/tfjs';

/** TensorFlow.js backends in order of preference (docs/training.md, "Backends"). */
export const BACKEND_PREFERENCE = ['tfjs-node-gpu', 'tfjs-node', 'wasm', 'cpu'] as const;
export type BackendName = (typeof BACKEND_PREFERENCE)[number];
export type BackendChoice = BackendName | 'auto';

/** Backend names as TensorFlow.js registers them. */
const TF_BACKEND: Record<BackendName, string> = {
  'tfjs-node-gpu': 'tensorflow',
  'tfjs-node': 'tensorflow',
  wasm: 'wasm',
  cpu: 'cpu',
};

/**
 * The native packages download libtensorflow at install time, which fails on machines without
 * internet; they are optionalDependencies, so a failed install simply leaves them absent.
 * A guarded require turns "absent or broken" into "not available".
 */
function tryRequire(moduleName: string): boolean {
  try {
    require(moduleName);
    return true;
  } catch {
    return false;
  }
}

const loaders: Record<BackendName, () => boolean> = {
  'tfjs-node-gpu': () => tryRequire('@tensorflow/tfjs-node-gpu'),
  'tfjs-node': () => tryRequire('@tensorflow/tfjs-node'),
  wasm: () => tryRequire('@tensorflow/tfjs-backend-wasm'),
  cpu: () => true,
};

let active: BackendName | null = null;

/**
 * Selects and initialises a backend once per process. `auto` walks BACKEND_PREFERENCE and takes
 * the first that loads; a named backend that cannot load is an error, not a silent fallback.
 * Returns the backend actually in use, which callers log and record per job.
 */
export async function initBackend(
  choice: BackendChoice = 'auto',
  log: (message: string) => void = () => undefined,
): Promise<BackendName> {
  if (active) {
    if (choice !== 'auto' && choice !== active) {
      throw new Error(`backend ${active} already initialised in this process; cannot switch to ${choice}`);
    }
    return active;
  }
  const candidates = choice === 'auto' ? BACKEND_PREFERENCE : [choice];
  for (const name of candidates) {
    if (!loaders[name]()) continue;
    if (!(await tf.setBackend(TF_BACKEND[name]))) continue;
    await tf.ready();
    active = name;
    log(`tensorflow.js backend: ${name}`);
    return name;
  }
  throw new Error(`backend ${choice} is not available on this machine`);
}

export function activeBackend(): BackendName | null {
  return active;
}
