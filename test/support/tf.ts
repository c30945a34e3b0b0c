import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../../src/training/backend';

/** Tests run on the wasm backend (the one CI has); call from beforeAll. */
export async function useTestBackend(): Promise<typeof tf> {
  await initBackend('wasm');
  return tf;
}
