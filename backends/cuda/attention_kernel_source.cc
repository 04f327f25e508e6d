/// \file The fused attention kernel's CUDA C text and its instances.
#include "backends/cuda/attention_kernel_source.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace cinn_like::backends {
namespace {

constexpr int kSharedLimit = 48 * 1024;

std::string CudaElement(const std::string& dtype) {
  return dtype == "float16" ? "__half" : dtype == "bfloat16" ? "__nv_bfloat16" : "float";
}

}  // namespace

AttentionCudaTypes AttentionTypes(const ir::AttentionKernelSpec& spec) {
  const std::string mask = spec.mask == "none"   ? "cinn_like_attention::NoMask"
                           : spec.mask == "bool" ? "bool"
                                                 : CudaElement(spec.mask);
  return {CudaElement(spec.dtype), mask};
}

const char* AttentionKernelTemplate() {
  return R"cuda(// Fused scaled dot-product attention (cinn_like library kernel).
#include <cuda_fp16.h>
#include <cuda_bf16.h>
namespace cinn_like_attention {

struct NoMask {};
// Whether a mask type is a mask (NoMask is none).
template <typename M> struct HasMask { static constexpr bool value = true; };
template <> struct HasMask<NoMask> { static constexpr bool value = false; };
// Whether a mask type keeps or drops (bool) rather than adds.
template <typename M> struct IsBool { static constexpr bool value = false; };
template <> struct IsBool<bool> { static constexpr bool value = true; };

__device__ __forceinline__ float ToFloat(float x) { return x; }
__device__ __forceinline__ float ToFloat(__half x) { return __half2float(x); }
__device__ __forceinline__ float ToFloat(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T> __device__ __forceinline__ T FromFloat(float x);
template <> __device__ __forceinline__ float FromFloat<float>(float x) { return x; }
template <> __device__ __forceinline__ __half FromFloat<__half>(float x) {
  return __float2half_rn(x);
}
template <> __device__ __forceinline__ __nv_bfloat16 FromFloat<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

// The score `s` after the mask element at `at`: a bool keeps or drops the key, a float adds.
__device__ __forceinline__ float Masked(const NoMask*, long long, float s) { return s; }
__device__ __forceinline__ float Masked(const bool* m, long long at, float s) {
  return m[at] ? s : -CUDART_INF_F;
}
template <typename M>
__device__ __forceinline__ float Masked(const M* m, long long at, float s) {
  return s + ToFloat(m[at]);
}
// The term a mask element adds to a score (a bool: 0 or -inf).
__device__ __forceinline__ float MaskTerm(const NoMask*, long long) { return 0.f; }
__device__ __forceinline__ float MaskTerm(const bool* m, long long at) {
  return m[at] ? 0.f : -CUDART_INF_F;
}
template <typename M>
__device__ __forceinline__ float MaskTerm(const M* m, long long at) {
  return ToFloat(m[at]);
}

// Dropout's weight of probability `at` (its row-major index in [B, H, Lq, Lk]): 1 / keep_below
// where the Philox uniform of (seed, stream, at) is below keep_below (1 - p), else 0; the same
// numbers as random_uniform(seed, stream) of that shape, which a backward draws again.
__device__ __forceinline__ float DropoutWeight(long long seed, long long stream, long long at,
                                               float keep_below, float inv_keep) {
  return cinn_like_philox_uniform(seed, stream, at) < keep_below ? inv_keep : 0.f;
}

// Where an operand's rows lie: the element strides of its batch, head and row (sequence) axes,
// and its first element's offset; its head-dim axis is contiguous. Row-major [B, H, S, D]:
// (H S D, S D, D, 0); a [B, S, H, D] tensor read as [B, H, S, D] (attention's layout,
// hlir/ops/attention.h): (S H D, D, H D, 0); k as heads [H, 2H) of GPT-2's [B, S, 3H, D]
// projection: (3 S H D, D, 3 H D, H D).
struct Strides {
  long long b, h, s, off;
};
// The strides of q, k, v and out.
struct Layout {
  Strides q, k, v, out;
};

__device__ __forceinline__ float WarpMax(float x) {
  for (int o = 16; o > 0; o >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
  return x;
}
__device__ __forceinline__ float WarpSum(float x) {
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}

// One block of 128 threads: query rows [q0, q0 + kBM) of head (b, h), keys kBN at a time.
template <typename T, typename M, int kD, int kBM, int kBN, bool kDrop>
__device__ __forceinline__ void Forward(
    const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
    const void* mask_ptr, T* __restrict__ out, float* __restrict__ lse, int batch, int heads,
    int kv_heads, int lq, int lk, int d, int dv, float scale, int causal, long long msb,
    long long msh, long long msi, long long msj, const long long* seed_ptr,
    const long long* stream_ptr, float keep_below, const Layout& L) {
  constexpr int kThreads = 128, kWarps = kThreads / 32;
  // Scores: threads along a tile row (kLanesC), rows kRowStep apart.
  constexpr int kLanesC = kBN < 32 ? kBN : 32, kRowStep = kThreads / kLanesC;
  constexpr int kScoreRows = kBM / kRowStep, kScoreCols = kBN / kLanesC;
  // p v: a warp per row (rows kWarps apart), a lane per head-dim column (32 apart).
  constexpr int kAccRows = kBM / kWarps, kAccCols = kD / 32;
  static_assert(kBM % kRowStep == 0 && kBN % kLanesC == 0 && kD % 32 == 0, "attention tile");
  // Rows padded by four floats: read as float4 along a row (16-byte aligned), the threads of a
  // quarter warp reading different rows of kvs hit distinct banks.
  __shared__ __align__(16) float qs[kBM][kD + 4];
  __shared__ __align__(16) float kvs[kBN][kD + 4];  // the key tile, then the value tile
  __shared__ __align__(16) float ps[kBM][kBN + 4];  // the scores, then their exponentials
  __shared__ float row_max[kBM], row_sum[kBM], row_scale[kBM];

  const M* mask = static_cast<const M*>(mask_ptr);
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int bh = blockIdx.y, b = bh / heads, h = bh % heads;
  const int kvh = h / (heads / kv_heads);
  const int q0 = blockIdx.x * kBM;
  const T* qb = q + L.q.off + b * L.q.b + h * L.q.h;
  const T* kb = k + L.k.off + b * L.k.b + kvh * L.k.h;
  const T* vb = v + L.v.off + b * L.v.b + kvh * L.v.h;
  const long long mask_bh = b * msb + h * msh;
  const long long seed = kDrop ? *seed_ptr : 0, stream = kDrop ? *stream_ptr : 0;
  const float inv_keep = 1.f / keep_below;

  for (int x = tid; x < kBM * kD; x += kThreads) {
    const int r = x / kD, c = x % kD;
    qs[r][c] = q0 + r < lq && c < d ? ToFloat(qb[(q0 + r) * L.q.s + c]) : 0.f;
  }
  for (int r = tid; r < kBM; r += kThreads) {
    row_max[r] = -CUDART_INF_F;
    row_sum[r] = 0.f;
  }
  float acc[kAccRows][kAccCols];
#pragma unroll
  for (int a = 0; a < kAccRows; ++a) {
#pragma unroll
    for (int c = 0; c < kAccCols; ++c) acc[a][c] = 0.f;
  }
  const int r0 = tid / kLanesC, c0 = tid % kLanesC;
  const int kv_end = causal ? min(lk, q0 + kBM) : lk;  // later keys are after every row
  for (int j0 = 0; j0 < kv_end; j0 += kBN) {
    __syncthreads();  // the previous value tile and probabilities are consumed
    for (int x = tid; x < kBN * kD; x += kThreads) {
      const int r = x / kD, c = x % kD;
      kvs[r][c] = j0 + r < lk && c < d ? ToFloat(kb[(j0 + r) * L.k.s + c]) : 0.f;
    }
    __syncthreads();
    float s[kScoreRows][kScoreCols];
#pragma unroll
    for (int x = 0; x < kScoreRows; ++x) {
#pragma unroll
      for (int y = 0; y < kScoreCols; ++y) s[x][y] = 0.f;
    }
    // Four head-dim columns a step, as float4 reads: 6.4 FMAs per shared read at 32 queries by
    // 64 keys where one column a step did 1.6 (the float32 kernel was bound by those reads).
#pragma unroll 2
    for (int e = 0; e < kD; e += 4) {
      float4 kv[kScoreCols];
#pragma unroll
      for (int y = 0; y < kScoreCols; ++y) {
        kv[y] = *reinterpret_cast<const float4*>(&kvs[c0 + kLanesC * y][e]);
      }
#pragma unroll
      for (int x = 0; x < kScoreRows; ++x) {
        const float4 qv = *reinterpret_cast<const float4*>(&qs[r0 + kRowStep * x][e]);
#pragma unroll
        for (int y = 0; y < kScoreCols; ++y) {
          s[x][y] += qv.x * kv[y].x;
          s[x][y] += qv.y * kv[y].y;
          s[x][y] += qv.z * kv[y].z;
          s[x][y] += qv.w * kv[y].w;
        }
      }
    }
#pragma unroll
    for (int x = 0; x < kScoreRows; ++x) {
#pragma unroll
      for (int y = 0; y < kScoreCols; ++y) {
        const int r = r0 + kRowStep * x, c = c0 + kLanesC * y, i = q0 + r, j = j0 + c;
        float val = -CUDART_INF_F;
        if (i < lq && j < lk && !(causal && j > i)) {
          val = Masked(mask, mask_bh + i * msi + j * msj, s[x][y] * scale);
        }
        ps[r][c] = val;
      }
    }
    __syncthreads();
    // The online softmax, a warp per row: new max, exponentials, the old sum rescaled.
    for (int r = warp; r < kBM; r += kWarps) {
      float mx = -CUDART_INF_F;
      for (int c = lane; c < kBN; c += 32) mx = fmaxf(mx, ps[r][c]);
      mx = WarpMax(mx);
      const float m_old = row_max[r], m_new = fmaxf(m_old, mx);
      float sum = 0.f;
      const long long row = ((long long)bh * lq + q0 + r) * lk + j0;
      for (int c = lane; c < kBN; c += 32) {
        const float p = m_new == -CUDART_INF_F ? 0.f : expf(ps[r][c] - m_new);
        sum += p;  // the sum is the undropped softmax's; p v reads the dropped probabilities
        ps[r][c] = kDrop ? p * DropoutWeight(seed, stream, row + c, keep_below, inv_keep) : p;
      }
      sum = WarpSum(sum);
      if (lane == 0) {
        const float alpha = m_old == -CUDART_INF_F ? 0.f : expf(m_old - m_new);
        row_scale[r] = alpha;
        row_sum[r] = row_sum[r] * alpha + sum;
        row_max[r] = m_new;
      }
    }
    for (int x = tid; x < kBN * kD; x += kThreads) {
      const int r = x / kD, c = x % kD;
      kvs[r][c] = j0 + r < lk && c < dv ? ToFloat(vb[(j0 + r) * L.v.s + c]) : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int a = 0; a < kAccRows; ++a) {
      const float alpha = row_scale[warp + kWarps * a];
#pragma unroll
      for (int c = 0; c < kAccCols; ++c) acc[a][c] *= alpha;
    }
    // Four keys a step: each row's probabilities as one float4 read (a warp broadcast).
#pragma unroll 2
    for (int j = 0; j < kBN; j += 4) {
      float vv[4][kAccCols];
#pragma unroll
      for (int t = 0; t < 4; ++t) {
#pragma unroll
        for (int c = 0; c < kAccCols; ++c) vv[t][c] = kvs[j + t][lane + 32 * c];
      }
#pragma unroll
      for (int a = 0; a < kAccRows; ++a) {
        const float4 p = *reinterpret_cast<const float4*>(&ps[warp + kWarps * a][j]);
#pragma unroll
        for (int c = 0; c < kAccCols; ++c) {
          acc[a][c] += p.x * vv[0][c];
          acc[a][c] += p.y * vv[1][c];
          acc[a][c] += p.z * vv[2][c];
          acc[a][c] += p.w * vv[3][c];
        }
      }
    }
  }
  __syncthreads();
  // A row without a kept key: out 0, logsumexp +inf (its probabilities exp(s - lse) are 0).
#pragma unroll
  for (int a = 0; a < kAccRows; ++a) {
    const int r = warp + kWarps * a, i = q0 + r;
    if (i >= lq) continue;
    const float l = row_sum[r], inv = l > 0.f ? 1.f / l : 0.f;
    T* o = out + L.out.off + b * L.out.b + h * L.out.h + i * L.out.s;
#pragma unroll
    for (int c = 0; c < kAccCols; ++c) {
      const int e = lane + 32 * c;
      if (e < dv) o[e] = FromFloat<T>(acc[a][c] * inv);
    }
    if (lane == 0) lse[(long long)bh * lq + i] = l > 0.f ? row_max[r] + logf(l) : CUDART_INF_F;
  }
}

}  // namespace cinn_like_attention

)cuda";
}

absl::StatusOr<std::string> AttentionKernelInstance(const ir::AttentionKernelSpec& spec) {
  auto bad = [&](const std::string& why) { return spec.Error(why); };
  const AttentionCudaTypes types = AttentionTypes(spec);
  const std::string &t = types.element, &mask = types.mask;
  const bool tc = spec.tensor_cores, drop = spec.dropout;
  const int d = spec.head_dim, bm = spec.rows, bn = spec.keys;
  if (d < 32 || d > 256 || d % 32 != 0) return bad("head dim " + spec.HeadDimPart());
  if (bn != 16 && bn != 32 && bn != 64) return bad("key tile " + spec.KeysPart());
  const bool tf32 = tc && spec.dtype == "float32";  // float32 on tensor cores: head dims up to 64
  if (tc && (d > (tf32 ? 64 : 128) || bm != 64 || bn != 64)) {
    return bad("tensor-core tile " + spec.TilePart());
  }
  const int simt_bn = tc ? 16 : bn;  // the CUDA-core tile of a tensor-core kernel before sm_80
  const int row_step = 128 / std::min(simt_bn, 32);
  if (bm <= 0 || bm > 128 || bm % row_step != 0) return bad("query tile " + spec.RowsPart());
  // Rows padded by 4 floats (float4 reads): the largest tile, the CUDA-core fallback of a
  // tensor-core kernel (d128, q64, k16), takes 48128 of the 49152 bytes.
  const int shared = 4 * ((bm + simt_bn) * (d + 4) + bm * (simt_bn + 4) + 3 * bm);
  if (shared > kSharedLimit) {
    return bad(
        absl::StrCat("the tiles take ", shared, " bytes of shared memory, over ", kSharedLimit));
  }
  const std::string args =
      "(q, k, v, mask, out, lse, batch, heads, kv_heads, lq, lk, d, dv, scale, causal, msb, msh, "
      "msi, msj, seed, stream, keep_below, layout);\n";
  const char* dropout = drop ? "true" : "false";
  const std::string simt = absl::StrCat("  cinn_like_attention::Forward<", t, ", ", mask, ", ", d,
                                        ", ", bm, ", ", simt_bn, ", ", dropout, ">", args);
  const std::string layout =
      "  const cinn_like_attention::Layout layout{{qsb, qsh, qss, qso}, {ksb, ksh, kss, kso}, "
      "{vsb, vsh, vss, vso}, {osb, osh, oss, oso}};\n";
  const std::string body =
      layout +
      (tc ? absl::StrCat("#if __CUDA_ARCH__ >= 800\n  cinn_like_attention::",
                         tf32 ? "ForwardTf32<" : absl::StrCat("ForwardMma<", t, ", "), mask, ", ",
                         d, ", ", dropout, ">", args, "#else\n", simt, "#endif\n")
          : simt);
  return absl::StrCat(
      "extern \"C\" __global__ void __launch_bounds__(128) ", spec.Name(), "(const ", t,
      "* __restrict__ q, const ", t, "* __restrict__ k, const ", t,
      "* __restrict__ v, const void* __restrict__ mask, ", t,
      "* __restrict__ out, float* __restrict__ lse, int batch, int heads, int kv_heads, int lq, "
      "int lk, int d, int dv, float scale, int causal, long long msb, long long msh, long long "
      "msi, long long msj, const long long* __restrict__ seed, const long long* __restrict__ "
      "stream, float keep_below, long long qsb, long long qsh, long long qss, long long qso, long "
      "long ksb, long long ksh, long long kss, long long kso, long long vsb, long long vsh, long "
      "long vss, long long vso, long long osb, long long osh, long long oss, long long oso) {\n",
      body, "}\n\n");
}

}  // namespace cinn_like::backends
