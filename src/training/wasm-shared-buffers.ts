import * as tf from '@tensorflow/tfjs';

interface RefCountedBackend {
  incRef(dataId: object): void;
}

/** A view of x's buffer (the wasm backend frees it when its last holder is disposed). */
function share(x: tf.TensorInfo, backend: unknown): tf.TensorInfo {
  (backend as RefCountedBackend).incRef(x.dataId);
  return { dataId: x.dataId, shape: x.shape, dtype: x.dtype };
}

let installed = false;

/**
 * Makes the wasm backend's Identity, and its Cast to the same dtype, share their input's buffer
 * instead of copying it, as the cpu and webgl backends' Identity does. tfjs runs Identity for
 * every tensor it keeps for the backward pass (Engine.saveTensorsForBackwardMode, customGrad's
 * save), and the gradients of Add, Mul and their kin cast float32 to float32: at the largest
 * job's shape a one-row update copied about 100 M floats that way, some 7% of its time.
 *
 * Sharing is safe because nothing writes a tensor's buffer after it is made: a kernel writes only
 * its fresh output (the native matMul too, native-kernels.ts), and Variable.assign swaps the
 * variable's buffer rather than writing into it. The values are the same bits either way.
 */
export function installSharedBuffers(): boolean {
  if (installed) return true;
  const cast = tf.getKernel('Cast', 'wasm');
  if (tf.getBackend() !== 'wasm' || !cast || !tf.getKernel('Identity', 'wasm')) return false;
  tf.unregisterKernel('Identity', 'wasm');
  tf.registerKernel({ kernelName: 'Identity', backendName: 'wasm', kernelFunc: ({ inputs, backend }) => share(inputs.x as tf.TensorInfo, backend) });
  tf.unregisterKernel('Cast', 'wasm');
  tf.registerKernel({
    kernelName: 'Cast',
    backendName: 'wasm',
    kernelFunc: (args) => {
      const x = args.inputs.x as tf.TensorInfo;
      return x.dtype === (args.attrs as { dtype: tf.DataType }).dtype ? share(x, args.backend) : cast.kernelFunc(args);
    },
  });
  installed = true;
  return true;
}
