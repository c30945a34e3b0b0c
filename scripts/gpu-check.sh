#!/usr/bin/env bash
# On a machine with an NVIDIA GPU and nothing else reachable: brings up tfjs's WebGPU backend (Dawn
# from the `webgpu` npm package, Vulkan from the NVIDIA driver), runs bench/gpu.ts against the wasm
# backend, and prints the adapter and the backend really used. Prepare where the npm registry is
# reachable (`bash scripts/gpu-check.sh --prepare`: installs the two packages without saving them),
# then carry node_modules to the GPU machine and run `bash scripts/gpu-check.sh`.
set -uo pipefail
cd "$(dirname "$0")/.."
PACKAGES=(webgpu@0.6.2 @tensorflow/tfjs-backend-webgpu@4.22.0)

if [[ "${1:-}" == "--prepare" ]]; then
  exec npm install --no-save --no-audit --no-fund "${PACKAGES[@]}"
fi

echo "== GPU"
if command -v nvidia-smi >/dev/null; then nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; else echo "nvidia-smi not found: no NVIDIA driver here"; fi
echo "== Vulkan"
ldconfig -p | grep -q 'libvulkan.so.1' && echo "libvulkan.so.1 present" || echo "libvulkan.so.1 missing: Dawn cannot reach the GPU (install libvulkan1)"
ls /usr/share/vulkan/icd.d/ /etc/vulkan/icd.d/ 2>/dev/null | grep -i nvidia || echo "no NVIDIA Vulkan ICD file found (the driver's nvidia_icd.json)"
echo "== packages"
for p in webgpu @tensorflow/tfjs-backend-webgpu; do
  node -e "require.resolve('$p')" 2>/dev/null && echo "$p present" || { echo "$p missing: run 'bash scripts/gpu-check.sh --prepare' where the registry is reachable"; exit 1; }
done
echo "== bench (WebGPU against wasm)"
timeout "${GPU_CHECK_TIMEOUT:-480}" node -r ./scripts/register.js bench/gpu.ts "$@"
