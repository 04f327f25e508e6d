/// \file attention as the fused flash-attention kernel on NVGPU: an extern tensor whose
/// statement, kept in host code, launches the library kernel
///
///   cinn_like_attention_<dtype>_<mask>_d<D>_q<BM>_k<BN>[_tc][_drop]
///
/// that the CUDA backend adds to the device module (backends/cuda/attention_kernel_source.h
/// holds its template and the argument list). The name is the contract between the two: the
/// element dtype (float32, float16, bfloat16), the mask's dtype (none, bool, float32, float16,
/// bfloat16), the head-dim bucket D (32, 64, 128, 256: the larger of q's and v's head dims,
/// padded), the tile of BM query rows by BN keys, chosen here so that the kernel's static
/// shared memory stays under 48 KiB, `_tc` for tensor cores (float16, bfloat16) and `_drop` for
/// dropout (the seed, the stream and 1 - p are the last arguments of every instance, unread
/// without it). The grid is (ceil(Lq / BM), B * H), 128 threads a block.
///
/// The kernel writes both outputs: the logsumexp tensor is the extern call, and `out` a
/// second extern tensor reading it with an empty statement, so that whoever reads `out` comes
/// after the launch and the logsumexp buffer exists (a workspace) even when only `out` is read.
#include "absl/strings/str_cat.h"
#include "hlir/ops/attention.h"
#include "hlir/ops/compute_util.h"

namespace cinn_like::hlir::ops {
namespace {

using ir::Expr;
using ir::Tensor;
using Made = absl::StatusOr<ExternTensors>;

/// Head-dim buckets and their tiles: on tensor cores for float16 and bfloat16 up to 128 and
/// float32 (as tf32 pairs, three products for each) up to 64 (64 queries by 64 keys; 16-key
/// tiles on CUDA cores before sm_80; float32 [4, 12, 256, 64] causal with dropout on the H200
/// 82 -> 70 us), else on CUDA cores (static shared memory (BM + BN)(D + 4) + BM (BN + 4)
/// floats, at most 38 KiB). On CUDA cores 32 queries by 64 keys up to head dim 64: twice the
/// blocks of 64-query tiles and half the barriers of 32-key ones (float32 attention on the
/// H100, torch.profiler: [16, 8, 128, 32] 56 -> 35 us, [4, 12, 512, 64] 326 -> 233 us against
/// 64 x 32).
constexpr AttentionTile kTensorCoreTiles[] = {
    {32, 64, 64, true}, {64, 64, 64, true}, {128, 64, 64, true}};
constexpr AttentionTile kTiles[] = {
    {32, 32, 64, false}, {64, 32, 64, false}, {128, 32, 32, false}, {256, 16, 16, false}};
constexpr int kThreads = 128;

/// The tensor-core tiles of element dtype `t`: float32's the first two.
absl::Span<const AttentionTile> TensorCoreTiles(const ir::Type& t) {
  if (t.is_low_precision_float()) return kTensorCoreTiles;
  if (t == ir::Float(32)) return absl::MakeConstSpan(kTensorCoreTiles).first(2);
  return {};
}

std::string KernelName(const char* dtype, const char* mask_dtype, const AttentionTile& tile,
                       bool dropout) {
  return AttentionKernel(/*grad=*/false, dtype, mask_dtype, tile, dropout).Name();
}

}  // namespace

ir::Stmt LaunchAttentionKernel(const std::string& kernel, const Expr& grid_x, const Expr& grid_y,
                               const std::vector<Expr>& pointers, const std::vector<Expr>& dims,
                               const AttentionAttrs& a, const std::vector<Expr>& strides,
                               const Expr& seed, const Expr& stream,
                               const std::vector<Expr>& layout) {
  std::vector<Expr> args{ir::StringImm::Make(kernel),
                         grid_x,
                         grid_y,
                         Expr(1),
                         Expr(kThreads),
                         Expr(1),
                         Expr(1),
                         Expr(0)};
  args.insert(args.end(), pointers.begin(), pointers.end());
  args.insert(args.end(), dims.begin(), dims.end());
  args.push_back(Expr(static_cast<float>(a.scale)));
  args.push_back(Expr(static_cast<int>(a.causal)));
  args.insert(args.end(), strides.begin(), strides.end());
  args.push_back(seed);
  args.push_back(stream);
  args.push_back(Expr(static_cast<float>(1 - a.dropout)));
  args.insert(args.end(), layout.begin(), layout.end());
  return ir::Evaluate::Make(ir::Call::Make(ir::Int(32), ir::IntrinsicOp::kLaunchKernel, args));
}

const char* AttentionKernelDType(const ir::Type& t) {
  if (t == ir::Float(32)) return "float32";
  if (t == ir::Float16()) return "float16";
  if (t == ir::BFloat16()) return "bfloat16";
  return nullptr;
}

const char* AttentionKernelMaskDType(const Tensor* mask) {
  if (!mask) return "none";
  return (*mask)->dtype.is_bool() ? "bool" : AttentionKernelDType((*mask)->dtype);
}

const AttentionTile* FindAttentionTile(absl::Span<const AttentionTile> tiles, const int64_t* d,
                                       const int64_t* dv) {
  if (!d || !dv) return nullptr;
  for (const AttentionTile& t : tiles) {
    if (std::max(*d, *dv) <= t.head_dim) return &t;
  }
  return nullptr;
}

ir::AttentionKernelSpec AttentionKernel(bool grad, const char* dtype, const char* mask_dtype,
                                        const AttentionTile& tile, bool dropout) {
  ir::AttentionKernelSpec spec;
  spec.grad = grad;
  spec.dtype = dtype;
  spec.mask = mask_dtype;
  spec.head_dim = tile.head_dim, spec.rows = tile.rows, spec.keys = tile.keys;
  spec.tensor_cores = tile.tensor_cores;
  spec.dropout = dropout;
  return spec;
}

Expr AsInt32(const Expr& e) { return e.type() == ir::Int(32) ? e : ir::Cast::Make(ir::Int(32), e); }

std::vector<Expr> AttentionMaskStrides(const Tensor& mask) {
  const auto& shape = mask->shape;
  const size_t rank = shape.size();
  const std::vector<Expr> row_major = RowMajorStrideExprs(shape);
  std::vector<Expr> strides(4, Expr(int64_t{0}));
  for (size_t d = 0; d < rank; ++d) {
    if (!ir::IsConstInt(shape[d], 1)) strides[4 - rank + d] = row_major[d];
  }
  return strides;
}

std::vector<std::string> PrebuiltAttentionKernels() {
  std::vector<std::string> names;
  for (const ir::Type& type : {ir::Float(32), ir::Float16(), ir::BFloat16()}) {
    const char* dtype = AttentionKernelDType(type);
    for (const char* mask : {"none", "bool", dtype}) {
      // The tile each head-dim bucket gets (as the compute's search picks it).
      for (const AttentionTile& t : kTiles) {
        const AttentionTile* tile = &t;
        for (const AttentionTile& tc : TensorCoreTiles(type)) {
          if (tc.head_dim == t.head_dim) tile = &tc;
        }
        names.push_back(KernelName(dtype, mask, *tile, false));  // dropout's: NVRTC at first use
      }
    }
  }
  return names;
}

ExternComputeFn AttentionKernelCompute() {
  return [](const ir::Target& target, const std::vector<Tensor>& in, const AttributeMap& attrs,
            const std::vector<ComputeOutput>& outs, const std::string& name) -> Made {
    auto library = FindLibrary(target, ir::LibraryCall::kAttention, {});
    if (!library.ok()) return Declined(std::string(library.status().message()));
    auto layout = ReadAttentionLayout(attrs, "attention");
    if (!layout.ok()) return layout.status();
    // The operands' [B, H, L, D] shapes (the head dim is last in every layout).
    const std::vector<Expr> q = AttentionOperandShape(in[0]->shape, *layout, 0);
    const std::vector<Expr> k = AttentionOperandShape(in[1]->shape, *layout, 1);
    const std::vector<Expr> v = AttentionOperandShape(in[2]->shape, *layout, 2);
    const int64_t* d = ir::AsConstInt(q[3]);
    auto a = ReadAttentionAttrs(attrs, d ? *d : -1, in.size());
    if (!a.ok()) return a.status();
    const bool has_mask = a->has_mask, dropout = a->dropout > 0;
    const char* dtype = AttentionKernelDType(in[0]->dtype);
    const char* mask_dtype = AttentionKernelMaskDType(has_mask ? &in[3] : nullptr);
    const int64_t* dv = ir::AsConstInt(v[3]);
    const AttentionTile* tile = FindAttentionTile(TensorCoreTiles(in[0]->dtype), d, dv);
    if (!tile) tile = FindAttentionTile(kTiles, d, dv);
    if (!dtype || !mask_dtype || !tile) {
      return Declined("the kernel takes float32, float16 and bfloat16 with head dims up to 256");
    }
    const std::string kernel = KernelName(dtype, mask_dtype, *tile, dropout);
    const Expr lq = AsInt32(q[2]);
    const std::vector<Expr> dims{AsInt32(q[0]), AsInt32(q[1]), AsInt32(k[1]), lq,
                                 AsInt32(k[2]), AsInt32(q[3]), AsInt32(v[3])};
    // The batch, head and row strides and the first element of q, k, v and out, where each lies.
    std::vector<Expr> strided;
    for (int o = 0; o < 4; ++o) {
      for (const Expr& s :
           AttentionOperandStrides(o < 3 ? in[o]->shape : outs[0].shape, *layout, o)) {
        strided.push_back(AsInt64(s));
      }
    }
    const std::vector<Expr> launch_dims{(lq + (tile->rows - 1)) / tile->rows, dims[0] * dims[1]};
    const std::vector<Expr> strides =
        has_mask ? AttentionMaskStrides(in[3]) : std::vector<Expr>(4, Expr(int64_t{0}));
    const size_t seed_at = in.size() - 2;
    auto out_buffer = std::make_shared<ir::Buffer>();
    const AttentionAttrs attrs_read = *a;
    Tensor lse = ir::ExternTensor(
        name + "_1", outs[1].type, outs[1].shape, in,
        [=](const std::vector<ir::Buffer>& b, const ir::Buffer& lse_buffer) {
          const Expr none = b[0]->data;  // for the pointers an instance does not read
          return LaunchAttentionKernel(
              kernel, launch_dims[0], launch_dims[1],
              {b[0]->data, b[1]->data, b[2]->data, has_mask ? b[3]->data : none,
               (*out_buffer)->data, lse_buffer->data},
              dims, attrs_read, strides, dropout ? b[seed_at]->data : none,
              dropout ? b[seed_at + 1]->data : none, strided);
        });
    Tensor out = ir::ExternTensor(
        name, outs[0].type, outs[0].shape, {lse},
        [](const std::vector<ir::Buffer>&, const ir::Buffer&) { return ir::Block::Make({}); });
    *out_buffer = out->buffer;
    return MadeBy(*library, {out, lse});
  };
}

}  // namespace cinn_like::hlir::ops
