// Native float32 matrix product for the tfjs wasm backend (src/training/native-kernels.ts): the
// same sums in the same order as tfjs-backend-wasm's BatchMatMul, so results are bit-for-bit those
// of the wasm path, on AVX-512, AVX2 or SSE vectors (the widest the CPU has) and several threads
// instead of one wasm thread.
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
typedef float v8 __attribute__((vector_size(32)));
typedef float v4 __attribute__((vector_size(16)));

constexpr int kCols = 16;  // one panel of output columns
constexpr int kChunkRows = 64;  // rows per parallel task
constexpr double kParallelFlops = 3e7;

template <typename V>
__attribute__((always_inline)) inline V load(const float* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Rows [i0, i0 + R) × the packed panel (K × 16, zero padded) into out (cols valid columns), the
// panel's 16 columns held as P vectors of type V: one on AVX-512, two on AVX2, four on SSE.
// Each vector is the target's own width: GCC lowers a 64-byte vector on a 32-byte target through
// memory, which made the AVX2 path a ninth of the AVX-512 one instead of a half.
template <typename V, int R>
__attribute__((always_inline)) inline void tile(const float* a, int K, const float* panel, int kBlock, float* out, int N, int cols) {
  constexpr int P = sizeof(float) * kCols / sizeof(V);
  V s[R][P] = {};
  for (int k0 = 0; k0 < K; k0 += kBlock) {
    const int k1 = std::min(K, k0 + kBlock);
    V t[R][P] = {};
    for (int k = k0; k < k1; k++) {
      V b[P];
      for (int p = 0; p < P; p++) b[p] = load<V>(panel + k * kCols + p * (kCols / P));
      for (int r = 0; r < R; r++) {
        const V x = a[r * K + k] - V{};
        for (int p = 0; p < P; p++) t[r][p] = t[r][p] + x * b[p];
      }
    }
    for (int r = 0; r < R; r++)
      for (int p = 0; p < P; p++) s[r][p] = s[r][p] + t[r][p];
  }
  for (int r = 0; r < R; r++) {
    float lanes[kCols];
    std::memcpy(lanes, s[r], sizeof lanes);
    std::memcpy(out + r * N, lanes, cols * sizeof(float));
  }
}

// One parallel task: output rows [i0, i0 + 64) × columns [j0, j0 + 16), in tiles of R rows.
template <typename V, int R>
__attribute__((always_inline)) inline void chunkOf(const float* a, const float* b, float* out, int M, int K, int N, int kBlock, int i0, int j0, std::vector<float>& panel) {
  const int cols = std::min(kCols, N - j0);
  panel.assign(static_cast<size_t>(K) * kCols, 0.0f);
  for (int k = 0; k < K; k++) std::memcpy(&panel[static_cast<size_t>(k) * kCols], b + static_cast<size_t>(k) * N + j0, cols * sizeof(float));
  const int i1 = std::min(M, i0 + kChunkRows);
  int i = i0;
  for (; i + R <= i1; i += R) tile<V, R>(a + static_cast<size_t>(i) * K, K, panel.data(), kBlock, out + static_cast<size_t>(i) * N + j0, N, cols);
  for (; i < i1; i++) tile<V, 1>(a + static_cast<size_t>(i) * K, K, panel.data(), kBlock, out + static_cast<size_t>(i) * N + j0, N, cols);
}

typedef void (*Chunk)(const float*, const float*, float*, int, int, int, int, int, int, std::vector<float>&);

// 4-row tiles measured fastest on AVX-512 and AVX2 (more independent sums than 2 or 3 rows, whose
// adds wait on each other), 2-row tiles on SSE.
__attribute__((target("avx512f"))) void chunk512(const float* a, const float* b, float* out, int M, int K, int N, int kBlock, int i0, int j0, std::vector<float>& panel) {
  chunkOf<v16, 4>(a, b, out, M, K, N, kBlock, i0, j0, panel);
}
__attribute__((target("avx2"))) void chunk256(const float* a, const float* b, float* out, int M, int K, int N, int kBlock, int i0, int j0, std::vector<float>& panel) {
  chunkOf<v8, 4>(a, b, out, M, K, N, kBlock, i0, j0, panel);
}
void chunk128(const float* a, const float* b, float* out, int M, int K, int N, int kBlock, int i0, int j0, std::vector<float>& panel) {
  chunkOf<v4, 2>(a, b, out, M, K, N, kBlock, i0, j0, panel);
}

// The widest vectors this CPU has, in bits; setVectorBits may narrow them (for benches and for
// the spec that checks every width against the wasm kernel).
// __builtin_cpu_init first: this runs in a static initializer, possibly before libgcc's own.
int widest() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") ? 512 : __builtin_cpu_supports("avx2") ? 256 : 128;
}
Chunk chunkFor(int bits) { return bits == 512 ? chunk512 : bits == 256 ? chunk256 : chunk128; }
Chunk chunk = chunkFor(widest());

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

// setVectorBits(bits): products use vectors of at most `bits` (512, 256 or 128), never wider than
// the CPU's; returns the width now in use. The sums are the same in every width.
napi_value SetVectorBits(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  int bits = 0;
  if (argc != 1 || !int32At(env, argv, 0, &bits) || (bits != 512 && bits != 256 && bits != 128)) {
    napi_throw_range_error(env, nullptr, "setVectorBits: 512, 256 or 128");
    return nullptr;
  }
  const int inUse = std::min(bits, widest());
  chunk = chunkFor(inUse);
  napi_value result;
  napi_create_int32(env, inUse, &result);
  return result;
}

napi_value Init(napi_env env, napi_value exports) {
  napi_value fn;
  napi_create_function(env, "matmul", NAPI_AUTO_LENGTH, Matmul, nullptr, &fn);
  napi_set_named_property(env, exports, "matmul", fn);
  napi_create_function(env, "setVectorBits", NAPI_AUTO_LENGTH, SetVectorBits, nullptr, &fn);
  napi_set_named_property(env, exports, "setVectorBits", fn);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
