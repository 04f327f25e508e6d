/// \file The tensor-core form of the fused attention backward as CUDA C text (float16 and
/// bfloat16 on sm_80 and later). A block of four warps owns 64 keys of one (batch, key/value
/// head), a warp 16 of them, and walks every query head of the group and every 64-row query
/// tile, as the CUDA-core form does; each warp works in the transposed frame, keys as the mma's
/// rows: Sᵀ = K Qᵀ and dPᵀ = V dOᵀ with K's and V's a operands kept in registers, then
/// dV += (P ∘ W)ᵀ dO and dK += dSᵀ Q with the probabilities and dS turned into the next mma's a
/// operand in registers (rounded to the 16-bit type, as FlashAttention-2's backward rounds
/// them) and dO and Q read transposed by ldmatrix. A warp's keys are its own, so nothing is
/// shared between warps but the tiles, and nothing is atomic. Every load of a query tile is in
/// flight at once (q and dO by cp.async, the mask's terms, O's rows and the logsumexp), and dS
/// leaves through shared memory as 16-byte rows. It uses the helpers of
/// AttentionKernelTemplate, AttentionTileTemplate and AttentionMmaTemplate, printed before it.
#include "backends/cuda/attention_grad_source.h"

namespace cinn_like::backends {

const char* AttentionGradMmaTemplate() {
  return R"cuda(// Fused attention backward on tensor cores (cinn_like library kernel), sm_80 and later.
#if __CUDA_ARCH__ >= 800
namespace cinn_like_attention {

// A compile-time bool as a type (a generic lambda's argument picks its body's form by it).
template <bool B> struct Flag { static constexpr bool value = B; };
// The mask terms of rows [i0, i0 + kRows) x keys [j0, j0 + kKeys) times log2(e) into `terms`
// (0 outside rows < lq and keys < lk): 16-byte vectors along the keys where the mask's keys are contiguous
// (msj 1) and every row of it is aligned to 16 bytes, else an element a thread step.
template <typename M, int kRows, int kKeys>
__device__ __forceinline__ void LoadMaskTerms(float (*terms)[kKeys + 4], const M* mask,
                                              long long at, long long msi, long long msj, int i0,
                                              int j0, int lq, int lk) {
  constexpr int kPer = 16 / sizeof(M), kVectors = kRows * kKeys / kPer;
  constexpr float kLog2e = 1.4426950408889634f;
  static_assert(kVectors % 128 == 0, "mask tile");
  const bool vectors = msj == 1 && msi % kPer == 0 && lk % kPer == 0 &&
                       reinterpret_cast<unsigned long long>(mask + at) % 16 == 0;
  if (vectors) {
#pragma unroll
    for (int it = 0; it < kVectors / 128; ++it) {
      const int x = threadIdx.x + 128 * it, r = x / (kKeys / kPer), c = kPer * (x % (kKeys / kPer));
      const int i = i0 + r, j = j0 + c;
      M m[kPer];
      *reinterpret_cast<uint4*>(m) = i < lq && j < lk
          ? *reinterpret_cast<const uint4*>(mask + at + i * msi + j) : make_uint4(0, 0, 0, 0);
#pragma unroll
      for (int e = 0; e < kPer; ++e) {
        terms[r][c + e] = i < lq && j + e < lk ? MaskTerm(m, e) * kLog2e : 0.f;
      }
    }
    return;
  }
#pragma unroll 16
  for (int it = 0; it < kRows * kKeys / 128; ++it) {
    const int x = threadIdx.x + 128 * it, r = x / kKeys, c = x % kKeys, i = i0 + r, j = j0 + c;
    terms[r][c] = i < lq && j < lk ? MaskTerm(mask, at + i * msi + j * msj) * kLog2e : 0.f;
  }
}

// dS · scale of a query tile from `tile` (rows i0.., keys j0..) to dqk's rows [i0, i0 + kRows)
// (row length lk): 16-byte vectors where lk is a multiple of eight and dqk is aligned.
template <typename T, int kRows, int kKeys>
__device__ __forceinline__ void StoreTile(T* __restrict__ dqk, const T (*tile)[kKeys + 8], int i0,
                                          int j0, int lq, int lk) {
  if (lk % 8 == 0 && reinterpret_cast<unsigned long long>(dqk) % 16 == 0) {
#pragma unroll
    for (int it = 0; it < kRows * kKeys / (8 * 128); ++it) {
      const int x = threadIdx.x + 128 * it, r = x / (kKeys / 8), c = 8 * (x % (kKeys / 8));
      if (i0 + r < lq && j0 + c < lk) {
        *reinterpret_cast<uint4*>(dqk + (long long)(i0 + r) * lk + j0 + c) =
            *reinterpret_cast<const uint4*>(&tile[r][c]);
      }
    }
    return;
  }
  for (int x = threadIdx.x; x < kRows * kKeys; x += 128) {
    const int r = x / kKeys, c = x % kKeys;
    if (i0 + r < lq && j0 + c < lk) dqk[(long long)(i0 + r) * lk + j0 + c] = tile[r][c];
  }
}

template <typename T, typename M, int kD, bool kDrop>
__device__ __forceinline__ void BackwardMma(
    const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
    const T* __restrict__ out, const T* __restrict__ dout, const float* __restrict__ lse,
    const void* mask_ptr, T* __restrict__ dk, T* __restrict__ dv, T* __restrict__ dqk,
    int batch, int heads, int kv_heads, int lq, int lk, int d, int dvd, float scale, int causal,
    long long msb, long long msh, long long msi, long long msj, const long long* seed_ptr,
    const long long* stream_ptr, float keep_below) {
  constexpr int kBM = 64, kBN = 64, kSteps = kD / 16;
  constexpr int kDimBlocks = kD / 8, kChunks = kD / 8, kDiSteps = kBM * kChunks / 128;
  constexpr float kLog2e = 1.4426950408889634f;
  static_assert(kD % 16 == 0 && kD <= 128 && kDiSteps >= 1, "head dim");
  // The key and value tiles, read once into a operands; then the same bytes hold each query
  // tile's mask terms (float).
  constexpr int kKVBytes = 2 * kBN * (kD + 8) * sizeof(T), kMaskBytes = kBM * (kBN + 4) * 4;
  __shared__ __align__(16) unsigned char kv_bytes[kKVBytes > kMaskBytes ? kKVBytes : kMaskBytes];
  __shared__ __align__(16) T qs[kBM][kD + 8];
  __shared__ __align__(16) T dos[kBM][kD + 8];
  __shared__ __align__(16) T ds_tile[kBM][kBN + 8];  // dS · scale, written out whole
  __shared__ float row_lse[kBM], row_di[kBM];        // the logsumexp in log2 units, Di
  T (*ks)[kD + 8] = reinterpret_cast<T (*)[kD + 8]>(kv_bytes);
  T (*vs)[kD + 8] = ks + kBN;
  float (*mask_terms)[kBN + 4] = reinterpret_cast<float (*)[kBN + 4]>(kv_bytes);

  const M* mask = static_cast<const M*>(mask_ptr);
  const int tid = threadIdx.x, warp = tid / 32, g = tid % 32 / 4, t = tid % 4;
  const int b = blockIdx.y / kv_heads, kvh = blockIdx.y % kv_heads, group = heads / kv_heads;
  const int j0 = blockIdx.x * kBN, key0 = j0 + warp * 16 + g, key1 = key0 + 8;
  const long long kv_at = (long long)blockIdx.y * lk;
  const long long seed = kDrop ? *seed_ptr : 0, stream = kDrop ? *stream_ptr : 0;
  const float inv_keep = 1.f / keep_below, scale_log2 = scale * kLog2e;
  const bool out_vectors = dvd % 8 == 0 && reinterpret_cast<unsigned long long>(out) % 16 == 0;

  LoadTileAsync<T, kBN, kD>(ks, k + kv_at * d, j0, lk, d, d);
  LoadTileAsync<T, kBN, kD>(vs, v + kv_at * dvd, j0, lk, dvd, dvd);
  asm volatile("cp.async.wait_all;\n" ::);
  __syncthreads();
  unsigned ka[kSteps][4], va[kSteps][4];  // the warp's 16 keys and values as a operands
#pragma unroll
  for (int s = 0; s < kSteps; ++s) {
    RowMajorA(ks, warp * 16, s * 16, ka[s]);
    RowMajorA(vs, warp * 16, s * 16, va[s]);
  }
  float acc_k[kDimBlocks][4], acc_v[kDimBlocks][4];
#pragma unroll
  for (int n = 0; n < kDimBlocks; ++n) {
#pragma unroll
    for (int e = 0; e < 4; ++e) acc_k[n][e] = acc_v[n][e] = 0.f;
  }
  for (int h = kvh * group; h < (kvh + 1) * group; ++h) {
    const long long bh = (long long)b * heads + h, mask_bh = b * msb + h * msh;
    for (int i0 = 0; i0 < lq; i0 += kBM) {
      if (causal && i0 + kBM - 1 < j0) {  // every key of the tile is after every row: dS = 0
        for (int x = tid; x < kBM * kBN; x += 128) {
          const int i = i0 + x / kBN, j = j0 + x % kBN;
          if (i < lq && j < lk) dqk[(bh * lq + i) * lk + j] = FromFloat<T>(0.f);
        }
        continue;
      }
      __syncthreads();  // every warp is done with the previous query tile (or the key tile)
      // Every load of the tile in flight at once: q and dO by cp.async, the mask terms, O's
      // rows (for Di) and the logsumexp into registers.
      LoadTileAsync<T, kBM, kD>(qs, q + bh * lq * d, i0, lq, d, d);
      LoadTileAsync<T, kBM, kD>(dos, dout + bh * lq * dvd, i0, lq, dvd, dvd);
      if (HasMask<M>::value) {
        LoadMaskTerms<M, kBM, kBN>(mask_terms, mask, mask_bh, msi, msj, i0, j0, lq, lk);
      }
      T o_rows[kDiSteps][8];  // O: kChunks neighbouring threads a row, eight columns each
#pragma unroll
      for (int it = 0; it < kDiSteps; ++it) {
        const int x = tid + 128 * it, r = x / kChunks, c = 8 * (x % kChunks), i = i0 + r;
        const T* o = out + (bh * lq + i) * dvd + c;
        if (out_vectors) {
          uint4 val = make_uint4(0, 0, 0, 0);
          if (i < lq && c < dvd) val = *reinterpret_cast<const uint4*>(o);
          *reinterpret_cast<uint4*>(o_rows[it]) = val;
        } else {
#pragma unroll
          for (int e = 0; e < 8; ++e) {
            o_rows[it][e] = i < lq && c + e < dvd ? o[e] : FromFloat<T>(0.f);
          }
        }
      }
      const int lse_row = tid < kBM ? i0 + tid : lq;
      const float row_lse_here = lse_row < lq ? lse[bh * lq + lse_row] * kLog2e : CUDART_INF_F;
      asm volatile("cp.async.wait_all;\n" ::);
      __syncthreads();
      if (tid < kBM) row_lse[tid] = row_lse_here;
      // Di = rowsum(dO ∘ O).
#pragma unroll
      for (int it = 0; it < kDiSteps; ++it) {
        const int x = tid + 128 * it, r = x / kChunks, c = 8 * (x % kChunks);
        float di = 0.f;
#pragma unroll
        for (int e = 0; e < 8; ++e) di += ToFloat(o_rows[it][e]) * ToFloat(dos[r][c + e]);
#pragma unroll
        for (int o2 = kChunks / 2; o2 > 0; o2 >>= 1) di += __shfl_xor_sync(0xffffffffu, di, o2);
        if (x % kChunks == 0) row_di[r] = di;
      }
      __syncthreads();  // Di and the logsumexp of every row
      const bool inside = i0 + kBM <= lq && j0 + kBN <= lk && !(causal && j0 + kBN - 1 > i0);
      // Sixteen queries at a time (c): Sᵀ = K Qᵀ and dPᵀ = V dOᵀ, element e of block nn being
      // (key e < 2 ? key0 : key1, query i0 + 16c + 8nn + 2t + e % 2); P ∘ W into s and dS =
      // P ∘ (dP ∘ W - Di) into dp (dS · scale to dqk); then dV += (P ∘ W)ᵀ dO and dK += dSᵀ Q,
      // s and dp being the a operands as they lie.
#pragma unroll 1
      for (int c = 0; c < kBM / 16; ++c) {
        float s[2][4], dp[2][4];
#pragma unroll
        for (int nn = 0; nn < 2; ++nn) {
#pragma unroll
          for (int e = 0; e < 4; ++e) s[nn][e] = dp[nn][e] = 0.f;
#pragma unroll
          for (int st = 0; st < kSteps; ++st) {
            const T* qr = &qs[16 * c + 8 * nn + g][st * 16 + 2 * t];
            const T* gr = &dos[16 * c + 8 * nn + g][st * 16 + 2 * t];
            Mma(s[nn], ka[st], *reinterpret_cast<const unsigned*>(qr),
                *reinterpret_cast<const unsigned*>(qr + 8), T());
            Mma(dp[nn], va[st], *reinterpret_cast<const unsigned*>(gr),
                *reinterpret_cast<const unsigned*>(gr + 8), T());
          }
        }
        // Tiles inside the bounds and wholly on or below a causal diagonal test nothing per
        // element (checked is false): rows past lq have the logsumexp +inf, so P is 0 there.
        auto grads = [&](auto checked) {
#pragma unroll
          for (int nn = 0; nn < 2; ++nn) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const int r = 16 * c + 8 * nn + 2 * t + (e & 1);
              const int col = warp * 16 + g + (e < 2 ? 0 : 8), i = i0 + r, j = j0 + col;
              const float term = HasMask<M>::value ? mask_terms[r][col] : 0.f;
              float p = exp2f(fmaf(s[nn][e], scale_log2, term) - row_lse[r]);
              if (decltype(checked)::value && !(i < lq && j < lk && !(causal && j > i))) p = 0.f;
              const float w =
                  kDrop ? DropoutWeight(seed, stream, (bh * lq + i) * lk + j, keep_below, inv_keep)
                        : 1.f;
              const float ds = p * (dp[nn][e] * w - row_di[r]);
              s[nn][e] = p * w;
              dp[nn][e] = ds;
              ds_tile[r][col] = FromFloat<T>(ds * scale);
            }
          }
        };
        if (inside) {
          grads(Flag<false>());
        } else {
          grads(Flag<true>());
        }
        const unsigned pa[4] = {Pack(T(), s[0][0], s[0][1]), Pack(T(), s[0][2], s[0][3]),
                                Pack(T(), s[1][0], s[1][1]), Pack(T(), s[1][2], s[1][3])};
        const unsigned da[4] = {Pack(T(), dp[0][0], dp[0][1]), Pack(T(), dp[0][2], dp[0][3]),
                                Pack(T(), dp[1][0], dp[1][1]), Pack(T(), dp[1][2], dp[1][3])};
#pragma unroll
        for (int n = 0; n < kDimBlocks; ++n) {
          unsigned b0, b1;
          TransposedB(dos, c * 16, n * 8, b0, b1);
          Mma(acc_v[n], pa, b0, b1, T());
          TransposedB(qs, c * 16, n * 8, b0, b1);
          Mma(acc_k[n], da, b0, b1, T());
        }
      }
      __syncthreads();  // the tile's dS
      StoreTile<T, kBM, kBN>(dqk + bh * lq * lk, ds_tile, i0, j0, lq, lk);
    }
  }
#pragma unroll
  for (int n = 0; n < kDimBlocks; ++n) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int j = e < 2 ? key0 : key1, c = n * 8 + 2 * t + (e & 1);
      if (j >= lk) continue;
      if (c < d) dk[(kv_at + j) * d + c] = FromFloat<T>(acc_k[n][e] * scale);
      if (c < dvd) dv[(kv_at + j) * dvd + c] = FromFloat<T>(acc_v[n][e]);
    }
  }
}

}  // namespace cinn_like_attention
#endif

)cuda";
}

}  // namespace cinn_like::backends
