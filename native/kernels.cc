// Native float32 matrix product for the tfjs wasm backend (src/training/native-kernels.ts): the
// same sums in the same order as tfjs-backend-wasm's BatchMatMul, so results are bit-for-bit those
// of the wasm path, on AVX-512 or AVX2 vectors and several threads instead of one wasm thread.
//
// Order reproduced (checked against the wasm kernel by src/training/native-kernels.spec.ts):
// out[i][j] = Σ over blocks of k (all of K when the batch is 1, blocks of 48 otherwise) of a block
// sum s = ((0 + a[i][k0]·b[k0][j]) + a[i][k0+1]·b[k0+1][j]) + …, each product rounded before it is
// added (no fused multiply-add: built with -ffp-contract=off), blocks added in order from 0.
#include <node_api.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace {

typedef float v16 __attribute__((vector_size(64)));

constexpr int kCols = 16;  // one panel of output columns
constexpr int kRows = 4;   // output rows per tile
constexpr int kChunkRows = 64;  // rows per parallel task
constexpr double kParallelFlops = 3e7;

__attribute__((always_inline)) inline v16 load(const float* p) {
  v16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Rows [i0, i0 + R) × the packed panel (K × 16, zero padded) into out (cols valid columns).
template <int R>
__attribute__((always_inline)) inline void tile(const float* a, int K, const float* panel, int kBlock, float* out, int N, int cols) {
  v16 s[R] = {};
  for (int k0 = 0; k0 < K; k0 += kBlock) {
    const int k1 = std::min(K, k0 + kBlock);
    v16 t[R] = {};
    for (int k = k0; k < k1; k++) {
      const v16 b = load(panel + k * kCols);
      for (int r = 0; r < R; r++) t[r] = t[r] + (a[r * K + k] - v16{}) * b;
    }
    for (int r = 0; r < R; r++) s[r] = s[r] + t[r];
  }
  for (int r = 0; r < R; r++) {
    float lanes[kCols];
    std::memcpy(lanes, &s[r], sizeof lanes);
    std::memcpy(out + r * N, lanes, cols * sizeof(float));
  }
}

__attribute__((target_clones("avx512f", "avx2", "default")))
void chunk(const float* a, const float* b, float* out, int M, int K, int N, int kBlock, int i0, int j0, std::vector<float>& panel) {
  const int cols = std::min(kCols, N - j0);
  panel.assign(static_cast<size_t>(K) * kCols, 0.0f);
  for (int k = 0; k < K; k++) std::memcpy(&panel[static_cast<size_t>(k) * kCols], b + static_cast<size_t>(k) * N + j0, cols * sizeof(float));
  const int i1 = std::min(M, i0 + kChunkRows);
  int i = i0;
  for (; i + kRows <= i1; i += kRows) tile<kRows>(a + static_cast<size_t>(i) * K, K, panel.data(), kBlock, out + static_cast<size_t>(i) * N + j0, N, cols);
  for (; i < i1; i++) tile<1>(a + static_cast<size_t>(i) * K, K, panel.data(), kBlock, out + static_cast<size_t>(i) * N + j0, N, cols);
}

void matmul(const float* a, const float* b, float* out, int batch, int M, int K, int N, int kBlock, int threads) {
  const long panels = (N + kCols - 1) / kCols;
  const long chunks = (M + kChunkRows - 1) / kChunkRows;
  const long tasks = batch * panels * chunks;
  const double flops = 2.0 * batch * M * K * N;
  if (K == 0) {
    std::fill(out, out + static_cast<size_t>(batch) * M * N, 0.0f);
    return;
  }
  // Threads only for products worth a few milliseconds: on a machine shared with other jobs a
  // thread can be descheduled, and every parallel region waits for its slowest thread.
#pragma omp parallel num_threads(threads) if (threads > 1 && flops > kParallelFlops && tasks > 1)
  {
    std::vector<float> panel;
#pragma omp for schedule(dynamic)
    for (long task = 0; task < tasks; task++) {
      const long p = task / (panels * chunks);
      const long rest = task % (panels * chunks);
      const int j0 = static_cast<int>(rest / chunks) * kCols;
      const int i0 = static_cast<int>(rest % chunks) * kChunkRows;
      chunk(a + p * M * K, b + p * K * N, out + p * M * N, M, K, N, kBlock, i0, j0, panel);
    }
  }
}

bool int32At(napi_env env, napi_value* argv, int i, int* out) { return napi_get_value_int32(env, argv[i], out) == napi_ok; }

// matmul(heap: Float32Array, a, b, out (float indices into heap), batch, M, K, N, kBlock, threads)
napi_value Matmul(napi_env env, napi_callback_info info) {
  size_t argc = 10;
  napi_value argv[10];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  int v[9];
  bool ok = argc == 10;
  for (int i = 0; ok && i < 9; i++) ok = int32At(env, argv, i + 1, &v[i]);
  napi_typedarray_type type;
  size_t length = 0;
  void* data = nullptr;
  ok = ok && napi_get_typedarray_info(env, argv[0], &type, &length, &data, nullptr, nullptr) == napi_ok && type == napi_float32_array;
  const auto [ai, bi, oi, batch, M, K, N, kBlock, threads] = v;
  const auto end = [&](long at, long n) { return at >= 0 && n >= 0 && static_cast<size_t>(at + n) <= length; };
  ok = ok && batch > 0 && M > 0 && K >= 0 && N > 0 && kBlock > 0 && threads > 0 && end(ai, 1L * batch * M * K) && end(bi, 1L * batch * K * N) && end(oi, 1L * batch * M * N);
  if (!ok) {
    napi_throw_range_error(env, nullptr, "matmul: bad arguments");
    return nullptr;
  }
  float* heap = static_cast<float*>(data);
  matmul(heap + ai, heap + bi, heap + oi, batch, M, K, N, kBlock, threads);
  return nullptr;
}

napi_value Init(napi_env env, napi_value exports) {
  napi_value fn;
  napi_create_function(env, "matmul", NAPI_AUTO_LENGTH, Matmul, nullptr, &fn);
  napi_set_named_property(env, exports, "matmul", fn);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
