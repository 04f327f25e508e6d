/// \file attention_grad as the fused backward kernel on NVGPU: an extern tensor whose statement,
/// kept in host code, launches the library kernel
///
///   cinn_like_attention_grad_<dtype>_<mask>_d<D>_q<BM>_k<BN>[_tc][_drop]
///
/// (backends/cuda/attention_grad_source.h holds its template and argument list). The name says
/// the element dtype, the mask's dtype (none, bool or a float), the head-dim bucket D (32, 64,
/// 128: the larger of q's and v's head dims, padded), the tile of BM query rows by BN keys
/// (chosen here so that the static shared memory stays under 48 KiB), `_tc` for tensor cores
/// (float16 and bfloat16) and `_drop` for dropout.
/// The grid is (ceil(Lk / BN), B * Hkv), 128 threads a block.
///
/// The kernel writes all three outputs: dqk is the extern call, dk and dv extern tensors reading
/// it with empty statements, so that their readers come after the launch.
#include "absl/strings/str_cat.h"
#include "hlir/ops/attention.h"
#include "hlir/ops/compute_util.h"
#include "ir/device_properties.h"

namespace cinn_like::hlir::ops {
namespace {

using ir::Expr;
using ir::Tensor;
using Made = absl::StatusOr<ExternTensors>;

/// float16 and bfloat16 up to head dim 64: tensor cores, 64 queries by 64 keys (a warp's a
/// operands and accumulators of 16 keys by D take about 200 registers at D 64).
constexpr AttentionTile kTensorCoreTiles[] = {{32, 64, 64, true}, {64, 64, 64, true}};
/// Per head-dim bucket: (BM + BN)(D + 4) floats twice (q and grad_out, k and v), BN (BM + 4)
/// twice (P and dS transposed): 44 KiB at D 64 with 32 x 32, 36 KiB at D 128 with 16 x 16.
constexpr AttentionTile kTiles[] = {{32, 32, 32}, {64, 32, 32}, {128, 16, 16}};
/// The tiles of a grid below two blocks an SM (ir::DevicePropertiesOf) with 32-key tiles:
/// 16-key tiles give twice the blocks (a block walks every query of its keys in turn).
constexpr AttentionTile kNarrowTiles[] = {{32, 32, 16}, {64, 32, 16}, {128, 16, 16}};

}  // namespace

ExternComputeFn AttentionGradKernelCompute() {
  return [](const ir::Target& target, const std::vector<Tensor>& in, const AttributeMap& attrs,
            const std::vector<ComputeOutput>& outs, const std::string& name) -> Made {
    auto library = FindLibrary(target, ir::LibraryCall::kAttention, {});
    if (!library.ok()) return Declined(std::string(library.status().message()));
    const Tensor &q = in[0], &k = in[1], &v = in[2];
    const int64_t* d = ir::AsConstInt(q->shape[3]);
    const size_t forward_inputs = in.size() - 3;  // out, grad_out, logsumexp are not attention's
    auto a = ReadAttentionAttrs(attrs, d ? *d : -1, forward_inputs);
    if (!a.ok()) return a.status();
    const bool has_mask = a->has_mask, dropout = a->dropout > 0;
    const char* dtype = AttentionKernelDType(q->dtype);
    const char* mask_dtype = AttentionKernelMaskDType(has_mask ? &in[6] : nullptr);
    const int64_t* dv = ir::AsConstInt(v->shape[3]);
    const int64_t *b = ir::AsConstInt(q->shape[0]), *hkv = ir::AsConstInt(k->shape[1]);
    const int64_t* keys = ir::AsConstInt(k->shape[2]);
    const int64_t two_waves = 2 * int64_t{ir::DevicePropertiesOf(target).multiprocessors};
    const bool few = b && hkv && keys && (*keys + 31) / 32 * *b * *hkv < two_waves;
    const AttentionTile* tile = nullptr;
    if (q->dtype.is_low_precision_float()) tile = FindAttentionTile(kTensorCoreTiles, d, dv);
    if (!tile) tile = FindAttentionTile(few ? kNarrowTiles : kTiles, d, dv);
    if (!dtype || !mask_dtype || !tile) {
      return Declined(
          "the backward kernel takes float32, float16 and bfloat16 with head dims up to 128");
    }
    const std::string kernel =
        AttentionKernel(/*grad=*/true, dtype, mask_dtype, *tile, dropout).Name();
    const Expr lk = AsInt32(k->shape[2]);
    const std::vector<Expr> dims{
        AsInt32(q->shape[0]), AsInt32(q->shape[1]), AsInt32(k->shape[1]), AsInt32(q->shape[2]), lk,
        AsInt32(q->shape[3]), AsInt32(v->shape[3])};
    const std::vector<Expr> launch_dims{(lk + (tile->keys - 1)) / tile->keys, dims[0] * dims[2]};
    const std::vector<Expr> strides =
        has_mask ? AttentionMaskStrides(in[6]) : std::vector<Expr>(4, Expr(int64_t{0}));
    const size_t seed_at = in.size() - 2;
    auto dk_buffer = std::make_shared<ir::Buffer>(), dv_buffer = std::make_shared<ir::Buffer>();
    const AttentionAttrs attrs_read = *a;
    Tensor dqk = ir::ExternTensor(
        name + "_2", outs[2].type, outs[2].shape, in,
        [=](const std::vector<ir::Buffer>& b, const ir::Buffer& dqk_buffer) {
          const Expr none = b[0]->data;  // for the pointers an instance does not read
          return LaunchAttentionKernel(kernel, launch_dims[0], launch_dims[1],
                                       {b[0]->data, b[1]->data, b[2]->data, b[3]->data, b[4]->data,
                                        b[5]->data, has_mask ? b[6]->data : none,
                                        (*dk_buffer)->data, (*dv_buffer)->data, dqk_buffer->data},
                                       dims, attrs_read, strides, dropout ? b[seed_at]->data : none,
                                       dropout ? b[seed_at + 1]->data : none);
        });
    auto read_dqk = [](const std::vector<ir::Buffer>&, const ir::Buffer&) {
      return ir::Block::Make({});
    };
    Tensor dk = ir::ExternTensor(name, outs[0].type, outs[0].shape, {dqk}, read_dqk);
    Tensor dvt = ir::ExternTensor(name + "_1", outs[1].type, outs[1].shape, {dqk}, read_dqk);
    *dk_buffer = dk->buffer;
    *dv_buffer = dvt->buffer;
    return MadeBy(*library, {dk, dvt, dqk});
  };
}

}  // namespace cinn_like::hlir::ops
