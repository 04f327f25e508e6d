/// \file The tensor-core forms of the fused attention kernel as CUDA C text, sm_80 and later:
/// each warp computes 16 query rows with mma.sync (float32 accumulation; m16n8k16 for float16
/// and bfloat16, m16n8k8 on tf32 pairs for float32), the scores and the output accumulators in
/// registers in the documented fragment layout, the probabilities turned into the next mma's
/// operand in registers (as FlashAttention-2 does), the online softmax checking only tiles that
/// hold a causal, past-the-end key or row, and skipping a warp's work on tiles its mask drops
/// whole. The tiles, their copies and the key walk are AttentionTileTemplate's
/// (attention_tile_source.cc), printed before; both extend AttentionKernelTemplate.
///
/// On the H200 ([8, 12, 512, 64], the kernels' cubins side by side, before -> after the
/// pipelined walk and the mask's tiles; PyTorch's kernels in brackets): float16 causal 58 -> 39
/// us (flash 30), float32 causal 186 -> 115 (CUTLASS's memory-efficient 159), a causal [B, 1,
/// S, S] float mask: float16 99 -> 62, float32 317 -> 206.
#include "backends/cuda/attention_kernel_source.h"

namespace cinn_like::backends {

const char* AttentionMmaTemplate() {
  return R"cuda(// Fused attention on tensor cores (cinn_like library kernel), sm_80 and later.
#if __CUDA_ARCH__ >= 800
namespace cinn_like_attention {

// One key tile of the online softmax: the scores s of keys j0 .. j0 + 8 kKeyBlocks scaled, plus
// their mask terms mt (LoadMaskTile's, unread without a mask), and turned into probabilities in
// place (dropped, for p v, where kDrop), the rows' max and sum updated and the output
// accumulators o rescaled to the new max. kCheck: some score of the tile is causal-masked or
// past the last key or row (the others are only scaled, by scale log2(e) in one multiply).
template <typename M, int kKeyBlocks, int kOutBlocks, bool kDrop, bool kCheck>
__device__ __forceinline__ void SoftmaxTile(float (&s)[kKeyBlocks][4], float (&o)[kOutBlocks][4],
                                            const typename MaskPair<M>::type (&mt)[kKeyBlocks][2],
                                            RowState& rows,
                                            const SoftmaxArgs<M>& a, int j0) {
  constexpr float kLog2e = 1.4426950408889634f;
  const int t = threadIdx.x % 4, row0 = a.row0, row1 = row0 + 8, lq = a.lq, lk = a.lk;
  float mx0 = -CUDART_INF_F, mx1 = -CUDART_INF_F;
#pragma unroll
  for (int n = 0; n < kKeyBlocks; ++n) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {  // in log2 units from here on
      if (HasMask<M>::value) {  // a bool mask selects (a dropped key is -inf whatever its score)
        const float2 pair = TermPair(mt[n][e >> 1]);
        const float term = e & 1 ? pair.y : pair.x;
        s[n][e] = IsBool<M>::value ? (term == -CUDART_INF_F ? term : s[n][e] * a.scale_log2)
                                   : (s[n][e] * a.scale + term) * kLog2e;
      } else {
        s[n][e] *= a.scale_log2;
      }
      if (kCheck) {
        const int i = e < 2 ? row0 : row1, j = j0 + 2 * t + n * 8 + (e & 1);
        if (!(i < lq && j < lk && !(a.causal && j > i))) s[n][e] = -CUDART_INF_F;
      }
    }
    mx0 = fmaxf(mx0, fmaxf(s[n][0], s[n][1]));
    mx1 = fmaxf(mx1, fmaxf(s[n][2], s[n][3]));
  }
#pragma unroll
  for (int o2 = 1; o2 < 4; o2 <<= 1) {  // the four threads of a row
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, o2));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, o2));
  }
  const float n0 = fmaxf(rows.m0, mx0), n1 = fmaxf(rows.m1, mx1);
  const float a0 = rows.m0 == -CUDART_INF_F ? 0.f : exp2f(rows.m0 - n0);
  const float a1 = rows.m1 == -CUDART_INF_F ? 0.f : exp2f(rows.m1 - n1);
  rows.m0 = n0;
  rows.m1 = n1;
  rows.l0 *= a0;
  rows.l1 *= a1;
#pragma unroll
  for (int n = 0; n < kOutBlocks; ++n) {
    o[n][0] *= a0;
    o[n][1] *= a0;
    o[n][2] *= a1;
    o[n][3] *= a1;
  }
#pragma unroll
  for (int n = 0; n < kKeyBlocks; ++n) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float m = e < 2 ? n0 : n1;
      s[n][e] = m == -CUDART_INF_F ? 0.f : exp2f(s[n][e] - m);
    }
    rows.l0 += s[n][0] + s[n][1];
    rows.l1 += s[n][2] + s[n][3];
  }
  if (kDrop) {  // the sums above are the undropped softmax's; p v reads dropped probabilities
    // Which probabilities are kept, a bit each, drawn in a rolled loop: unrolled, the draws
    // interleave and take some 60 more registers (255 and spills for float32 at head dim 64).
    static_assert(kKeyBlocks * 4 <= 32, "a bit per probability");
    unsigned kept = 0;
#pragma unroll 1
    for (int x = 0; x < kKeyBlocks * 4; ++x) {
      const int e = x % 4, i = e < 2 ? row0 : row1, j = j0 + x / 4 * 8 + 2 * t + (e & 1);
      const long long at = ((long long)a.bh * lq + i) * lk + j;
      kept |= static_cast<unsigned>(DropoutWeight(a.seed, a.stream, at, a.keep_below, 1.f) != 0.f)
              << x;
    }
#pragma unroll
    for (int n = 0; n < kKeyBlocks; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) s[n][e] *= kept >> (4 * n + e) & 1u ? a.inv_keep : 0.f;
    }
  }
}

// Whether the tile adds to the warp's rows: without a mask always; with one, where some mask term
// of the warp's rows in the tile is not -inf (else its probabilities are all 0: a causal mask's
// tiles past the diagonal), asked once a tile.
template <typename M, typename P, int kKeyBlocks>
__device__ __forceinline__ bool Live(const P (&mt)[kKeyBlocks][2]) {
  if (!HasMask<M>::value) return true;
  bool any = false;
#pragma unroll
  for (int n = 0; n < kKeyBlocks; ++n) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float2 p = TermPair(mt[n][r]);
      any = any || p.x != -CUDART_INF_F || p.y != -CUDART_INF_F;
    }
  }
  return __any_sync(0xffffffffu, any);
}

// SoftmaxTile of key tile j0 of the block's rows [q0, q0 + kBM), checked where some score of the
// tile may be out: keys past lk, rows past lq, or causal keys after the block's first row.
// The forms call it only for a live tile (Live).
template <typename M, int kBM, int kBN, int kKeyBlocks, int kOutBlocks, bool kDrop>
__device__ __forceinline__ void Softmax(float (&s)[kKeyBlocks][4], float (&o)[kOutBlocks][4],
                                        const typename MaskPair<M>::type (&mt)[kKeyBlocks][2],
                                        RowState& rows, const SoftmaxArgs<M>& a, int j0) {
  if (j0 + kBN > a.lk || a.q0 + kBM > a.lq || (a.causal && j0 + kBN > a.q0 + 1)) {
    SoftmaxTile<M, kKeyBlocks, kOutBlocks, kDrop, true>(s, o, mt, rows, a, j0);
  } else {
    SoftmaxTile<M, kKeyBlocks, kOutBlocks, kDrop, false>(s, o, mt, rows, a, j0);
  }
}

// How a block of either tensor-core form starts: its (batch x head) (BlockTile), batch and
// key/value head, the softmax's arguments for the warp's rows, the query tile copied into
// `qtile` (waited for, then a barrier) and the key tiles to walk (KeyRange), found while that
// copy is in flight.
template <typename T, typename M, int kBM, int kBN, int kD, bool kDrop>
__device__ __forceinline__ SoftmaxArgs<M> StartBlock(
    T (*qtile)[kD + 16 / sizeof(T)], const T* __restrict__ q, const void* mask_ptr, int heads,
    int kv_heads, int lq, int lk, int d, float scale, int causal, long long msb, long long msh,
    long long msi, long long msj, const long long* seed_ptr, const long long* stream_ptr,
    float keep_below, const Layout& L, int& b, int& h, int& kvh, int& kv_begin, int& kv_end) {
  int tile, bh;
  BlockTile(causal || HasMask<M>::value, tile, bh);
  b = bh / heads;
  h = bh % heads;
  const int q0 = tile * kBM, warp = threadIdx.x / 32, g = threadIdx.x % 32 / 4;
  kvh = h / (heads / kv_heads);
  const SoftmaxArgs<M> args{static_cast<const M*>(mask_ptr),
                            b * msb + h * msh,
                            msi,
                            msj,
                            q0 + warp * 16 + g,
                            q0,
                            lq,
                            lk,
                            causal,
                            scale,
                            scale * 1.4426950408889634f,
                            kDrop ? *seed_ptr : 0,
                            kDrop ? *stream_ptr : 0,
                            bh,
                            keep_below,
                            1.f / keep_below};
  LoadTileAsync<T, kBM, kD>(qtile, q + L.q.off + b * L.q.b + h * L.q.h, q0, lq, d, L.q.s);
  CpAsyncCommit();
  KeyRange<M, kBM, kBN>(args.mask, args.mask_bh, msi, msj, q0, lq, lk, causal, kv_begin, kv_end);
  CpAsyncWait<0>();
  __syncthreads();
  return args;
}

// The output rows row0 and row1 (o over the row sums) into the head's rows `out`, `os` elements
// apart, and their logsumexp; a row without a kept key gets out 0 and logsumexp +inf.
template <typename T, int kOutBlocks>
__device__ __forceinline__ void StoreRows(const float (&o)[kOutBlocks][4], RowState rows,
                                          T* __restrict__ out, long long os,
                                          float* __restrict__ lse, int bh, int row0, int lq,
                                          int dv) {
  constexpr float kLn2 = 0.6931471805599453f;
  const int t = threadIdx.x % 4, row1 = row0 + 8;
#pragma unroll
  for (int o2 = 1; o2 < 4; o2 <<= 1) {
    rows.l0 += __shfl_xor_sync(0xffffffffu, rows.l0, o2);
    rows.l1 += __shfl_xor_sync(0xffffffffu, rows.l1, o2);
  }
  const float l0 = rows.l0, l1 = rows.l1;
  const float inv0 = l0 > 0.f ? 1.f / l0 : 0.f, inv1 = l1 > 0.f ? 1.f / l1 : 0.f;
#pragma unroll
  for (int n = 0; n < kOutBlocks; ++n) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int i = e < 2 ? row0 : row1, c = n * 8 + 2 * t + (e & 1);
      if (i < lq && c < dv) {
        out[i * os + c] = FromFloat<T>(o[n][e] * (e < 2 ? inv0 : inv1));
      }
    }
  }
  if (t == 0 && row0 < lq) {
    lse[(long long)bh * lq + row0] = l0 > 0.f ? rows.m0 * kLn2 + logf(l0) : CUDART_INF_F;
  }
  if (t == 0 && row1 < lq) {
    lse[(long long)bh * lq + row1] = l1 > 0.f ? rows.m1 * kLn2 + logf(l1) : CUDART_INF_F;
  }
}

template <typename T, typename M, int kD, bool kDrop>
__device__ __forceinline__ void ForwardMma(
    const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
    const void* mask_ptr, T* __restrict__ out, float* __restrict__ lse, int batch, int heads,
    int kv_heads, int lq, int lk, int d, int dv, float scale, int causal, long long msb,
    long long msh, long long msi, long long msj, const long long* seed_ptr,
    const long long* stream_ptr, float keep_below, const Layout& L) {
  constexpr int kBM = 64, kBN = 64, kSteps = kD / 16, kKeyBlocks = kBN / 8, kOutBlocks = kD / 8;
  static_assert(kD % 32 == 0, "head dim");
  __shared__ __align__(16) T ks[kBN][kD + 8];  // the query tile first, then each key tile
  __shared__ __align__(16) T vs[kBN][kD + 8];
  // The mask's terms of each key tile, where its rows can be copied 16 bytes at a time and the
  // tiles fit in 48 KiB of shared memory (not float32 masks at head dim 128).
  constexpr int kTiles = 2 * kBN * (kD + 8) * sizeof(T);
  constexpr bool kStage =
      HasMask<M>::value && kTiles + (kBM + 1) * (kBN + 16 / sizeof(M)) * sizeof(M) <= 48 * 1024;
  __shared__ __align__(16) M ms[kStage ? kBM : 1][kBN + 16 / sizeof(M)];
  __shared__ __align__(16) M mrow[kBN];  // a padding mask's row (StageMaskRow)
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4;
  int b, h, kvh, kv_begin, kv_end;
  const SoftmaxArgs<M> args = StartBlock<T, M, kBM, kBN, kD, kDrop>(
      ks, q, mask_ptr, heads, kv_heads, lq, lk, d, scale, causal, msb, msh, msi, msj, seed_ptr,
      stream_ptr, keep_below, L, b, h, kvh, kv_begin, kv_end);
  unsigned qa[kSteps][4];
#pragma unroll
  for (int s = 0; s < kSteps; ++s) RowMajorA(ks, warp * 16, s * 16, qa[s]);
  float o[kOutBlocks][4];
#pragma unroll
  for (int n = 0; n < kOutBlocks; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
  RowState rows;
  float s[kKeyBlocks][4];  // the scores
  typename MaskPair<M>::type mt[kKeyBlocks][2];
  bool live = true;  // the tile adds to the warp's rows
  const T* kb = k + L.k.off + b * L.k.b + kvh * L.k.h;
  const T* vb = v + L.v.off + b * L.v.b + kvh * L.v.h;
  const bool row_staged = StagesMaskRow(args);
  const bool staged = kStage && !row_staged && MaskVectors(args.mask, args.mask_bh, msi, msj, lk);
  WalkKeys<kBN>(
      kv_begin, kv_end,
      [&](int j0) {
        LoadTileAsync<T, kBN, kD>(ks, kb, j0, lk, d, L.k.s);
        if (row_staged) StageMaskRow<M, kBN>(mrow, args, j0);
      },
      [&](int j0) {
        LoadTileAsync<T, kBN, kD>(vs, vb, j0, lk, dv, L.v.s);
        if (kStage && staged) StageMaskTile<M, kBM, kBN>(ms, args, j0);
      },
      [&](int j0) {
        if (row_staged) {
          LoadMaskTile(mt, StagedMaskRow(args, mrow, j0), 0);
        } else if (HasMask<M>::value && !staged) {
          LoadMaskTile(mt, args, j0);
        }
#pragma unroll
        for (int n = 0; n < kKeyBlocks; ++n) {
          s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
#pragma unroll
          for (int st = 0; st < kSteps; st += 2) {
            unsigned kb[4];
            KeyB(ks, n * 8, st * 16, kb);
            Mma(s[n], qa[st], kb[0], kb[1], T());
            Mma(s[n], qa[st + 1], kb[2], kb[3], T());
          }
        }
      },
      [&](int j0) {
        if (kStage && staged) LoadMaskTile(mt, StagedMask<M, kBN>(args, ms, j0), 0);
        live = Live<M>(mt);
        if (live) Softmax<M, kBM, kBN, kKeyBlocks, kOutBlocks, kDrop>(s, o, mt, rows, args, j0);
      },
      [&]() {
        if (!live) return;
        // o += p v: the probabilities of keys 16c .. 16c + 15 are the a operand as they lie.
#pragma unroll
        for (int c = 0; c < kBN / 16; ++c) {
          const unsigned pa[4] = {
              Pack(T(), s[2 * c][0], s[2 * c][1]), Pack(T(), s[2 * c][2], s[2 * c][3]),
              Pack(T(), s[2 * c + 1][0], s[2 * c + 1][1]),
              Pack(T(), s[2 * c + 1][2], s[2 * c + 1][3])};
#pragma unroll
          for (int n = 0; n < kOutBlocks; n += 2) {
            // b: keys 16c + 2t.., head-dim columns 8n + g and 8(n + 1) + g.
            unsigned vb[4];
            TransposedB2(vs, c * 16, n * 8, vb);
            Mma(o[n], pa, vb[0], vb[1], T());
            Mma(o[n + 1], pa, vb[2], vb[3], T());
          }
        }
      });
  T* out_head = out + L.out.off + b * L.out.b + h * L.out.h;
  StoreRows<T, kOutBlocks>(o, rows, out_head, L.out.s, lse, args.bh, args.row0, lq, dv);
}

// x as a pair of tf32 numbers, big + small = x to about 2^-22 of x: the three products small
// big, big small and big big (small small dropped) are float32's product to float32 accuracy,
// the "fast float32" of CUTLASS's memory-efficient attention.
__device__ __forceinline__ void SplitTf32(float x, unsigned& big, unsigned& small) {
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(big) : "f"(x));
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(small) : "f"(x - __uint_as_float(big)));
}

// d += a b for a 16x8 (row) by 8x8 (col) tile of tf32; thread (g, t) holds a: (g, t), (g+8, t),
// (g, t+4), (g+8, t+4); b: (t, g), (t+4, g); d as Mma's.
__device__ __forceinline__ void MmaTf32(float* d, const unsigned* a, unsigned b0, unsigned b1) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// d += a b to float32 accuracy: a as split pairs (ab, as), b's two registers split here.
__device__ __forceinline__ void Mma3xTf32(float* d, const unsigned* ab, const unsigned* as,
                                          float b0, float b1) {
  unsigned bb0, bs0, bb1, bs1;
  SplitTf32(b0, bb0, bs0);
  SplitTf32(b1, bb1, bs1);
  MmaTf32(d, as, bb0, bb1);
  MmaTf32(d, ab, bs0, bs1);
  MmaTf32(d, ab, bb0, bb1);
}

// ForwardMma for float32 (head dims up to 64): mma.sync m16n8k8 on tf32 pairs, three products
// for each of float32's. The scores' accumulator layout is not the a operand's of m16n8k8, so
// p v sums its keys in another order: a block of 8 keys is the operand's k as (2t -> t,
// 2t + 1 -> t + 4), the probabilities as they lie and the value rows read in that order.
template <typename M, int kD, bool kDrop>
__device__ __forceinline__ void ForwardTf32(
    const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
    const void* mask_ptr, float* __restrict__ out, float* __restrict__ lse, int batch,
    int heads, int kv_heads, int lq, int lk, int d, int dv, float scale, int causal,
    long long msb, long long msh, long long msi, long long msj, const long long* seed_ptr,
    const long long* stream_ptr, float keep_below, const Layout& L) {
  constexpr int kBM = 64, kBN = 64, kSteps = kD / 8, kKeyBlocks = kBN / 8, kOutBlocks = kD / 8;
  static_assert(kD % 32 == 0 && kD <= 64, "head dim");
  // Rows padded by 4 floats: the fragments' reads (8 rows by 4 columns, or 4 row pairs by 8
  // columns of the value tile) hit 32 distinct banks.
  __shared__ __align__(16) float ks[kBN][kD + 4];  // the query tile first, then each key tile
  __shared__ __align__(16) float vs[kBN][kD + 4];
  __shared__ __align__(16) M mrow[kBN];  // a padding mask's row (StageMaskRow)
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
  int b, h, kvh, kv_begin, kv_end;
  const SoftmaxArgs<M> args = StartBlock<float, M, kBM, kBN, kD, kDrop>(
      ks, q, mask_ptr, heads, kv_heads, lq, lk, d, scale, causal, msb, msh, msi, msj, seed_ptr,
      stream_ptr, keep_below, L, b, h, kvh, kv_begin, kv_end);
  unsigned qb[kSteps][4], qs[kSteps][4];  // the query rows as tf32 pairs
#pragma unroll
  for (int s = 0; s < kSteps; ++s) {
    const float* r0 = ks[warp * 16 + g] + s * 8 + t;
    const float* r1 = ks[warp * 16 + g + 8] + s * 8 + t;
    SplitTf32(r0[0], qb[s][0], qs[s][0]);
    SplitTf32(r1[0], qb[s][1], qs[s][1]);
    SplitTf32(r0[4], qb[s][2], qs[s][2]);
    SplitTf32(r1[4], qb[s][3], qs[s][3]);
  }
  float o[kOutBlocks][4];
#pragma unroll
  for (int n = 0; n < kOutBlocks; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
  RowState rows;
  float s[kKeyBlocks][4];  // the scores
  typename MaskPair<M>::type mt[kKeyBlocks][2];
  bool live = true;  // the tile adds to the warp's rows
  const float* kb = k + L.k.off + b * L.k.b + kvh * L.k.h;
  const float* vb = v + L.v.off + b * L.v.b + kvh * L.v.h;
  const bool row_staged = StagesMaskRow(args);
  WalkKeys<kBN>(
      kv_begin, kv_end,
      [&](int j0) {
        LoadTileAsync<float, kBN, kD>(ks, kb, j0, lk, d, L.k.s);
        if (row_staged) StageMaskRow<M, kBN>(mrow, args, j0);
      },
      [&](int j0) { LoadTileAsync<float, kBN, kD>(vs, vb, j0, lk, dv, L.v.s); },
      [&](int j0) {
        if (HasMask<M>::value) {
          // Three products a score: where the mask drops every key of the tile for the warp's
          // rows, waiting for its terms costs less than the scores (H200, a causal [B, 1, S, S]
          // mask: 246 -> 233 us). A padding mask's row is read from shared memory.
          if (row_staged) {
            LoadMaskTile(mt, StagedMaskRow(args, mrow, j0), 0);
          } else {
            LoadMaskTile(mt, args, j0);
          }
          live = Live<M>(mt);
          if (!live) return;
        }
#pragma unroll
        for (int n = 0; n < kKeyBlocks; ++n) {
          s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
#pragma unroll
          for (int st = 0; st < kSteps; ++st) {
            const float* kr = &ks[n * 8 + g][st * 8 + t];  // b: head-dim t, t + 4 of key 8n + g
            Mma3xTf32(s[n], qb[st], qs[st], kr[0], kr[4]);
          }
        }
      },
      [&](int j0) {
        if (live) Softmax<M, kBM, kBN, kKeyBlocks, kOutBlocks, kDrop>(s, o, mt, rows, args, j0);
      },
      [&]() {
        if (!live) return;
#pragma unroll
        for (int c = 0; c < kKeyBlocks; ++c) {
          unsigned pb[4], ps[4];  // a: keys 8c + 2t (k = t) and 8c + 2t + 1 (k = t + 4)
          SplitTf32(s[c][0], pb[0], ps[0]);
          SplitTf32(s[c][2], pb[1], ps[1]);
          SplitTf32(s[c][1], pb[2], ps[2]);
          SplitTf32(s[c][3], pb[3], ps[3]);
#pragma unroll
          for (int n = 0; n < kOutBlocks; ++n) {
            Mma3xTf32(o[n], pb, ps, vs[c * 8 + 2 * t][n * 8 + g],
                      vs[c * 8 + 2 * t + 1][n * 8 + g]);
          }
        }
      });
  float* out_head = out + L.out.off + b * L.out.b + h * L.out.h;
  StoreRows<float, kOutBlocks>(o, rows, out_head, L.out.s, lse, args.bh, args.row0, lq, dv);
}

}  // namespace cinn_like_attention
#endif

)cuda";
}

}  // namespace cinn_like::backends
