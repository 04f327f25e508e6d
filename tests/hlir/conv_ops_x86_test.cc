/// \file The computes of conv2d, the pools, gather, split, pad and one_hot on x86, each built
/// straight from its OpDef::compute (placeholders -> compute -> default schedule -> Lower ->
/// JIT) and run on fresh random data against the reference interpreter. A stopgap harness
/// local to this file until the graph compiler runs single-op graphs.
#include <glog/logging.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <variant>

#include "backends/compiler.h"
#include "hlir/graph.h"
#include "hlir/op.h"
#include "hlir/reference_interpreter.h"
#include "ir/lower.h"
#include "ir/schedule.h"
#include "tests/test_util.h"

namespace cinn_like::hlir {
namespace {

std::mt19937_64& Rng() {
  static std::mt19937_64 rng(std::random_device{}());
  return rng;
}

HostTensor Random(DType t, std::vector<int64_t> shape) {
  HostTensor x(t, std::move(shape));
  std::uniform_real_distribution<double> dist(-2, 2);
  for (auto& v : x.data) v = RoundToDType(dist(Rng()), t);
  return x;
}

HostTensor RandomIndex(DType t, std::vector<int64_t> shape, int64_t bound) {
  HostTensor x(t, std::move(shape));
  std::uniform_int_distribution<int64_t> dist(0, bound - 1);
  for (auto& v : x.data) v = static_cast<double>(dist(Rng()));
  return x;
}

/// The storage a DLTensor argument points at, typed as the dtype stores it.
using Buffer = std::variant<
    std::unique_ptr<testing::HostTensor<float>>, std::unique_ptr<testing::HostTensor<double>>,
    std::unique_ptr<testing::HostTensor<int32_t>>, std::unique_ptr<testing::HostTensor<int64_t>>>;

Buffer MakeBuffer(DType t, const std::vector<int64_t>& shape) {
  switch (t) {
    case DType::kFloat64:
      return std::make_unique<testing::HostTensor<double>>(shape);
    case DType::kInt32:
      return std::make_unique<testing::HostTensor<int32_t>>(shape);
    case DType::kInt64:
      return std::make_unique<testing::HostTensor<int64_t>>(shape);
    default:
      CHECK(t == DType::kFloat32) << "dtype " << DTypeName(t) << " not handled by this test";
  }
  return std::make_unique<testing::HostTensor<float>>(shape);
}

/// Runs `op`'s compute on x86 and the reference on `inputs`; every output element must agree
/// within tol * max(1, |reference|). Unwritten output elements keep a poison value and fail.
/// With `symbolic_batch`, dim 0 of input 0 and of every output is one symbolic ir::Var (bound
/// from the DLTensor at the call), as a graph with a symbolic batch lowers it.
void CheckOp(const std::string& op, const std::vector<HostTensor>& inputs,
             const AttributeMap& attrs, double tol, bool symbolic_batch = false) {
  SCOPED_TRACE(op);
  const OpRegistry& registry = OpRegistry::Global();
  const OpDef* def = *registry.Find(op);
  ASSERT_TRUE(def->compute) << op << " has no compute";
  std::vector<TensorDesc> descs;
  std::vector<ir::Tensor> args;
  ir::Var batch("n");
  Graph graph;
  std::vector<int> ids;
  for (size_t i = 0; i < inputs.size(); ++i) {
    descs.push_back(TensorDesc{inputs[i].dtype, MakeShape(inputs[i].shape)});
    std::vector<ir::Expr> shape;
    for (int64_t d : inputs[i].shape) shape.push_back(ir::Expr(static_cast<int>(d)));
    if (symbolic_batch && i == 0) shape[0] = batch;
    args.push_back(ir::Placeholder("in" + std::to_string(i), ToIrType(inputs[i].dtype), shape));
    ids.push_back(*graph.AddInput("in" + std::to_string(i), descs.back()));
  }
  auto out_descs = registry.Infer(op, descs, attrs);
  ASSERT_TRUE(out_descs.ok()) << out_descs.status();
  std::vector<ComputeOutput> outs;
  for (const TensorDesc& d : *out_descs) {
    ComputeOutput o{ToIrType(d.dtype), {}};
    for (int64_t v : StaticDims(d.shape)) o.shape.push_back(ir::Expr(static_cast<int>(v)));
    if (symbolic_batch) {
      ASSERT_EQ(d.shape[0], descs[0].shape[0]) << "the batch dim must pass through " << op;
      o.shape[0] = batch;
    }
    outs.push_back(o);
  }
  auto tensors = def->compute(args, attrs, outs, "out");
  ASSERT_TRUE(tensors.ok()) << tensors.status();
  ASSERT_EQ(tensors->size(), outs.size());
  args.insert(args.end(), tensors->begin(), tensors->end());
  auto schedule = ir::Schedule::Create(*tensors);
  auto func = ir::Lower("k_" + op, args, schedule, ir::Target::X86());
  ASSERT_TRUE(func.ok()) << func.status();
  auto compiler = backends::Compiler::Create(ir::Target::X86());
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  absl::Status built = (*compiler)->Build(ir::Module{"k_" + op, ir::Target::X86(), {*func}});
  ASSERT_TRUE(built.ok()) << built;
  auto fn = (*compiler)->Lookup("k_" + op);
  ASSERT_TRUE(fn.ok()) << fn.status();

  std::vector<Buffer> buffers;
  std::vector<DLTensor*> dl;
  for (const HostTensor& in : inputs) {
    buffers.push_back(MakeBuffer(in.dtype, in.shape));
    std::visit(
        [&](auto& b) {
          for (int64_t i = 0; i < in.size(); ++i)
            (*b)[i] = static_cast<std::decay_t<decltype((*b)[0])>>(in.data[i]);
        },
        buffers.back());
  }
  for (const TensorDesc& d : *out_descs) {
    buffers.push_back(MakeBuffer(d.dtype, StaticDims(d.shape)));
    std::visit([](auto& b) { b->Poison(); }, buffers.back());
  }
  for (Buffer& b : buffers) dl.push_back(std::visit([](auto& p) { return p->dl(); }, b));
  ASSERT_EQ((*fn)(dl.data(), static_cast<int32_t>(dl.size()), nullptr), 0);

  auto node = graph.AddNode(op, ids, attrs, {});
  ASSERT_TRUE(node.ok()) << node.status();
  for (int v : *node) ASSERT_TRUE(graph.MarkOutput(v).ok());
  auto want = RunReference(graph, inputs);
  ASSERT_TRUE(want.ok()) << want.status();
  for (size_t k = 0; k < want->size(); ++k) {
    const HostTensor& w = (*want)[k];
    const Buffer& got = buffers[inputs.size() + k];
    for (int64_t i = 0; i < w.size(); ++i) {
      double g = std::visit([&](auto& b) { return static_cast<double>((*b)[i]); }, got);
      ASSERT_NEAR(g, w.data[i], tol * std::max(1.0, std::fabs(w.data[i])))
          << "output " << k << " element " << i << " of " << w.Describe();
    }
  }
}

using Ints = std::vector<int64_t>;
constexpr double kF32 = 2e-5;  // float32 sums of up to ~100 products in another order

TEST(ConvOpsX86, SeedNetworkConv3x3Padding1On224x224) {
  CheckOp("conv2d",
          {Random(DType::kFloat32, {1, 3, 224, 224}), Random(DType::kFloat32, {16, 3, 3, 3})},
          {{"paddings", Ints{1, 1}}}, kF32);
}

TEST(ConvOpsX86, Conv2dStridedDilatedGroupedDepthwiseWithBias) {
  CheckOp("conv2d",
          {Random(DType::kFloat32, {2, 4, 9, 11}), Random(DType::kFloat32, {6, 2, 3, 3}),
           Random(DType::kFloat32, {6})},
          {{"strides", Ints{2, 2}},
           {"paddings", Ints{0, 1, 2, 1}},
           {"dilations", Ints{2, 2}},
           {"groups", int64_t{2}}},
          kF32);
  CheckOp("conv2d",
          {Random(DType::kFloat32, {1, 6, 7, 8}), Random(DType::kFloat32, {6, 1, 3, 3}),
           Random(DType::kFloat32, {6})},
          {{"paddings", Ints{1, 1}}, {"groups", int64_t{6}}}, kF32);
  CheckOp("conv2d", {Random(DType::kFloat64, {1, 5, 6, 7}), Random(DType::kFloat64, {4, 5, 2, 3})},
          {{"strides", Ints{1, 2}}}, 1e-12);
}

TEST(ConvOpsX86, PoolsWithPaddingOddSizesAndBothDivisors) {
  AttributeMap a{{"kernel_size", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"paddings", Ints{1, 1}}};
  HostTensor x = Random(DType::kFloat32, {2, 3, 7, 9});
  CheckOp("max_pool2d", {x}, a, 0);
  CheckOp("avg_pool2d", {x}, a, 1e-6);
  a["count_include_pad"] = false;
  CheckOp("avg_pool2d", {x}, a, 1e-6);
  CheckOp("max_pool2d", {Random(DType::kFloat32, {1, 2, 6, 5})}, {{"kernel_size", Ints{2, 2}}}, 0);
}

TEST(ConvOpsX86, GatherSplitPadOneHot) {
  for (DType index_type : {DType::kInt32, DType::kInt64}) {
    CheckOp("gather", {Random(DType::kFloat32, {3, 5, 4}), RandomIndex(index_type, {7}, 5)},
            {{"axis", int64_t{1}}}, 0);
    CheckOp("gather", {Random(DType::kFloat64, {6, 3}), RandomIndex(index_type, {2}, 6)},
            {{"axis", int64_t{0}}}, 0);
    CheckOp("one_hot", {RandomIndex(index_type, {3, 4}, 5)}, {{"depth", int64_t{5}}}, 0);
    CheckOp("one_hot", {RandomIndex(index_type, {6}, 3)},
            {{"depth", int64_t{3}}, {"dtype", std::string("int32")}}, 0);
  }
  CheckOp("split", {Random(DType::kFloat32, {3, 10, 2})},
          {{"axis", int64_t{1}}, {"sections", Ints{2, -1, 5}}}, 0);
  CheckOp("pad", {Random(DType::kFloat32, {3, 4, 5})},
          {{"paddings", Ints{1, 0, 0, 0, 2, 3}}, {"value", 1.5}}, 0);
  CheckOp("pad", {Random(DType::kInt32, {2, 3})}, {{"paddings", Ints{0, 2, 1, 1}}, {"value", -7.0}},
          0);
}

TEST(ConvOpsX86, SymbolicBatchDimBoundAtTheCall) {
  CheckOp("conv2d",
          {Random(DType::kFloat32, {3, 2, 6, 5}), Random(DType::kFloat32, {4, 2, 3, 3}),
           Random(DType::kFloat32, {4})},
          {{"paddings", Ints{1, 1}}}, kF32, /*symbolic_batch=*/true);
  AttributeMap pool{{"kernel_size", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"paddings", Ints{1, 1}}};
  CheckOp("max_pool2d", {Random(DType::kFloat32, {2, 3, 7, 6})}, pool, 0, true);
  CheckOp("avg_pool2d", {Random(DType::kFloat32, {2, 3, 7, 6})}, pool, 1e-6, true);
  CheckOp("pad", {Random(DType::kFloat32, {3, 4})}, {{"paddings", Ints{0, 0, 2, 1}}}, 0, true);
  CheckOp("split", {Random(DType::kFloat32, {3, 5})},
          {{"axis", int64_t{1}}, {"sections", Ints{3, 2}}}, 0, true);
}

}  // namespace
}  // namespace cinn_like::hlir
