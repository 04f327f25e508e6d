/// \file The tensor-core forms of the fused attention kernel as CUDA C text, sm_80 and later:
/// each warp computes 16 query rows with mma.sync (float32 accumulation; m16n8k16 for float16
/// and bfloat16, m16n8k8 on tf32 pairs for float32), the scores and the output accumulators in
/// registers in the documented fragment layout, the probabilities turned into the next mma's
/// operand in registers (as FlashAttention-2 does), keys and values in shared memory (half keys
/// and values read by ldmatrix, four 8x8 matrices at once). The key and value tiles are copied
/// by cp.async, each in flight while the other is used (WalkKeys), and only tiles that hold a
/// causal, past-the-end key or row check their scores. A mask's terms are copied with the value
/// tile where its rows are 16-byte aligned (the 16-bit forms), else loaded into registers
/// before the tile's scores; tiles the mask drops whole are skipped (KeyRange at a block's
/// ends, a warp's softmax and p v inside). It extends the template of AttentionKernelTemplate
/// (its helpers and Forward).
///
/// On the H200 ([8, 12, 512, 64], the kernels' cubins side by side, before -> after these
/// changes; PyTorch's kernels in brackets): float16 causal 58 -> 39 us (flash 30), float32
/// causal 186 -> 115 (CUTLASS's memory-efficient 159), a causal [B, 1, S, S] float mask:
/// float16 99 -> 62, float32 317 -> 206.
#include "backends/cuda/attention_kernel_source.h"

namespace cinn_like::backends {

const char* AttentionMmaTemplate() {
  return R"cuda(// Fused attention on tensor cores (cinn_like library kernel), sm_80 and later.
#if __CUDA_ARCH__ >= 800
namespace cinn_like_attention {

static __device__ __forceinline__ unsigned Pack(__half, float lo, float hi) {
  __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<unsigned*>(&h);
}
static __device__ __forceinline__ unsigned Pack(__nv_bfloat16, float lo, float hi) {
  __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<unsigned*>(&h);
}

// d += a b for a 16x16 (row) by 16x8 (col) tile; thread (g = lane / 4, t = lane % 4) holds
// a: (g, 2t..2t+1), (g+8, 2t..), (g, 2t+8..), (g+8, 2t+8..); b: (2t..2t+1, g), (2t+8.., g);
// d: (g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1). One overload per element type.
#define CINN_LIKE_ATTENTION_MMA(T, kind)                                                      \
  static __device__ __forceinline__ void Mma(float* d, const unsigned* a, unsigned b0,        \
                                             unsigned b1, T) {                                \
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." kind "." kind                      \
                 ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"   \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                             \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));             \
  }
CINN_LIKE_ATTENTION_MMA(__half, "f16")
CINN_LIKE_ATTENTION_MMA(__nv_bfloat16, "bf16")
#undef CINN_LIKE_ATTENTION_MMA

// The a operand of rows [r, r + 16) x columns [c, c + 16) of a row-major tile, as it lies.
template <typename T, int kW>
__device__ __forceinline__ void RowMajorA(const T (*tile)[kW], int r, int c, unsigned* a) {
  const int g = threadIdx.x % 32 / 4, t = threadIdx.x % 4;
  a[0] = *reinterpret_cast<const unsigned*>(&tile[r + g][c + 2 * t]);
  a[1] = *reinterpret_cast<const unsigned*>(&tile[r + g + 8][c + 2 * t]);
  a[2] = *reinterpret_cast<const unsigned*>(&tile[r + g][c + 2 * t + 8]);
  a[3] = *reinterpret_cast<const unsigned*>(&tile[r + g + 8][c + 2 * t + 8]);
}

// The b operand (16 x 8) of rows [r, r + 16) x columns [c, c + 8) of a row-major tile, read
// transposed by ldmatrix (the tile's rows are the operand's k).
template <typename T, int kW>
__device__ __forceinline__ void TransposedB(const T (*tile)[kW], int r, int c, unsigned& b0,
                                            unsigned& b1) {
  const unsigned at =
      static_cast<unsigned>(__cvta_generic_to_shared(&tile[r + (threadIdx.x & 15)][c]));
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(b0), "=r"(b1)
               : "r"(at));
}

// rows [r0, r0 + kRows) x columns [0, kD) of a row-major [n, ld] tensor into tile, zero outside
// rows < n and columns < ld: 16-byte vectors when every row is aligned to 16 bytes, else one
// element a thread step. A tile's row is padded by one such vector (kD + 16 / sizeof(T)
// elements), so that the rows a warp reads at once start in different banks.
template <typename T, int kRows, int kD>
__device__ __forceinline__ void LoadTile(T (*tile)[kD + 16 / sizeof(T)], const T* __restrict__ src,
                                         int r0, int n, int ld) {
  constexpr int kVec = 16 / sizeof(T);
  if (ld % kVec == 0 && reinterpret_cast<unsigned long long>(src) % 16 == 0) {
    for (int x = threadIdx.x; x < kRows * kD / kVec; x += 128) {
      const int r = x / (kD / kVec), c = kVec * (x % (kD / kVec));
      uint4 val = make_uint4(0, 0, 0, 0);
      if (r0 + r < n && c < ld) {
        val = *reinterpret_cast<const uint4*>(src + (long long)(r0 + r) * ld + c);
      }
      *reinterpret_cast<uint4*>(&tile[r][c]) = val;
    }
    return;
  }
  for (int x = threadIdx.x; x < kRows * kD; x += 128) {
    const int r = x / kD, c = x % kD;
    tile[r][c] = r0 + r < n && c < ld ? src[(long long)(r0 + r) * ld + c] : FromFloat<T>(0.f);
  }
}

// LoadTile's copy as cp.async, 16 bytes a thread step (zero-filled outside rows < n and columns
// < ld), where every row is aligned to 16 bytes; else LoadTile itself (its stores are done when
// it returns). The caller commits, waits (CpAsyncWait) and then passes a barrier.
template <typename T, int kRows, int kD>
__device__ __forceinline__ void LoadTileAsync(T (*tile)[kD + 16 / sizeof(T)],
                                              const T* __restrict__ src, int r0, int n, int ld) {
  constexpr int kVec = 16 / sizeof(T);
  static_assert(kRows * kD % (kVec * 128) == 0, "tile");
  if (ld % kVec != 0 || reinterpret_cast<unsigned long long>(src) % 16 != 0) {
    LoadTile<T, kRows, kD>(tile, src, r0, n, ld);
    return;
  }
#pragma unroll 1  // unrolled, each copy's address is kept live: 30-40 more registers
  for (int it = 0; it < kRows * kD / (kVec * 128); ++it) {
    const int x = threadIdx.x + 128 * it, r = x / (kD / kVec), c = kVec * (x % (kD / kVec));
    const bool in = r0 + r < n && c < ld;
    const T* from = in ? src + (long long)(r0 + r) * ld + c : src;
    const unsigned to = static_cast<unsigned>(__cvta_generic_to_shared(&tile[r][c]));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :
                 : "r"(to), "l"(from), "r"(in ? 16 : 0));
  }
}
__device__ __forceinline__ void CpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::); }
// Every group committed but the last `kPending` is done (this thread's copies).
template <int kPending>
__device__ __forceinline__ void CpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

// The b operands of two k steps (16 x 8 each) of keys [r, r + 8) x head-dim columns [c, c + 32)
// of a row-major key tile, by one ldmatrix: a key's row is the operand's column as it lies
// (b[0], b[1]: columns c .. c + 15; b[2], b[3]: c + 16 .. c + 31).
template <typename T, int kW>
__device__ __forceinline__ void KeyB(const T (*tile)[kW], int r, int c, unsigned (&b)[4]) {
  const int lane = threadIdx.x % 32;
  const unsigned at =
      static_cast<unsigned>(__cvta_generic_to_shared(&tile[r + (lane & 7)][c + (lane >> 3) * 8]));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
               : "r"(at));
}

// TransposedB of columns [c, c + 8) (b[0], b[1]) and [c + 8, c + 16) (b[2], b[3]) by one
// ldmatrix.
template <typename T, int kW>
__device__ __forceinline__ void TransposedB2(const T (*tile)[kW], int r, int c, unsigned (&b)[4]) {
  const int lane = threadIdx.x % 32;
  const unsigned at =
      static_cast<unsigned>(__cvta_generic_to_shared(&tile[r + (lane & 15)][c + (lane >> 4) * 8]));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
               : "r"(at));
}

// The query tile and (batch x head) of this block: the grid's (x, y) as they are, or where later
// query tiles may walk more keys (`uneven`: a causal or masked kernel), the tiles in reverse
// order across the whole grid (every head's last tile first), so that the longest blocks start
// first and the short ones fill the last wave.
__device__ __forceinline__ void BlockTile(bool uneven, int& tile, int& bh) {
  tile = blockIdx.x;
  bh = blockIdx.y;
  if (uneven) {
    const unsigned at = blockIdx.x + gridDim.x * blockIdx.y;
    bh = at % gridDim.y;
    tile = gridDim.x - 1 - at / gridDim.y;
  }
}

// The key walk of both tensor-core forms over tiles [kv_begin, kv_end) of kBN keys: load_keys(j0)
// and load_values(j0) copy a key tile and a value tile (with what the softmax reads, a staged
// mask tile) by cp.async, each copy in flight while the other buffer is used: the next key
// tile while the softmax and p v run, the next value tile while the next scores are computed.
// scores(j0) reads the key tile, softmax(j0) and accumulate() what load_values copied.
template <int kBN, typename LoadKeys, typename LoadValues, typename Scores, typename Softmax,
          typename Accumulate>
__device__ __forceinline__ void WalkKeys(int kv_begin, int kv_end, LoadKeys load_keys,
                                         LoadValues load_values, Scores scores, Softmax softmax,
                                         Accumulate accumulate) {
  const int tiles = (kv_end - kv_begin + kBN - 1) / kBN;
  if (tiles == 0) return;  // no copy left in flight at exit
  __syncthreads();  // every warp is done with the query tile
  load_keys(kv_begin);
  CpAsyncCommit();
  load_values(kv_begin);
  CpAsyncCommit();
  for (int it = 0; it < tiles; ++it) {
    const int j0 = kv_begin + it * kBN;
    CpAsyncWait<1>();  // the key tile (the value tile may be in flight)
    __syncthreads();
    scores(j0);
    __syncthreads();  // every warp is done with the key tile
    if (it + 1 < tiles) load_keys(j0 + kBN);
    CpAsyncCommit();
    CpAsyncWait<1>();  // the value tile (the next key tile may be in flight)
    __syncthreads();
    softmax(j0);
    accumulate();
    __syncthreads();  // every warp is done with the value tile
    if (it + 1 < tiles) load_values(j0 + kBN);
    CpAsyncCommit();
  }
}

// Whether the mask's rows can be read 16 bytes at a time: keys contiguous, every row and the
// key count a multiple of 16 bytes (a tile's row is then whole vectors in or out of range).
template <typename M>
__device__ __forceinline__ bool MaskVectors(const M* mask, long long mask_bh, long long msi,
                                            long long msj, int lk) {
  constexpr int kPer = 16 / sizeof(M);
  return msj == 1 && msi % kPer == 0 && lk % kPer == 0 && mask_bh % kPer == 0 &&
         reinterpret_cast<unsigned long long>(mask) % 16 == 0;
}

// Whether the mask keeps some key of rows [q0, q0 + kBM) x keys [j0, j0 + kBN) (a term not
// -inf) among the terms this thread reads, 16 bytes a load (the mask's rows aligned, keys
// contiguous), neighbouring threads neighbouring keys, every load in flight at once.
template <typename M, int kBM, int kBN>
__device__ __forceinline__ bool KeepsAKey(const M* mask, long long mask_bh, long long msi, int q0,
                                          int j0, int lq, int lk) {
  constexpr int kPer = 16 / sizeof(M), kRowVectors = kBN / kPer;
  bool any = false;
#pragma unroll
  for (int x = threadIdx.x; x < kBM * kRowVectors; x += 128) {
    const int i = q0 + x / kRowVectors, j = j0 + x % kRowVectors * kPer;
    if (i < lq && j < lk) {  // lk is a multiple of kPer
      __align__(16) M terms[kPer];
      *reinterpret_cast<uint4*>(terms) =
          *reinterpret_cast<const uint4*>(mask + mask_bh + i * msi + j);
#pragma unroll
      for (int e = 0; e < kPer; ++e) any |= MaskTerm(terms, e) != -CUDART_INF_F;
    }
  }
  return any;
}

// The key tiles a block walks, [begin, end) (multiples of kBN from 0): [0, lk), or up to its last
// row's key where causal, and without a mask's leading and trailing tiles that drop every key
// of the block's rows (a causal or sliding-window mask's), found by reading those tiles' terms
// once (where 16-byte reads can), while the query tile is copied: such a tile would be copied
// and its scores computed for nothing to be added. A walk of two tiles or fewer is kept whole.
// H200, a window of 128 keys of 1000: float16 94 -> 45 us, float32 354 -> 131.
template <typename M, int kBM, int kBN>
__device__ __forceinline__ void KeyRange(const M* mask, long long mask_bh, long long msi,
                                         long long msj, int q0, int lq, int lk, int causal,
                                         int& begin, int& end) {
  begin = 0;
  end = causal ? min(lk, q0 + kBM) : lk;
  if (!HasMask<M>::value || end <= 2 * kBN || !MaskVectors(mask, mask_bh, msi, msj, lk)) return;
  while (end > begin && !__syncthreads_or(KeepsAKey<M, kBM, kBN>(
                            mask, mask_bh, msi, q0, (end - 1) / kBN * kBN, lq, lk))) {
    end = (end - 1) / kBN * kBN;
  }
  while (begin < end &&
         !__syncthreads_or(KeepsAKey<M, kBM, kBN>(mask, mask_bh, msi, q0, begin, lq, lk))) {
    begin += kBN;
  }
}

// The online softmax's running max (log2 units) and sum of a warp's rows row0 = q0 + 16 warp + g
// and row1 = row0 + 8, scores in the m16n8 accumulator layout: thread (g = lane / 4, t = lane %
// 4) holds columns 2t, 2t + 1 of every block of 8, elements 0, 1 of row0 and 2, 3 of row1.
struct RowState {
  float m0 = -CUDART_INF_F, m1 = -CUDART_INF_F, l0 = 0.f, l1 = 0.f;
};

// What the softmax of a warp's rows needs besides the scores: the mask and its strides, the
// rows (row0 = q0 + 16 warp + g, row1 = row0 + 8) and sizes, the scale (and scale log2(e)),
// dropout's draw.
template <typename M>
struct SoftmaxArgs {
  const M* mask;
  long long mask_bh, msi, msj;
  int row0, q0, lq, lk, causal;
  float scale, scale_log2;
  long long seed, stream;
  int bh;
  float keep_below, inv_keep;
};

// Two neighbouring keys' mask terms as a warp keeps them between LoadMaskTile and the softmax:
// float masks as float pairs, 16-bit ones as they are (half the registers), bool ones as half
// pairs of 0 or -inf.
template <typename M> struct MaskPair { typedef float2 type; };
template <> struct MaskPair<__half> { typedef __half2 type; };
template <> struct MaskPair<bool> { typedef __half2 type; };
template <> struct MaskPair<__nv_bfloat16> { typedef __nv_bfloat162 type; };
__device__ __forceinline__ float2 TermPair(float2 x) { return x; }
__device__ __forceinline__ float2 TermPair(__half2 x) { return __half22float2(x); }
__device__ __forceinline__ float2 TermPair(__nv_bfloat162 x) { return __bfloat1622float2(x); }
__device__ __forceinline__ void MakePair(float2& p, float a, float b) { p = make_float2(a, b); }
__device__ __forceinline__ void MakePair(__half2& p, float a, float b) {
  p = __floats2half2_rn(a, b);
}
__device__ __forceinline__ void MakePair(__nv_bfloat162& p, float a, float b) {
  p = __floats2bfloat162_rn(a, b);
}
// The pair at `at`, `at + 1` by one load (aligned to the pair).
template <typename M>
__device__ __forceinline__ void LoadPair(const M* m, long long at, typename MaskPair<M>::type& p) {
  p = *reinterpret_cast<const typename MaskPair<M>::type*>(m + at);
}
__device__ __forceinline__ void LoadPair(const bool* m, long long at, __half2& p) {
  const uchar2 x = *reinterpret_cast<const uchar2*>(m + at);
  MakePair(p, x.x ? 0.f : -CUDART_INF_F, x.y ? 0.f : -CUDART_INF_F);
}
__device__ __forceinline__ void LoadPair(const NoMask*, long long, float2& p) {
  p = make_float2(0.f, 0.f);
}

// The mask terms of a warp's rows at keys j0 .. j0 + 8 kKeyBlocks, mt[n][r] row r's (row0,
// row1) keys j0 + 8n + 2t, + 1 (-inf outside rows < lq and keys < lk), loaded before the tile's
// scores are computed so that the loads are in flight meanwhile: the two keys by one load where
// the mask's keys are contiguous and every row starts aligned, and row1's terms read once where
// the mask broadcasts over the rows (a padding mask).
template <typename M, int kKeyBlocks>
__device__ __forceinline__ void LoadMaskTile(typename MaskPair<M>::type (&mt)[kKeyBlocks][2],
                                             const SoftmaxArgs<M>& a, int j0) {
  const M* mask = a.mask;
  const int t = threadIdx.x % 4, j = j0 + 2 * t;
  const long long at0 = a.mask_bh + a.row0 * a.msi + j * a.msj, at1 = at0 + 8 * a.msi;
  const bool pairs = a.msj == 1 && (at0 & 1) == 0 && (a.msi & 1) == 0 &&
                     reinterpret_cast<unsigned long long>(mask) % (2 * sizeof(M)) == 0;
  const bool in0 = a.row0 < a.lq, in1 = a.row0 + 8 < a.lq, broadcast = a.msi == 0;
#pragma unroll
  for (int n = 0; n < kKeyBlocks; ++n) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const long long at = (r ? at1 : at0) + n * 8 * a.msj;
      const int jn = j + n * 8;
      if (r == 1 && broadcast && in1) {
        mt[n][1] = mt[n][0];
      } else if ((r ? in1 : in0) && pairs && jn + 1 < a.lk) {
        LoadPair(mask, at, mt[n][r]);
      } else {
        const bool in = r ? in1 : in0;
        MakePair(mt[n][r], in && jn < a.lk ? MaskTerm(mask, at) : -CUDART_INF_F,
                 in && jn + 1 < a.lk ? MaskTerm(mask, at + a.msj) : -CUDART_INF_F);
      }
    }
  }
}

// The mask's rows [q0, q0 + kBM) x keys [j0, j0 + kBN) into shared memory by cp.async, 16 bytes
// a copy (MaskVectors), zero outside rows < lq and keys < lk (the softmax checks those).
template <typename M, int kBM, int kBN>
__device__ __forceinline__ void StageMaskTile(M (*ms)[kBN + 16 / sizeof(M)],
                                              const SoftmaxArgs<M>& a, int j0) {
  constexpr int kPer = 16 / sizeof(M), kRowVectors = kBN / kPer;
#pragma unroll 1
  for (int it = 0; it < kBM * kRowVectors / 128; ++it) {
    const int x = threadIdx.x + 128 * it, r = x / kRowVectors, c = x % kRowVectors * kPer;
    const int i = a.q0 + r, j = j0 + c;
    const bool in = i < a.lq && j < a.lk;
    const M* from = in ? a.mask + a.mask_bh + i * a.msi + j : a.mask;
    const unsigned to = static_cast<unsigned>(__cvta_generic_to_shared(&ms[r][c]));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :
                 : "r"(to), "l"(from), "r"(in ? 16 : 0));
  }
}

// args with the staged tile of key tile j0 as its mask: rows from q0, keys from j0.
template <typename M, int kBN>
__device__ __forceinline__ SoftmaxArgs<M> StagedMask(const SoftmaxArgs<M>& args,
                                                     const M (*ms)[kBN + 16 / sizeof(M)],
                                                     int j0) {
  SoftmaxArgs<M> view = args;
  view.mask = &ms[0][0];
  view.mask_bh = 0;
  view.msi = kBN + 16 / sizeof(M);
  view.msj = 1;
  view.row0 = args.row0 - args.q0;
  view.lq = args.lq - args.q0;
  view.lk = args.lk - j0;
  return view;
}

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

// Whether some mask term of the warp's rows in the tile is not -inf.
template <typename P, int kKeyBlocks>
__device__ __forceinline__ bool AnyKept(const P (&mt)[kKeyBlocks][2]) {
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
// False, with nothing done, where the mask drops every key of the tile for the warp's rows (a
// causal mask's tiles past the diagonal): their probabilities are 0 and the tile adds nothing.
template <typename M, int kBM, int kBN, int kKeyBlocks, int kOutBlocks, bool kDrop>
__device__ __forceinline__ bool Softmax(float (&s)[kKeyBlocks][4], float (&o)[kOutBlocks][4],
                                        const typename MaskPair<M>::type (&mt)[kKeyBlocks][2],
                                        RowState& rows, const SoftmaxArgs<M>& a, int j0) {
  if (HasMask<M>::value && !AnyKept(mt)) return false;
  if (j0 + kBN > a.lk || a.q0 + kBM > a.lq || (a.causal && j0 + kBN > a.q0 + 1)) {
    SoftmaxTile<M, kKeyBlocks, kOutBlocks, kDrop, true>(s, o, mt, rows, a, j0);
  } else {
    SoftmaxTile<M, kKeyBlocks, kOutBlocks, kDrop, false>(s, o, mt, rows, a, j0);
  }
  return true;
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
    float keep_below, int& b, int& kvh, int& kv_begin, int& kv_end) {
  int tile, bh;
  BlockTile(causal || HasMask<M>::value, tile, bh);
  b = bh / heads;
  const int h = bh % heads, q0 = tile * kBM, warp = threadIdx.x / 32, g = threadIdx.x % 32 / 4;
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
  LoadTileAsync<T, kBM, kD>(qtile, q + (long long)bh * lq * d, q0, lq, d);
  CpAsyncCommit();
  KeyRange<M, kBM, kBN>(args.mask, args.mask_bh, msi, msj, q0, lq, lk, causal, kv_begin, kv_end);
  CpAsyncWait<0>();
  __syncthreads();
  return args;
}

// The output rows row0 and row1 (o over the row sums) and their logsumexp; a row without a
// kept key gets out 0 and logsumexp +inf.
template <typename T, int kOutBlocks>
__device__ __forceinline__ void StoreRows(const float (&o)[kOutBlocks][4], RowState rows,
                                          T* __restrict__ out, float* __restrict__ lse, int bh,
                                          int row0, int lq, int dv) {
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
        out[((long long)bh * lq + i) * dv + c] = FromFloat<T>(o[n][e] * (e < 2 ? inv0 : inv1));
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
    const long long* stream_ptr, float keep_below) {
  constexpr int kBM = 64, kBN = 64, kSteps = kD / 16, kKeyBlocks = kBN / 8, kOutBlocks = kD / 8;
  static_assert(kD % 32 == 0, "head dim");
  __shared__ __align__(16) T ks[kBN][kD + 8];  // the query tile first, then each key tile
  __shared__ __align__(16) T vs[kBN][kD + 8];
  // The mask's terms of each key tile, where its rows can be copied 16 bytes at a time and the
  // tiles fit in 48 KiB of shared memory (not float32 masks at head dim 128).
  constexpr bool kStage =
      HasMask<M>::value && 2 * kBN * (kD + 8) * sizeof(T) +
                                   kBM * (kBN + 16 / sizeof(M)) * sizeof(M) <= 48 * 1024;
  __shared__ __align__(16) M ms[kStage ? kBM : 1][kBN + 16 / sizeof(M)];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4;
  int b, kvh, kv_begin, kv_end;
  const SoftmaxArgs<M> args = StartBlock<T, M, kBM, kBN, kD, kDrop>(
      ks, q, mask_ptr, heads, kv_heads, lq, lk, d, scale, causal, msb, msh, msi, msj, seed_ptr,
      stream_ptr, keep_below, b, kvh, kv_begin, kv_end);
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
  const T* kb = k + (long long)(b * kv_heads + kvh) * lk * d;
  const T* vb = v + (long long)(b * kv_heads + kvh) * lk * dv;
  const bool staged = kStage && MaskVectors(args.mask, args.mask_bh, msi, msj, lk);
  WalkKeys<kBN>(
      kv_begin, kv_end, [&](int j0) { LoadTileAsync<T, kBN, kD>(ks, kb, j0, lk, d); },
      [&](int j0) {
        LoadTileAsync<T, kBN, kD>(vs, vb, j0, lk, dv);
        if (kStage && staged) StageMaskTile<M, kBM, kBN>(ms, args, j0);
      },
      [&](int j0) {
        if (HasMask<M>::value && !staged) LoadMaskTile(mt, args, j0);
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
        live = Softmax<M, kBM, kBN, kKeyBlocks, kOutBlocks, kDrop>(s, o, mt, rows, args, j0);
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
  StoreRows<T, kOutBlocks>(o, rows, out, lse, args.bh, args.row0, lq, dv);
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
    const long long* stream_ptr, float keep_below) {
  constexpr int kBM = 64, kBN = 64, kSteps = kD / 8, kKeyBlocks = kBN / 8, kOutBlocks = kD / 8;
  static_assert(kD % 32 == 0 && kD <= 64, "head dim");
  // Rows padded by 4 floats: the fragments' reads (8 rows by 4 columns, or 4 row pairs by 8
  // columns of the value tile) hit 32 distinct banks.
  __shared__ __align__(16) float ks[kBN][kD + 4];  // the query tile first, then each key tile
  __shared__ __align__(16) float vs[kBN][kD + 4];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
  int b, kvh, kv_begin, kv_end;
  const SoftmaxArgs<M> args = StartBlock<float, M, kBM, kBN, kD, kDrop>(
      ks, q, mask_ptr, heads, kv_heads, lq, lk, d, scale, causal, msb, msh, msi, msj, seed_ptr,
      stream_ptr, keep_below, b, kvh, kv_begin, kv_end);
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
  const float* kb = k + (long long)(b * kv_heads + kvh) * lk * d;
  const float* vb = v + (long long)(b * kv_heads + kvh) * lk * dv;
  WalkKeys<kBN>(
      kv_begin, kv_end, [&](int j0) { LoadTileAsync<float, kBN, kD>(ks, kb, j0, lk, d); },
      [&](int j0) { LoadTileAsync<float, kBN, kD>(vs, vb, j0, lk, dv); },
      [&](int j0) {
        if (HasMask<M>::value) {
          // Three products a score: where the mask drops every key of the tile for the warp's
          // rows, waiting for its terms costs less than the scores (H200, a causal [B, 1, S, S]
          // mask: 246 -> 233 us).
          LoadMaskTile(mt, args, j0);
          live = AnyKept(mt);
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
        live = Softmax<M, kBM, kBN, kKeyBlocks, kOutBlocks, kDrop>(s, o, mt, rows, args, j0);
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
  StoreRows<float, kOutBlocks>(o, rows, out, lse, args.bh, args.row0, lq, dv);
}

}  // namespace cinn_like_attention
#endif

)cuda";
}

}  // namespace cinn_like::backends
