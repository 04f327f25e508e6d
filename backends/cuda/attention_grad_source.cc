/// \file The fused attention backward kernel's CUDA C text, and the parsing of its names.
#include "backends/cuda/attention_grad_source.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cuda/attention_kernel_source.h"

namespace cinn_like::backends {
namespace {

constexpr int kSharedLimit = 48 * 1024;

/// The arguments every instance passes its template, after the tile's own.
constexpr const char* kArguments =
    "q, k, v, out, dout, lse, mask, dk, dv, dqk, batch, heads, kv_heads, lq, lk, d, dvd, scale, "
    "causal, msb, msh, msi, msj, seed, stream, keep_below);\n";

/// The `extern "C"` signature of instance `kernel` of element type `t`, up to its body's brace.
std::string Signature(const std::string& kernel, const std::string& t) {
  return absl::StrCat(
      "extern \"C\" __global__ void __launch_bounds__(128) ", kernel, "(const ", t,
      "* __restrict__ q, const ", t, "* __restrict__ k, const ", t, "* __restrict__ v, const ", t,
      "* __restrict__ out, const ", t,
      "* __restrict__ dout, const float* __restrict__ lse, const void* __restrict__ mask, ", t,
      "* __restrict__ dk, ", t, "* __restrict__ dv, ", t,
      "* __restrict__ dqk, int batch, int heads, int kv_heads, int lq, int lk, int d, int dvd, "
      "float scale, int causal, long long msb, long long msh, long long msi, long long msj, "
      "const long long* __restrict__ seed, const long long* __restrict__ stream, float "
      "keep_below) {\n");
}

/// A `_tc` instance: BackwardMma on sm_80 and later; before, the CUDA-core Backward on the two
/// 32-key halves of the block's 64 keys, 32 query rows a tile.
absl::StatusOr<std::string> TensorCoreInstance(const ir::AttentionKernelSpec& spec) {
  if (spec.head_dim > 64 || spec.rows != 64 || spec.keys != 64) {
    return spec.Error("tensor-core tile " + spec.TilePart());
  }
  const AttentionCudaTypes types = AttentionTypes(spec);
  const std::string flags = absl::StrCat(types.element, ", ", types.mask, ", ", spec.head_dim);
  const char* dropout = spec.dropout ? "true" : "false";
  const std::string halves = absl::StrCat(
      "  cinn_like_attention::Backward<", flags, ", 32, 32, ", dropout, ">(2 * blockIdx.x, ",
      kArguments, "  __syncthreads();\n", "  cinn_like_attention::Backward<", flags, ", 32, 32, ",
      dropout, ">(2 * blockIdx.x + 1, ", kArguments);
  return absl::StrCat(Signature(spec.Name(), types.element), "#if __CUDA_ARCH__ >= 800\n",
                      "  cinn_like_attention::BackwardMma<", flags, ", ", dropout, ">(", kArguments,
                      "#else\n", halves, "#endif\n}\n\n");
}

}  // namespace

const char* AttentionGradTemplate() {
  return R"cuda(// Fused attention backward (cinn_like library kernel).
namespace cinn_like_attention {

// rows [r0, r0 + kRows) x columns [0, kD) of a row-major [n, ld] tensor as float32 into
// `tile`, zero outside rows < n and columns < ld.
template <typename T, int kRows, int kD>
__device__ __forceinline__ void LoadFloatTile(float (*tile)[kD + 4], const T* __restrict__ src,
                                              int r0, int n, int ld) {
#pragma unroll 4
  for (int x = threadIdx.x; x < kRows * kD; x += 128) {
    const int r = x / kD, c = x % kD;
    tile[r][c] = r0 + r < n && c < ld ? ToFloat(src[(long long)(r0 + r) * ld + c]) : 0.f;
  }
}

// One block of 128 threads: keys [j0, j0 + kBN) (j0 = key_tile kBN) of key/value head (b, kvh),
// every query head of its group, query tiles of kBM rows.
template <typename T, typename M, int kD, int kBM, int kBN, bool kDrop>
__device__ __forceinline__ void Backward(
    int key_tile, const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
    const T* __restrict__ out, const T* __restrict__ dout, const float* __restrict__ lse,
    const void* mask_ptr, T* __restrict__ dk, T* __restrict__ dv, T* __restrict__ dqk,
    int batch, int heads, int kv_heads, int lq, int lk, int d, int dvd, float scale, int causal,
    long long msb, long long msh, long long msi, long long msj, const long long* seed_ptr,
    const long long* stream_ptr, float keep_below) {
  constexpr int kThreads = 128, kWarps = kThreads / 32;
  // P and dP: threads along a tile row (one key each), rows kRowStep apart.
  constexpr int kRowStep = kThreads / kBN, kScoreRows = kBM / kRowStep;
  // dK and dV: a warp per key (keys kWarps apart), a lane per head-dim column (32 apart).
  constexpr int kAccRows = kBN / kWarps, kAccCols = kD / 32;
  // Di: 128 / kBM neighbouring threads a query row.
  constexpr int kDiLanes = kThreads / kBM;
  static_assert(kBN <= 32 && kBM % kRowStep == 0 && kBM % 4 == 0 && kBN % kWarps == 0 &&
                kD % 32 == 0 && kThreads % kBM == 0 && kDiLanes <= 32, "attention backward tile");
  __shared__ __align__(16) float qs[kBM][kD + 4];
  __shared__ __align__(16) float dos[kBM][kD + 4];
  __shared__ __align__(16) float ks[kBN][kD + 4];
  __shared__ __align__(16) float vs[kBN][kD + 4];
  __shared__ __align__(16) float pt[kBN][kBM + 4];   // (P ∘ W)ᵀ
  __shared__ __align__(16) float dst[kBN][kBM + 4];  // dSᵀ
  __shared__ float row_lse[kBM], row_di[kBM];

  const M* mask = static_cast<const M*>(mask_ptr);
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int b = blockIdx.y / kv_heads, kvh = blockIdx.y % kv_heads, group = heads / kv_heads;
  const int j0 = key_tile * kBN;
  const long long kv_at = (long long)blockIdx.y * lk;
  LoadFloatTile<T, kBN, kD>(ks, k + kv_at * d, j0, lk, d);
  LoadFloatTile<T, kBN, kD>(vs, v + kv_at * dvd, j0, lk, dvd);
  const long long seed = kDrop ? *seed_ptr : 0, stream = kDrop ? *stream_ptr : 0;
  const float inv_keep = 1.f / keep_below;

  float acc_k[kAccRows][kAccCols], acc_v[kAccRows][kAccCols];
#pragma unroll
  for (int a = 0; a < kAccRows; ++a) {
#pragma unroll
    for (int c = 0; c < kAccCols; ++c) acc_k[a][c] = acc_v[a][c] = 0.f;
  }
  const int r0 = tid / kBN, c0 = tid % kBN, j = j0 + c0;
  for (int h = kvh * group; h < (kvh + 1) * group; ++h) {
    const long long bh = (long long)b * heads + h;
    const long long mask_bh = b * msb + h * msh;
    for (int i0 = 0; i0 < lq; i0 += kBM) {
      if (causal && i0 + kBM - 1 < j0) {  // every key of the tile is after every row: dS = 0
        for (int x = tid; x < kBM * kBN; x += kThreads) {
          const int i = i0 + x / kBN, jj = j0 + x % kBN;
          if (i < lq && jj < lk) dqk[(bh * lq + i) * lk + jj] = FromFloat<T>(0.f);
        }
        continue;
      }
      __syncthreads();  // the previous tile's P, dS, q and dO are consumed
      // Di = rowsum(dO ∘ O): kDiLanes neighbouring threads a row, O read into registers
      // (independent loads, in flight with the tiles'), dO from its tile.
      const int di_row = tid / kDiLanes, di_part = tid % kDiLanes, di_i = i0 + di_row;
      float o_part[kD / kDiLanes];
#pragma unroll
      for (int t = 0; t < kD / kDiLanes; ++t) {
        const int e = di_part + kDiLanes * t;
        o_part[t] = di_i < lq && e < dvd ? ToFloat(out[(bh * lq + di_i) * dvd + e]) : 0.f;
      }
      LoadFloatTile<T, kBM, kD>(qs, q + bh * lq * d, i0, lq, d);
      LoadFloatTile<T, kBM, kD>(dos, dout + bh * lq * dvd, i0, lq, dvd);
      __syncthreads();
      float di = 0.f;
#pragma unroll
      for (int t = 0; t < kD / kDiLanes; ++t) di += o_part[t] * dos[di_row][di_part + kDiLanes * t];
#pragma unroll
      for (int o = kDiLanes / 2; o > 0; o >>= 1) di += __shfl_xor_sync(0xffffffffu, di, o);
      if (di_part == 0) {
        row_di[di_row] = di;
        row_lse[di_row] = di_i < lq ? lse[bh * lq + di_i] : CUDART_INF_F;
      }
      float s[kScoreRows], dp[kScoreRows];
#pragma unroll
      for (int x = 0; x < kScoreRows; ++x) s[x] = dp[x] = 0.f;
#pragma unroll 2
      for (int e = 0; e < kD; e += 4) {
        const float4 kv = *reinterpret_cast<const float4*>(&ks[c0][e]);
        const float4 vv = *reinterpret_cast<const float4*>(&vs[c0][e]);
#pragma unroll
        for (int x = 0; x < kScoreRows; ++x) {
          const float4 qv = *reinterpret_cast<const float4*>(&qs[r0 + kRowStep * x][e]);
          const float4 gv = *reinterpret_cast<const float4*>(&dos[r0 + kRowStep * x][e]);
          s[x] += qv.x * kv.x + qv.y * kv.y + qv.z * kv.z + qv.w * kv.w;
          dp[x] += gv.x * vv.x + gv.y * vv.y + gv.z * vv.z + gv.w * vv.w;
        }
      }
      __syncthreads();  // Di and the logsumexp of every row
#pragma unroll
      for (int x = 0; x < kScoreRows; ++x) {
        const int r = r0 + kRowStep * x, i = i0 + r;
        float p = 0.f, w = 1.f;
        if (i < lq && j < lk && !(causal && j > i)) {
          const float score = Masked(mask, mask_bh + i * msi + j * msj, s[x] * scale);
          if (score != -CUDART_INF_F) p = expf(score - row_lse[r]);
          if (kDrop) w = DropoutWeight(seed, stream, (bh * lq + i) * lk + j, keep_below, inv_keep);
        }
        const float ds = p * (dp[x] * w - row_di[r]);
        pt[c0][r] = p * w;
        dst[c0][r] = ds;
        if (i < lq && j < lk) dqk[(bh * lq + i) * lk + j] = FromFloat<T>(ds * scale);
      }
      __syncthreads();
      // dV += (P ∘ W)ᵀ dO and dK += dSᵀ q, four query rows a step (float4 along the rows).
#pragma unroll 2
      for (int r = 0; r < kBM; r += 4) {
        float go[4][kAccCols], qq[4][kAccCols];
#pragma unroll
        for (int t = 0; t < 4; ++t) {
#pragma unroll
          for (int c = 0; c < kAccCols; ++c) {
            go[t][c] = dos[r + t][lane + 32 * c];
            qq[t][c] = qs[r + t][lane + 32 * c];
          }
        }
#pragma unroll
        for (int a = 0; a < kAccRows; ++a) {
          const int key = warp + kWarps * a;
          const float4 pw = *reinterpret_cast<const float4*>(&pt[key][r]);
          const float4 g = *reinterpret_cast<const float4*>(&dst[key][r]);
#pragma unroll
          for (int c = 0; c < kAccCols; ++c) {
            acc_v[a][c] += pw.x * go[0][c] + pw.y * go[1][c] + pw.z * go[2][c] + pw.w * go[3][c];
            acc_k[a][c] += g.x * qq[0][c] + g.y * qq[1][c] + g.z * qq[2][c] + g.w * qq[3][c];
          }
        }
      }
    }
  }
#pragma unroll
  for (int a = 0; a < kAccRows; ++a) {
    const int jj = j0 + warp + kWarps * a;
    if (jj >= lk) continue;
#pragma unroll
    for (int c = 0; c < kAccCols; ++c) {
      const int e = lane + 32 * c;
      if (e < d) dk[(kv_at + jj) * d + e] = FromFloat<T>(acc_k[a][c] * scale);
      if (e < dvd) dv[(kv_at + jj) * dvd + e] = FromFloat<T>(acc_v[a][c]);
    }
  }
}

}  // namespace cinn_like_attention

)cuda";
}

absl::StatusOr<std::string> AttentionGradKernelInstance(const ir::AttentionKernelSpec& spec) {
  auto bad = [&](const std::string& why) { return spec.Error(why); };
  const int d = spec.head_dim, bm = spec.rows, bn = spec.keys;
  if (d != 32 && d != 64 && d != 128) return bad("head dim " + spec.HeadDimPart());
  if (spec.tensor_cores && spec.dtype == "float32") return bad("tensor cores for float32");
  if (spec.tensor_cores) return TensorCoreInstance(spec);
  if (bn != 16 && bn != 32) return bad("key tile " + spec.KeysPart());
  if (bm <= 0 || bm > 64 || bm % (128 / bn) != 0 || 128 % bm != 0) {
    return bad("query tile " + spec.RowsPart());
  }
  const int shared = 4 * (2 * (bm + bn) * (d + 4) + 2 * bn * (bm + 4) + 2 * bm);
  if (shared > kSharedLimit) {
    return bad(
        absl::StrCat("the tiles take ", shared, " bytes of shared memory, over ", kSharedLimit));
  }
  const AttentionCudaTypes types = AttentionTypes(spec);
  return absl::StrCat(Signature(spec.Name(), types.element), "  cinn_like_attention::Backward<",
                      types.element, ", ", types.mask, ", ", d, ", ", bm, ", ", bn, ", ",
                      spec.dropout ? "true" : "false", ">(blockIdx.x, ", kArguments, "}\n\n");
}

}  // namespace cinn_like::backends
