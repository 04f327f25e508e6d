/// \file The attention op (scaled dot-product attention, PyTorch's semantics) shared by its
/// files: attention.cc (inference, float64 reference, registration), attention_compute.cc (the
/// decomposed compute in lang: q kᵀ, a masked softmax and p v, for the cases the library
/// computes below decline), attention_kernel.cc (the fused flash-attention kernel on NVGPU, whose
/// CUDA template lives in backends/cuda/attention_kernel_source.cc) and attention_library.cc
/// (x86: q kᵀ and p v as library matmuls around a generated softmax).
///
///   attention(q [B, H, Lq, D], k [B, Hkv, Lk, D], v [B, Hkv, Lk, Dv], [mask],
///             [seed [1], stream [1]]) -> (out [B, H, Lq, Dv] of q's dtype, logsumexp [B, H, Lq])
///
/// Head h reads key/value head h / (H / Hkv) (grouped-query attention: H a multiple of Hkv).
/// The score of query i and key j is s = scale * q_i·k_j, plus the mask where it is a float
/// (additive, broadcast to [B, H, Lq, Lk]); a bool mask keeps the keys where it is true, and
/// `causal` keeps j <= i (PyTorch's top-left aligned tril). out_i = Σ_j softmax(s)_j v_j and
/// logsumexp_i = log Σ_j exp(s_j) (natural log, over the kept keys). A row with no kept key has
/// out = 0 and logsumexp = +inf, so that exp(s - logsumexp) is 0 for it (backward recomputes
/// the probabilities that way). Attributes: `scale` (float, default 1/sqrt(D)), `causal` (bool,
/// default false), `dropout` (float p in [0, 1), default 0).
///
/// Dropout (p > 0: the last two inputs are int64 [1] tensors, the seed and the stream of
/// random_uniform, hlir/ops/random.cc): probability (b, h, i, j) is kept where
/// PhiloxUniform(seed, stream, ((b H + h) Lq + i) Lk + j) < 1 - p, and scaled by 1 / (1 - p),
/// before p v; the logsumexp is the undropped softmax's. A backward recomputes the same mask as
/// random_uniform(seed, stream) of shape [B, H, Lq, Lk] (the decomposed backward of the torch
/// backend does), as PyTorch's fused attention forms recompute theirs from the state they save.
///
/// Its backward (attention_grad.cc, the fused GPU kernel attention_grad_kernel.cc, decomposed in
/// lang in attention_grad_compute.cc):
///
///   attention_grad(q, k, v, out, grad_out [B, H, Lq, Dv], logsumexp [B, H, Lq] float32, [mask],
///                  [seed, stream]) -> (dk of k's shape and dtype, dv of v's,
///                                      dqk [B, H, Lq, Lk] of q's dtype)
///
/// with attention's attributes and inputs' meaning. With P = exp(s - logsumexp) (0 where a key
/// is not kept or s is -inf), W dropout's weights (1 without dropout), dP = grad_out vᵀ and
/// Di = rowsum(grad_out ∘ out): dS = P ∘ (dP ∘ W - Di); dqk = scale · dS, the gradient of the
/// products q kᵀ (dq = dqk k, a matmul the caller runs: a grouped head's g query heads as g·Lq
/// rows); dk = dqkᵀ q and dv = (P ∘ W)ᵀ grad_out, each summed over the query heads of its group.
/// Accumulation in float32 (float64 for float64); dqk is rounded once to q's dtype.
#pragma once

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "absl/types/span.h"

#include "hlir/op.h"
#include "ir/attention_kernel_spec.h"

namespace cinn_like::hlir::ops {

/// Where attention's operands lie. Attributes `q_perm`, `k_perm`, `v_perm`, `out_perm` (each a
/// permutation of [0, 1, 2, 3] keeping 3 last; absent: the identity): input q is stored so that
/// the op's [B, H, Lq, D] operand is transpose(input 0, q_perm) (likewise k and v), and output 0
/// is transpose(out, out_perm) of the op's [B, H, Lq, Dv] out; `q_heads`, `k_heads`, `v_heads`
/// ([first, count]; absent: all): the operand is heads [first, first + count) of that transpose
/// (a static head axis). The logsumexp is [B, H, Lq] whatever the layout. HF's q [B, S, H, D]
/// transposed to [B, H, S, D] is read where it lies with q_perm [0, 2, 1, 3], GPT-2's q, k and v
/// where its fused projection wrote them ([B, S, 3H, D], heads [0, H), [H, H), [2H, H))
/// (hlir/pass/attention_layout.h folds such views), as PyTorch's and FlashAttention's kernels
/// take strided operands. attention_grad takes none of these.
/// The layout's attribute names, in operand order (q, k, v, out; q, k, v).
inline constexpr const char* kAttentionPermAttrs[] = {"q_perm", "k_perm", "v_perm", "out_perm"};
inline constexpr const char* kAttentionHeadsAttrs[] = {"q_heads", "k_heads", "v_heads"};
struct AttentionLayout {
  using Perm = std::array<int, 4>;
  static constexpr Perm kIdentity = {0, 1, 2, 3};
  std::array<Perm, 4> perms{{{0, 1, 2, 3}, {0, 1, 2, 3}, {0, 1, 2, 3}, {0, 1, 2, 3}}};  // q k v out
  std::array<std::array<int64_t, 2>, 3> heads{{{0, -1}, {0, -1}, {0, -1}}};  // count -1: all
  bool identity() const;
};
/// The layout of a node of op `op` (errors name it and the attribute).
absl::StatusOr<AttentionLayout> ReadAttentionLayout(const AttributeMap& attrs,
                                                    const std::string& op);
/// `stored` transposed by `p` (result[d] = stored[p[d]]): an input's logical shape from its
/// stored one, and out's stored shape from its logical one (p its out_perm); with out_perm's
/// inverse, out's logical shape from its stored one.
template <typename S>
S AttentionLogicalShape(const S& stored, const AttentionLayout::Perm& p) {
  S logical(4);
  for (int d = 0; d < 4; ++d) logical[d] = stored[p[d]];
  return logical;
}
/// The [B, H, L, D] shape of operand `o` (0 q, 1 k, 2 v) stored as `stored`: transposed by its
/// perm, its heads counted.
Shape AttentionOperandShape(const Shape& stored, const AttentionLayout& l, int o);
std::vector<ir::Expr> AttentionOperandShape(const std::vector<ir::Expr>& stored,
                                            const AttentionLayout& l, int o);
AttentionLayout::Perm InversePerm(const AttentionLayout::Perm& p);
/// The element strides of the batch, head and row axes of operand `o` (0 q, 1 k, 2 v, 3 out)
/// stored row-major as `stored`, and the offset of its first element (its first head's).
std::vector<ir::Expr> AttentionOperandStrides(const std::vector<ir::Expr>& stored,
                                              const AttentionLayout& l, int o);
/// Operand `o` (0 q, 1 k, 2 v) as a [B, H, L, D] host tensor (the reference's operands), and
/// out, computed as [B, H, L, Dv], as stored (`out_perm`).
HostTensor AttentionOperandHost(const HostTensor& stored, const AttentionLayout& l, int o);
HostTensor AttentionOutputHost(const HostTensor& out, const AttentionLayout& l);
/// `compute` (which takes [B, H, L, D] operands) for a node with a layout: the operands read
/// where they lie, out stored transposed.
ComputeFn WithAttentionLayout(ComputeFn compute);

/// attention's shape and dtype inference (q, k, v, [mask], [seed, stream]), whose errors name
/// the op attention and its inputs.
absl::StatusOr<std::vector<TensorDesc>> InferAttention(const std::vector<TensorDesc>& in,
                                                       const AttributeMap& attrs);

/// The attention attributes, read once for the inference, the reference and the computes.
struct AttentionAttrs {
  double scale = 1;
  bool causal = false;
  double dropout = 0;     // p: a probability dropped with p, the kept ones scaled by 1 / (1 - p)
  bool has_mask = false;  // input 3 is the mask
};
/// The attributes for a head dimension `head_dim` (-1 when symbolic: then `scale` is required)
/// and `num_inputs` inputs (which say, with `dropout`, whether there is a mask).
absl::StatusOr<AttentionAttrs> ReadAttentionAttrs(const AttributeMap& attrs, int64_t head_dim,
                                                  size_t num_inputs);

/// Which input of a node of op `op` with `attrs` and `num_inputs` inputs is its mask: attention's
/// inputs are (q, k, v, [mask], [seed, stream]), attention_grad's (q, k, v, out, grad_out,
/// logsumexp, [mask], [seed, stream]); -1 for other ops and nodes without a mask.
int AttentionMaskInput(const std::string& op, const AttributeMap& attrs, size_t num_inputs);

/// The float64 references' masking (attention.cc, attention_grad.cc): the score and dropout
/// weight of (b, h, i, j) from attention's inputs `fwd` (q, k, v, [mask], [seed, stream]).
class ReferenceMasking {
 public:
  ReferenceMasking(const AttentionAttrs& a, const std::vector<const HostTensor*>& fwd);
  /// scale · dot plus a float mask; -inf where the key is not kept (causal, a bool mask).
  double Score(double dot, int64_t b, int64_t h, int64_t i, int64_t j) const;
  /// Dropout's weight of the probability at row-major index `at` of [B, H, Lq, Lk]: 1 / (1 - p)
  /// kept, 0 dropped; 1 without dropout.
  double Weight(uint64_t at) const;

 private:
  AttentionAttrs a_;
  const HostTensor* mask_ = nullptr;
  uint64_t seed_ = 0, stream_ = 0;
  double keep_below_ = 1;
};

/// The score of (b, h, i, j) from the products `qk` [B, H, Lq, Lk] in type `acc`: scaled, the
/// float mask (in[3], broadcast) added, -inf where a key is not kept (a bool mask, `causal`).
std::function<ir::Expr(const std::vector<ir::Expr>&)> MaskedScore(const ir::Tensor& qk,
                                                                  const AttentionAttrs& a,
                                                                  const std::vector<ir::Tensor>& in,
                                                                  ir::Type acc);

/// The dropout factor of (b, h, i, j) in type `acc` (1 / (1 - p) where kept, else 0) from the
/// seed and stream inputs; null without dropout.
std::function<ir::Expr(const std::vector<ir::Expr>&)> DropoutFactor(
    const AttentionAttrs& a, const std::vector<ir::Tensor>& in, ir::Type acc);

/// The fused kernels' name for an element or mask dtype (float32, float16, bfloat16), or null.
const char* AttentionKernelDType(const ir::Type& t);
/// The <mask> part of a kernel's name: "none" without a mask, "bool", or AttentionKernelDType.
const char* AttentionKernelMaskDType(const ir::Tensor* mask);
/// A fused kernel's head-dim bucket (the padded head dim) and tile of `rows` queries by `keys`
/// keys, on tensor cores or not.
struct AttentionTile {
  int head_dim, rows, keys;
  bool tensor_cores = false;
};
/// The first of `tiles` whose bucket holds the larger of head dims `d` and `dv` (null: none, or
/// a head dim is not a constant).
const AttentionTile* FindAttentionTile(absl::Span<const AttentionTile> tiles, const int64_t* d,
                                       const int64_t* dv);
/// The kernel of these parts (the backward's where `grad`), its name the contract the
/// backend's source reads back (ir/attention_kernel_spec.h).
ir::AttentionKernelSpec AttentionKernel(bool grad, const char* dtype, const char* mask_dtype,
                                        const AttentionTile& tile, bool dropout);
/// A mask's element strides along [B, H, Lq, Lk] (0 where it broadcasts), the kernels' arguments.
std::vector<ir::Expr> AttentionMaskStrides(const ir::Tensor& mask);
/// The host statement launching attention kernel `kernel` on grid (grid_x, grid_y) of 128
/// threads: its `pointers`, then what both kernels take after them: `dims` (B, H, Hkv, Lq, Lk,
/// D, Dv as int32), the scale, causal, the mask `strides`, dropout's `seed` and `stream`
/// pointers and 1 - p; then the forward's `layout`: the batch, head and row strides and the first
/// element of q, k, v and out (int64, AttentionOperandStrides), empty for the backward.
ir::Stmt LaunchAttentionKernel(const std::string& kernel, const ir::Expr& grid_x,
                               const ir::Expr& grid_y, const std::vector<ir::Expr>& pointers,
                               const std::vector<ir::Expr>& dims, const AttentionAttrs& a,
                               const std::vector<ir::Expr>& strides, const ir::Expr& seed,
                               const ir::Expr& stream, const std::vector<ir::Expr>& layout = {});
/// `e` as an int32 kernel argument (cast unless it is one already).
ir::Expr AsInt32(const ir::Expr& e);

/// H / Hkv, the query heads of a key/value head, of q and k (a constant when both are known).
ir::Expr QueryHeadGroup(const ir::Tensor& q, const ir::Tensor& k);
/// The products a bᵀ over the last dim, [B, H, La, Lb] in type `acc` (16-bit floats widened),
/// head h of `a` reading head h / QueryHeadGroup(a, b) of `b`: q kᵀ, and dO vᵀ in the backward.
ir::Tensor HeadProducts(const ir::Tensor& a, const ir::Tensor& b, ir::Type acc,
                        const std::string& name);

/// The decomposed compute: the scores q kᵀ, their row max and sum of exponentials, and p v
/// scaled by the sum, accumulated in float32 (float64 for float64 inputs).
ComputeFn AttentionCompute();
/// The fused kernel where the target has it (ir::LibraryCall::kAttention, NVGPU: an extern
/// tensor launching the device kernel `cinn_like_attention_<dtype>_<mask>_d<D>` that
/// backends/cuda adds to the module); cases the kernel does not take (float64, head dims above
/// 256) are declined.
ExternComputeFn AttentionKernelCompute();
/// The fused kernel's instances that cinn_like builds ahead (tools/build_library_kernels; see
/// backends/cuda/prebuilt_kernels.h): every element dtype and head-dim bucket, with no mask, a
/// bool mask or a mask of the element's dtype, each with the tile AttentionKernelCompute picks;
/// without dropout (a training step's dropout instances are compiled by NVRTC at first use).
std::vector<std::string> PrebuiltAttentionKernels();
/// On a target without the fused kernel: q kᵀ and p v as two library matmuls
/// (ir::LibraryCall::kMatmul, oneDNN on x86) around a generated masked softmax; float32 only,
/// other cases declined.
ExternComputeFn AttentionMatmulCompute();

/// attention_grad decomposed in lang: P, dP, Di and dS as tensors, dk, dv and dqk from them.
ComputeFn AttentionGradCompute();
/// attention_grad as the fused backward kernel on NVGPU (ir::LibraryCall::kAttention): an extern
/// tensor launching `cinn_like_attention_grad_<dtype>_<mask>_d<D>_q<BM>_k<BN>[_tc][_drop]`
/// (backends/cuda/attention_grad_source.h); head dims above 128 and float64 are declined.
ExternComputeFn AttentionGradKernelCompute();

/// Registers attention_grad (attention_grad.cc).
void RegisterAttentionGrad(OpRegistry& r);

}  // namespace cinn_like::hlir::ops
