/// \file conv2d, the pools, gather, split, pad and one_hot at the graph level: the reference
/// interpreter against loops written here independently (an explicitly padded copy of the
/// input, float64) on fresh random data, shape inference, and the errors' messages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "frontend/net_builder.h"
#include "frontend/program_json.h"
#include "hlir/op.h"
#include "hlir/reference_interpreter.h"
#include "tests/hlir/run_reference.h"

namespace cinn_like::hlir {
namespace {

using frontend::NetBuilder;
using frontend::Var;
using ::testing::HasSubstr;

std::mt19937_64& Rng() {
  static std::mt19937_64 rng(std::random_device{}());
  return rng;
}

HostTensor Random(DType t, std::vector<int64_t> shape, double lo = -2, double hi = 2) {
  HostTensor x(t, std::move(shape));
  std::uniform_real_distribution<double> dist(lo, hi);
  for (auto& v : x.data) v = RoundToDType(dist(Rng()), t);
  return x;
}

HostTensor RandomIndex(DType t, std::vector<int64_t> shape, int64_t bound) {
  HostTensor x(t, std::move(shape));
  std::uniform_int_distribution<int64_t> dist(0, bound - 1);
  for (auto& v : x.data) v = static_cast<double>(dist(Rng()));
  return x;
}

void ExpectNear(const HostTensor& got, const std::vector<double>& want, double tol,
                const std::string& what) {
  ASSERT_EQ(got.size(), static_cast<int64_t>(want.size())) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got.data[i], want[i], tol * std::max(1.0, std::fabs(want[i])))
        << what << " at " << i;
  }
}

/// x [N, C, H, W] padded by (top, bottom, left, right) with `value`.
HostTensor PadPlanes(const HostTensor& x, int64_t t, int64_t b, int64_t l, int64_t r,
                     double value) {
  int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
  HostTensor p(x.dtype, {n, c, h + t + b, w + l + r});
  p.data.assign(p.size(), value);
  for (int64_t q = 0; q < n * c; ++q)
    for (int64_t i = 0; i < h; ++i)
      for (int64_t j = 0; j < w; ++j)
        p.data[(q * (h + t + b) + i + t) * (w + l + r) + j + l] = x.data[(q * h + i) * w + j];
  return p;
}

struct ConvCase {
  int64_t n, c, h, w, o, k, stride, pad, dilation, groups;
  bool bias;
};

/// conv2d over an explicitly zero-padded input, one output channel group at a time.
std::vector<double> Conv2dLoops(const ConvCase& cs, const HostTensor& x, const HostTensor& wt,
                                const HostTensor* bias) {
  HostTensor p = PadPlanes(x, cs.pad, cs.pad, cs.pad, cs.pad, 0.0);
  int64_t ph = p.shape[2], pw = p.shape[3], span = cs.dilation * (cs.k - 1) + 1;
  int64_t oh = (ph - span) / cs.stride + 1, ow = (pw - span) / cs.stride + 1;
  int64_t cin = cs.c / cs.groups, cout = cs.o / cs.groups;
  std::vector<double> out(cs.n * cs.o * oh * ow);
  for (int64_t b = 0; b < cs.n; ++b)
    for (int64_t g = 0; g < cs.groups; ++g)
      for (int64_t f = g * cout; f < (g + 1) * cout; ++f)
        for (int64_t i = 0; i < oh; ++i)
          for (int64_t j = 0; j < ow; ++j) {
            double acc = bias ? bias->data[f] : 0.0;
            for (int64_t ci = 0; ci < cin; ++ci)
              for (int64_t u = 0; u < cs.k; ++u)
                for (int64_t v = 0; v < cs.k; ++v) {
                  int64_t y = i * cs.stride + u * cs.dilation, z = j * cs.stride + v * cs.dilation;
                  acc += p.data[((b * cs.c + g * cin + ci) * ph + y) * pw + z] *
                         wt.data[((f * cin + ci) * cs.k + u) * cs.k + v];
                }
            out[((b * cs.o + f) * oh + i) * ow + j] = acc;
          }
  return out;
}

TEST(ConvOps, Conv2dReferenceMatchesLoopsOverStridesPaddingsDilationsGroupsAndBias) {
  std::vector<ConvCase> cases = {
      {2, 3, 7, 9, 4, 3, 1, 0, 1, 1, false},  {2, 3, 7, 9, 4, 3, 1, 1, 1, 1, true},
      {1, 4, 9, 8, 6, 3, 2, 1, 1, 1, true},   {1, 4, 9, 8, 6, 3, 2, 0, 1, 2, false},
      {1, 4, 11, 10, 4, 3, 1, 2, 2, 2, true}, {2, 6, 8, 7, 6, 3, 1, 1, 1, 6, false},  // depthwise
      {1, 5, 6, 6, 10, 1, 1, 0, 1, 5, true},  {1, 3, 5, 5, 2, 5, 2, 2, 1, 1, true},
  };
  for (const ConvCase& cs : cases) {
    std::string what = ::testing::PrintToString(std::vector<int64_t>{
        cs.c, cs.h, cs.w, cs.o, cs.k, cs.stride, cs.pad, cs.dilation, cs.groups, cs.bias});
    NetBuilder b;
    Var x = b.CreateInput(DType::kFloat32, MakeShape({cs.n, cs.c, cs.h, cs.w}), "x");
    Var w = b.CreateInput(DType::kFloat32, MakeShape({cs.o, cs.c / cs.groups, cs.k, cs.k}), "w");
    std::vector<HostTensor> in = {Random(DType::kFloat32, {cs.n, cs.c, cs.h, cs.w}),
                                  Random(DType::kFloat32, {cs.o, cs.c / cs.groups, cs.k, cs.k})};
    std::vector<int64_t> s{cs.stride, cs.stride}, p{cs.pad, cs.pad}, d{cs.dilation, cs.dilation};
    Var y;
    if (cs.bias) {
      Var bias = b.CreateInput(DType::kFloat32, MakeShape({cs.o}), "bias");
      in.push_back(Random(DType::kFloat32, {cs.o}));
      y = b.Conv2d(x, w, bias, s, p, d, cs.groups);
    } else {
      y = b.Conv2d(x, w, s, p, d, cs.groups);
    }
    b.MarkOutput(y);
    auto out = RunProgram(b, in);
    ASSERT_TRUE(out.ok()) << what << ": " << out.status();
    std::vector<double> want = Conv2dLoops(cs, in[0], in[1], cs.bias ? &in[2] : nullptr);
    for (double& v : want) v = RoundToDType(v, DType::kFloat32);
    // Both sums are in double, so they differ only in the order of the additions.
    ExpectNear((*out)[0], want, 1e-6, what);
  }
}

TEST(ConvOps, PoolsReferenceMatchLoopsWithPaddingOddSizesAndBothDivisors) {
  struct Case {
    int64_t h, w, k, stride, pad;
  };
  for (Case cs :
       {Case{7, 9, 3, 2, 1}, Case{5, 5, 2, 1, 1}, Case{8, 6, 3, 3, 0}, Case{6, 7, 5, 2, 2}}) {
    HostTensor x = Random(DType::kFloat64, {2, 3, cs.h, cs.w});
    NetBuilder b;
    Var xv = b.CreateInput(DType::kFloat64, MakeShape({2, 3, cs.h, cs.w}), "x");
    std::vector<int64_t> k{cs.k, cs.k}, s{cs.stride, cs.stride}, p{cs.pad, cs.pad};
    b.MarkOutput(b.MaxPool2d(xv, k, s, p));
    b.MarkOutput(b.AvgPool2d(xv, k, s, p));
    b.MarkOutput(b.AvgPool2d(xv, k, s, p, /*count_include_pad=*/false));
    auto out = RunProgram(b, {x});
    ASSERT_TRUE(out.ok()) << out.status();
    HostTensor neg =
        PadPlanes(x, cs.pad, cs.pad, cs.pad, cs.pad, -std::numeric_limits<double>::infinity());
    HostTensor ones(DType::kFloat64, {2, 3, cs.h, cs.w});
    ones.data.assign(ones.size(), 1.0);
    HostTensor zero = PadPlanes(x, cs.pad, cs.pad, cs.pad, cs.pad, 0.0);
    HostTensor inside = PadPlanes(ones, cs.pad, cs.pad, cs.pad, cs.pad, 0.0);
    int64_t ph = neg.shape[2], pw = neg.shape[3];
    int64_t oh = (ph - cs.k) / cs.stride + 1, ow = (pw - cs.k) / cs.stride + 1;
    std::vector<double> mx, avg, avg_real;
    for (int64_t q = 0; q < 6; ++q)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double m = -std::numeric_limits<double>::infinity(), sum = 0, count = 0;
          for (int64_t u = 0; u < cs.k; ++u)
            for (int64_t v = 0; v < cs.k; ++v) {
              int64_t at = (q * ph + i * cs.stride + u) * pw + j * cs.stride + v;
              m = std::max(m, neg.data[at]);
              sum += zero.data[at];
              count += inside.data[at];
            }
          mx.push_back(m);
          avg.push_back(sum / (cs.k * cs.k));
          avg_real.push_back(sum / count);
        }
    ASSERT_EQ((*out)[0].shape, (std::vector<int64_t>{2, 3, oh, ow}));
    ExpectNear((*out)[0], mx, 0, "max_pool2d");
    ExpectNear((*out)[1], avg, 1e-14, "avg_pool2d");
    ExpectNear((*out)[2], avg_real, 1e-14, "avg_pool2d count_include_pad=false");
  }
}

TEST(ConvOps, GatherSplitPadOneHotReferenceMatchLoops) {
  for (DType index_type : {DType::kInt32, DType::kInt64}) {
    HostTensor x = Random(DType::kFloat32, {4, 5, 3});
    HostTensor index = RandomIndex(index_type, {7}, 5);  // repeats allowed, as index_select
    HostTensor labels = RandomIndex(index_type, {2, 3}, 6);
    NetBuilder b;
    Var xv = b.CreateInput(DType::kFloat32, MakeShape({4, 5, 3}), "x");
    Var iv = b.CreateInput(index_type, MakeShape({7}), "index");
    Var lv = b.CreateInput(index_type, MakeShape({2, 3}), "labels");
    b.MarkOutput(b.IndexSelect(xv, 1, iv));
    std::vector<Var> parts = b.Split(xv, {1, -1, 2}, 1);
    ASSERT_EQ(parts.size(), 3u);
    for (const Var& v : parts) b.MarkOutput(v);
    b.MarkOutput(b.Pad(xv, {0, 1, 2, 0, 1, 1}, 0.5));
    b.MarkOutput(b.OneHot(lv, 6, DType::kInt32));
    auto out = RunProgram(b, {x, index, labels});
    ASSERT_TRUE(out.ok()) << out.status();
    auto at = [&](int64_t i, int64_t j, int64_t k) { return x.data[(i * 5 + j) * 3 + k]; };
    std::vector<double> gather, s0, s1, s2, pad, hot;
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 7; ++j)
        for (int64_t k = 0; k < 3; ++k)
          gather.push_back(at(i, static_cast<int64_t>(index.data[j]), k));
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 5; ++j)
        for (int64_t k = 0; k < 3; ++k) (j < 1 ? s0 : j < 3 ? s1 : s2).push_back(at(i, j, k));
    for (int64_t i = 0; i < 5; ++i)  // [0, 1], [2, 0], [1, 1]
      for (int64_t j = 0; j < 7; ++j)
        for (int64_t k = 0; k < 5; ++k) {
          bool in = i < 4 && j >= 2 && k >= 1 && k < 4;
          pad.push_back(in ? at(i, j - 2, k - 1) : 0.5);
        }
    for (double l : labels.data)
      for (int64_t d = 0; d < 6; ++d) hot.push_back(l == d ? 1.0 : 0.0);
    ExpectNear((*out)[0], gather, 0, "gather");
    EXPECT_EQ((*out)[1].shape, (std::vector<int64_t>{4, 1, 3}));
    EXPECT_EQ((*out)[2].shape, (std::vector<int64_t>{4, 2, 3}));
    ExpectNear((*out)[1], s0, 0, "split 0");
    ExpectNear((*out)[2], s1, 0, "split 1");
    ExpectNear((*out)[3], s2, 0, "split 2");
    EXPECT_EQ((*out)[4].shape, (std::vector<int64_t>{5, 7, 5}));
    ExpectNear((*out)[4], pad, 0, "pad");
    EXPECT_EQ((*out)[5].dtype, DType::kInt32);
    EXPECT_EQ((*out)[5].shape, (std::vector<int64_t>{2, 3, 6}));
    ExpectNear((*out)[5], hot, 0, "one_hot");
  }
}

TEST(ConvOps, InferenceShapesPatternsAndSymbolicBatch) {
  const OpRegistry& r = OpRegistry::Global();
  TensorDesc x{DType::kFloat32,
               {Dim::Symbol("n"), Dim::Known(3), Dim::Known(224), Dim::Known(224)}};
  TensorDesc w{DType::kFloat32, MakeShape({16, 3, 3, 3})};
  auto seed = r.Infer("conv2d", {x, w}, {{"paddings", std::vector<int64_t>{1, 1}}});
  ASSERT_TRUE(seed.ok()) << seed.status();
  EXPECT_EQ((*seed)[0].ToString(), "float32[n, 16, 224, 224]");
  auto strided = r.Infer(
      "conv2d", {x, w},
      {{"strides", std::vector<int64_t>{2, 2}}, {"paddings", std::vector<int64_t>{0, 1, 2, 0}}});
  ASSERT_TRUE(strided.ok()) << strided.status();
  EXPECT_EQ((*strided)[0].ToString(), "float32[n, 16, 112, 112]");  // (225-3)/2+1, (226-3)/2+1
  auto pool = r.Infer("max_pool2d", {x},
                      {{"kernel_size", std::vector<int64_t>{3, 3}},
                       {"strides", std::vector<int64_t>{2, 2}},
                       {"paddings", std::vector<int64_t>{1, 1}}});
  ASSERT_TRUE(pool.ok()) << pool.status();
  EXPECT_EQ((*pool)[0].ToString(), "float32[n, 3, 112, 112]");
  auto avg = r.Infer("avg_pool2d", {x},
                     {{"kernel_size", std::vector<int64_t>{2, 2}}});  // strides = kernel
  ASSERT_TRUE(avg.ok()) << avg.status();
  EXPECT_EQ((*avg)[0].ToString(), "float32[n, 3, 112, 112]");
  auto split = r.Infer("split", {x},
                       {{"axis", int64_t{-1}}, {"sections", std::vector<int64_t>{100, 24, 100}}});
  ASSERT_TRUE(split.ok()) << split.status();
  ASSERT_EQ(split->size(), 3u);
  EXPECT_EQ((*split)[1].ToString(), "float32[n, 3, 224, 24]");
  auto pad = r.Infer("pad", {x}, {{"paddings", std::vector<int64_t>{0, 0, 1, 2, 3, 4, 0, 0}}});
  ASSERT_TRUE(pad.ok()) << pad.status();
  EXPECT_EQ((*pad)[0].ToString(), "float32[n, 6, 231, 224]");
  TensorDesc idx{DType::kInt64, {Dim::Symbol("k")}};
  auto gather = r.Infer("gather", {x, idx}, {{"axis", int64_t{2}}});
  ASSERT_TRUE(gather.ok()) << gather.status();
  EXPECT_EQ((*gather)[0].ToString(), "float32[n, 3, k, 224]");
  auto hot = r.Infer("one_hot", {idx}, {{"depth", int64_t{10}}});
  ASSERT_TRUE(hot.ok()) << hot.status();
  EXPECT_EQ((*hot)[0].ToString(), "float32[k, 10]");
  EXPECT_EQ((*r.Find("conv2d"))->pattern, OpPattern::kOutFusible);
  EXPECT_EQ((*r.Find("max_pool2d"))->pattern, OpPattern::kReduction);
  for (const char* op :
       {"conv2d", "max_pool2d", "avg_pool2d", "gather", "split", "pad", "one_hot"}) {
    EXPECT_TRUE((*r.Find(op))->compute) << op << " has no compute";
  }
}

TEST(ConvOps, ErrorsNameTheOpTheInputAndWhatWasExpected) {
  const OpRegistry& r = OpRegistry::Global();
  TensorDesc x{DType::kFloat32, MakeShape({1, 4, 8, 8})};
  auto err = [&](const std::string& op, const std::vector<TensorDesc>& in, const AttributeMap& a) {
    auto s = r.Infer(op, in, a);
    EXPECT_FALSE(s.ok()) << op;
    return s.ok() ? std::string() : std::string(s.status().message());
  };
  EXPECT_THAT(
      err("conv2d", {x, {DType::kFloat32, MakeShape({8, 3, 3, 3})}}, {}),
      HasSubstr("channels mismatch: x float32[1, 4, 8, 8] has 4 channels, so with groups = 1 "
                "weight float32[8, 3, 3, 3] needs 4 in dim 1, not 3"));
  EXPECT_THAT(
      err("conv2d",
          {{DType::kFloat32, MakeShape({1, 6, 8, 8})}, {DType::kFloat32, MakeShape({8, 1, 3, 3})}},
          {{"groups", int64_t{4}}}),
      HasSubstr("op conv2d: groups = 4 must be >= 1 and divide both the input channels (6"));
  EXPECT_THAT(
      err("conv2d", {x, {DType::kFloat32, MakeShape({8, 4, 7, 7})}},
          {{"dilations", std::vector<int64_t>{2, 2}}, {"paddings", std::vector<int64_t>{1, 1}}}),
      HasSubstr("the kernel (13 x 13 with dilation) is larger than the padded input 10 x 10"));
  EXPECT_THAT(
      err("conv2d",
          {x, {DType::kFloat32, MakeShape({8, 4, 3, 3})}, {DType::kFloat32, MakeShape({4})}}, {}),
      HasSubstr("op conv2d: bias (input 2, float32[4]) must have shape [8]"));
  EXPECT_THAT(err("conv2d", {x, {DType::kFloat16, MakeShape({8, 4, 3, 3})}}, {}),
              HasSubstr("have different dtypes"));
  EXPECT_THAT(
      err("max_pool2d", {x},
          {{"kernel_size", std::vector<int64_t>{3, 3}}, {"paddings", std::vector<int64_t>{2, 2}}}),
      HasSubstr("must be at most half of the kernel size 3 x 3"));
  EXPECT_THAT(
      err("avg_pool2d", {x}, {{"kernel_size", std::vector<int64_t>{2, 2}}, {"ceil_mode", true}}),
      HasSubstr("ceil_mode = true is not supported"));
  EXPECT_THAT(err("avg_pool2d", {{DType::kFloat32, MakeShape({4, 8, 8})}},
                  {{"kernel_size", std::vector<int64_t>{2, 2}}}),
              HasSubstr("op avg_pool2d: input 0 (float32[4, 8, 8]) must be NCHW (rank 4)"));
  EXPECT_THAT(
      err("gather", {x, {DType::kFloat32, MakeShape({3})}}, {}),
      HasSubstr(
          "op gather: index (input 1, float32[3]) has dtype float32; gather needs int32 or int64"));
  EXPECT_THAT(err("one_hot", {{DType::kFloat32, MakeShape({3})}}, {{"depth", int64_t{4}}}),
              HasSubstr("one_hot needs int32 or int64 indices"));
  EXPECT_THAT(
      err("split", {x}, {{"axis", int64_t{1}}, {"sections", std::vector<int64_t>{1, 2}}}),
      HasSubstr("op split: sections [1, 2] sum to 3 but axis 1 of float32[1, 4, 8, 8] has size 4"));
  EXPECT_THAT(
      err("pad", {x}, {{"paddings", std::vector<int64_t>{1, 1}}}),
      HasSubstr("expected 8 entries >= 0 ([before, after] per dim of float32[1, 4, 8, 8])"));

  // Out-of-range indices are run-time errors of the reference.
  NetBuilder b;
  Var xv = b.CreateInput(DType::kFloat32, MakeShape({4, 3}), "x");
  Var iv = b.CreateInput(DType::kInt64, MakeShape({2}), "index");
  b.MarkOutput(b.Gather(xv, iv, 0));
  HostTensor index(DType::kInt64, {2});
  index.data = {1, 4};
  auto out = RunProgram(b, {Random(DType::kFloat32, {4, 3}), index});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(),
              HasSubstr("op gather: index 4 (at position 1) is out of range [0, 4) of axis 0"));
  NetBuilder h;
  h.MarkOutput(h.OneHot(h.CreateInput(DType::kInt32, MakeShape({3}), "l"), 3));
  HostTensor labels(DType::kInt32, {3});
  labels.data = {0, -1, 2};
  auto hot = RunProgram(h, {labels});
  ASSERT_FALSE(hot.ok());
  EXPECT_THAT(hot.status().message(), HasSubstr("op one_hot: index -1 (at flat position 1"));
}

TEST(ConvOps, JsonRoundTripKeepsEveryOutputOfSplitAndTheListAttributes) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({1, 2, 6, 6}), "x");
  Var w = b.CreateInput(DType::kFloat32, MakeShape({4, 1, 3, 3}), "w");
  Var y = b.Conv2d(x, w, {2, 1}, {1, 0, 1, 1}, {1, 1}, 2);
  // conv: H (6 + 1 - 3) / 2 + 1 = 3, W 6 + 2 - 3 + 1 = 6; pool 2x2 stride 1: [1, 4, 2, 5].
  std::vector<Var> parts = b.Split(b.MaxPool2d(y, {2, 2}, {1, 1}), {1, 3}, 1);
  ASSERT_EQ(parts.size(), 2u);
  b.MarkOutput(parts[1]);
  b.MarkOutput(parts[0]);
  auto program = b.Build();
  ASSERT_TRUE(program.ok()) << program.status();
  auto loaded = frontend::ProgramFromJson(frontend::ProgramToJson(*program));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(frontend::ProgramToJson(*loaded), frontend::ProgramToJson(*program));
  std::vector<HostTensor> in = {Random(DType::kFloat32, {1, 2, 6, 6}),
                                Random(DType::kFloat32, {4, 1, 3, 3})};
  auto g0 = frontend::BuildGraph(*program), g1 = frontend::BuildGraph(*loaded);
  ASSERT_TRUE(g0.ok() && g1.ok());
  auto r0 = RunReference(*g0, in), r1 = RunReference(*g1, in);
  ASSERT_TRUE(r0.ok() && r1.ok()) << r0.status() << r1.status();
  ASSERT_EQ(r1->size(), 2u);
  EXPECT_EQ((*r1)[0].shape, (std::vector<int64_t>{1, 3, 2, 5}));
  EXPECT_EQ((*r1)[1].shape, (std::vector<int64_t>{1, 1, 2, 5}));
  for (size_t k = 0; k < 2; ++k) EXPECT_EQ((*r0)[k].data, (*r1)[k].data);
}

}  // namespace
}  // namespace cinn_like::hlir
