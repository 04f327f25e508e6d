/// \file The tiles of the fused attention kernel's tensor-core forms as CUDA C text, sm_80 and
/// later (AttentionTileTemplate, printed between AttentionKernelTemplate and the forms of
/// attention_mma_source.cc): mma.sync and its fragments (16-bit keys and values read by
/// ldmatrix, four 8x8 matrices at once), tiles copied by cp.async, the key walk that keeps the
/// next key or value tile in flight while the other is used (WalkKeys), and a mask's tiles: its
/// terms loaded into registers before a tile's scores or staged in shared memory with the value
/// tile (16-byte aligned rows), and the leading and trailing key tiles it drops whole found
/// before the walk (KeyRange).
#include "backends/cuda/attention_kernel_source.h"

namespace cinn_like::backends {

const char* AttentionTileTemplate() {
  return R"cuda(// Fused attention's tensor-core tiles (cinn_like library kernel), sm_80 and later.
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

// Whether rows of `ld` elements, `rs` apart from `src`, each start on a 16-byte boundary.
template <typename T>
__device__ __forceinline__ bool RowsAligned(const T* src, int ld, long long rs) {
  constexpr int kVec = 16 / sizeof(T);
  return ld % kVec == 0 && rs % kVec == 0 && reinterpret_cast<unsigned long long>(src) % 16 == 0;
}

// rows [r0, r0 + kRows) x columns [0, kD) of a [n, ld] tensor whose rows are `rs` elements
// apart (ld where it is row-major; more where its rows are a head's of [B, S, H, D]) into tile,
// zero outside rows < n and columns < ld: 16-byte vectors when every row is aligned to 16
// bytes, else one element a thread step. A tile's row is padded by one such vector
// (kD + 16 / sizeof(T) elements), so that the rows a warp reads at once start in different banks.
template <typename T, int kRows, int kD>
__device__ __forceinline__ void LoadTile(T (*tile)[kD + 16 / sizeof(T)], const T* __restrict__ src,
                                         int r0, int n, int ld, long long rs) {
  constexpr int kVec = 16 / sizeof(T);
  if (RowsAligned(src, ld, rs)) {
    for (int x = threadIdx.x; x < kRows * kD / kVec; x += 128) {
      const int r = x / (kD / kVec), c = kVec * (x % (kD / kVec));
      uint4 val = make_uint4(0, 0, 0, 0);
      if (r0 + r < n && c < ld) {
        val = *reinterpret_cast<const uint4*>(src + (long long)(r0 + r) * rs + c);
      }
      *reinterpret_cast<uint4*>(&tile[r][c]) = val;
    }
    return;
  }
  for (int x = threadIdx.x; x < kRows * kD; x += 128) {
    const int r = x / kD, c = x % kD;
    tile[r][c] = r0 + r < n && c < ld ? src[(long long)(r0 + r) * rs + c] : FromFloat<T>(0.f);
  }
}

// 16 bytes from global `from` to shared `to` by cp.async; zeros where !in (`from` is then only
// a valid address, not read).
__device__ __forceinline__ void CpAsync16(void* to, const void* from, bool in) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
               :
               : "r"(static_cast<unsigned>(__cvta_generic_to_shared(to))), "l"(from),
                 "r"(in ? 16 : 0));
}

// LoadTile's copy as cp.async, 16 bytes a thread step (zero-filled outside rows < n and columns
// < ld), where every row is aligned to 16 bytes; else LoadTile itself (its stores are done when
// it returns). The caller commits, waits (CpAsyncWait) and then passes a barrier.
template <typename T, int kRows, int kD>
__device__ __forceinline__ void LoadTileAsync(T (*tile)[kD + 16 / sizeof(T)],
                                              const T* __restrict__ src, int r0, int n, int ld,
                                              long long rs) {
  constexpr int kVec = 16 / sizeof(T);
  static_assert(kRows * kD % (kVec * 128) == 0, "tile");
  if (!RowsAligned(src, ld, rs)) {
    LoadTile<T, kRows, kD>(tile, src, r0, n, ld, rs);
    return;
  }
#pragma unroll 1  // unrolled, each copy's address is kept live: 30-40 more registers
  for (int it = 0; it < kRows * kD / (kVec * 128); ++it) {
    const int x = threadIdx.x + 128 * it, r = x / (kD / kVec), c = kVec * (x % (kD / kVec));
    const bool in = r0 + r < n && c < ld;
    CpAsync16(&tile[r][c], in ? src + (long long)(r0 + r) * rs + c : src, in);
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
    CpAsync16(&ms[r][c], in ? a.mask + a.mask_bh + i * a.msi + j : a.mask, in);
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

// A mask that broadcasts over the query rows (msi 0: a padding mask's keys test) as one row of
// kBN terms a key tile: copied into shared memory by cp.async with the key tile, 16 bytes a copy
// (MaskVectors), zero past lk (the softmax checks those); read from there by LoadMaskTile
// (StagedMaskRow), so that a tile's terms cost no wait on global memory. H200, BERT's float32
// padding mask [B, 1, 1, S] read from global memory each tile: 342 us against CUTLASS's 230.
template <typename M, int kBN>
__device__ __forceinline__ void StageMaskRow(M* row, const SoftmaxArgs<M>& a, int j0) {
  constexpr int kPer = 16 / sizeof(M);
  for (int x = threadIdx.x; x < kBN / kPer; x += 128) {
    const int j = j0 + x * kPer;
    const bool in = j < a.lk;
    CpAsync16(row + x * kPer, in ? a.mask + a.mask_bh + j : a.mask, in);
  }
}

// args with the staged row of key tile j0 (StageMaskRow) as its mask: keys from j0, read with
// j0 = 0.
template <typename M>
__device__ __forceinline__ SoftmaxArgs<M> StagedMaskRow(const SoftmaxArgs<M>& args, const M* row,
                                                        int j0) {
  SoftmaxArgs<M> view = args;
  view.mask = row;
  view.mask_bh = 0;
  view.msi = 0;
  view.msj = 1;
  view.lk = args.lk - j0;
  return view;
}

// Whether the block's mask is staged a row a key tile (StageMaskRow): it broadcasts over the
// query rows and its rows can be copied 16 bytes at a time.
template <typename M>
__device__ __forceinline__ bool StagesMaskRow(const SoftmaxArgs<M>& a) {
  return HasMask<M>::value && a.msi == 0 && MaskVectors(a.mask, a.mask_bh, a.msi, a.msj, a.lk);
}

}  // namespace cinn_like_attention
#endif

)cuda";
}

}  // namespace cinn_like::backends
