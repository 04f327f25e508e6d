/// \file GroupIndependentNests: which GPU loop nests share a kernel (same launch dims, nothing
/// between them conflicting), and ir::Lower's kernels with the flag on and off. Results of merged
/// kernels against the reference: FusionOpenCL and FusionGpu (IndependentNestsSharingAKernel).
#include "ir/transforms/merge_nests.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "backends/compiler.h"
#include "ir/flags.h"
#include "ir/lower.h"
#include "ir/printer.h"
#include "ir/schedule.h"

namespace cinn_like::ir {
namespace {

/// C = A + 1, D = A * 2, E = C + D over 1024 elements in blocks of 256 threads, and F = A * 3 in
/// blocks of 128: each its own nest (no inlining), lowered for NVGPU.
absl::StatusOr<LoweredFunc> LowerFour() {
  Tensor a = Placeholder("A", Float(32), {Expr(1024)});
  auto elementwise = [&](const std::string& name, auto fn) {
    return Compute(
        {Expr(1024)}, [&](const std::vector<Expr>& i) { return fn(i[0]); }, name);
  };
  Tensor c = elementwise("C", [&](Expr i) { return a(i) + Expr(1.0f); });
  Tensor d = elementwise("D", [&](Expr i) { return a(i) * Expr(2.0f); });
  Tensor e = elementwise("E", [&](Expr i) { return c(i) + d(i); });
  Tensor f = elementwise("F", [&](Expr i) { return a(i) * Expr(3.0f); });
  auto sch = Schedule::Create({c, d, e, f});
  for (const auto& [t, threads] : {std::pair{c, 256}, {d, 256}, {e, 256}, {f, 128}}) {
    Stage& s = sch[t];
    auto parts = s.Split(*s.LeafAxis(0), threads);
    if (!parts.ok()) return parts.status();
    if (absl::Status st = s.Bind(parts->first, "blockIdx.x"); !st.ok()) return st;
    if (absl::Status st = s.Bind(parts->second, "threadIdx.x"); !st.ok()) return st;
  }
  return Lower("four", {a, c, d, e, f}, sch, Target::NVGPU(90));
}

/// LowerFour's nests lowered apart (each its own kernel) by the buffer each writes, its buffers
/// by name, and a library call naming one of them.
struct FourApart {
  std::map<std::string, Stmt> nest;
  std::map<std::string, Buffer> buffer;
  Stmt Call(const std::string& touched) const {
    return Evaluate::Make(ir::Call::Make(Int(32), IntrinsicOp::kExternCall,
                                         {StringImm::Make("lib"), Expr(buffer.at(touched)->data)}));
  }
};
absl::StatusOr<FourApart> LowerFourApart() {
  gflags::FlagSaver saver;
  FLAGS_cinn_like_merge_kernels = false;
  auto apart = LowerFour();
  if (!apart.ok()) return apart.status();
  FourApart out;
  for (const auto& k : (*apart)->kernels) {
    for (const Argument& arg : k->args) {
      if (arg.is_buffer()) out.buffer[arg.buffer->name] = arg.buffer;
      if (arg.is_buffer() && arg.kind == Argument::Kind::kOutput) {
        out.nest[arg.buffer->name] = k->body;
      }
    }
  }
  return out;
}

TEST(MergeNests, IndependentNestsOfOneLaunchShapeShareAKernel) {
  auto merged = LowerFour();
  ASSERT_TRUE(merged.ok()) << merged.status();
  // C and D together; E reads both (its own kernel); F has other launch dims.
  ASSERT_EQ((*merged)->kernels.size(), 3u) << ToString(**merged);
  const std::string text = ToString(**merged);
  EXPECT_NE(text.find("kernel four_kernel_0(A, C, D)"), std::string::npos) << text;
  gflags::FlagSaver saver;
  FLAGS_cinn_like_merge_kernels = false;
  auto apart = LowerFour();
  ASSERT_TRUE(apart.ok()) << apart.status();
  EXPECT_EQ((*apart)->kernels.size(), 4u) << ToString(**apart);
}

TEST(MergeNests, ATinyNestSharesTheKernelOfAnotherGrid) {
  // G = A * 2 over 65536 elements (256 blocks of 256 threads) and S = sum(B), one block of 256
  // threads with a block reduce: one kernel of 256 blocks, S's block loop guarded (a test
  // uniform in each block, so its barriers stay reached by every thread); the source compiles.
  Tensor a = Placeholder("A", Float(32), {Expr(65536)});
  Tensor b = Placeholder("B", Float(32), {Expr(4096)});
  Tensor g = Compute(
      {Expr(65536)}, [&](const std::vector<Expr>& i) { return a(i[0]) * Expr(2.0f); }, "G");
  IterVar k = ReduceAxis(Expr(4096), "k");
  Tensor s = Compute(
      {Expr(1)}, [&](const std::vector<Expr>&) { return ReduceSum(b(k.var), {k}); }, "S");
  auto sch = Schedule::Create({g, s});
  Stage& gs = sch[g];
  auto parts = gs.Split(*gs.LeafAxis(0), 256);
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_TRUE(gs.Bind(parts->first, "blockIdx.x").ok());
  ASSERT_TRUE(gs.Bind(parts->second, "threadIdx.x").ok());
  Stage& ss = sch[s];
  ASSERT_TRUE(ss.Bind(*ss.LeafAxis(0), "blockIdx.x").ok());
  auto kp = ss.Split(*ss.LeafAxis(1), 256);
  ASSERT_TRUE(kp.ok()) << kp.status();
  ASSERT_TRUE(ss.Reorder({kp->second, kp->first}).ok());
  ASSERT_TRUE(ss.Bind(kp->second, "threadIdx.x").ok());
  auto f = Lower("tiny", {a, b, g, s}, sch, Target::NVGPU(90));
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ((*f)->kernels.size(), 1u) << ToString(**f);
  EXPECT_TRUE(IsConstInt((*f)->kernels[0]->grid_dims[0], 256)) << ToString(**f);
  auto compiler = backends::Compiler::Create(Target::NVGPU(90));
  ASSERT_TRUE(compiler.ok());
  auto src = (*compiler)->GetSourceCode({"tiny", Target::NVGPU(90), {*f}});
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_NE(src->find("cinn_like_block_reduce_sum"), std::string::npos) << *src;
  EXPECT_NE(src->find(" < 1) {"), std::string::npos) << *src;  // S's block guard
  gflags::FlagSaver saver;
  FLAGS_cinn_like_merge_kernels = false;
  auto apart = Lower("tiny", {a, b, g, s}, sch, Target::NVGPU(90));
  ASSERT_TRUE(apart.ok()) << apart.status();
  EXPECT_EQ((*apart)->kernels.size(), 2u);
}

TEST(MergeNests, HostCallsKeepWhatTheyTouchInOrder) {
  auto four = LowerFourApart();
  ASSERT_TRUE(four.ok()) << four.status();
  ASSERT_EQ(four->nest.size(), 4u);
  const auto& nest = four->nest;
  auto call = [&](const std::string& touched) { return four->Call(touched); };
  // A call naming C between C's and D's nests: D moves up past it into C's kernel; E reads C,
  // which the call may have written, and stays after it.
  auto groups = GroupIndependentNests({nest.at("C"), call("C"), nest.at("D"), nest.at("E")});
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].size(), 2u);
  EXPECT_TRUE(groups[0][1].same_as(nest.at("D")));
  EXPECT_TRUE(groups[2][0].same_as(nest.at("E")));
  // A call naming D: D's nest stays after it.
  groups = GroupIndependentNests({nest.at("C"), call("D"), nest.at("D")});
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_TRUE(groups[2][0].same_as(nest.at("D")));
  // A nest reading what another writes never joins it, even with nothing between.
  groups = GroupIndependentNests({nest.at("C"), nest.at("E")});
  EXPECT_EQ(groups.size(), 2u);
}

TEST(MergeNests, NestsNothingLaterNeedsMoveToTheEnd) {
  auto four = LowerFourApart();
  ASSERT_TRUE(four.ok()) << four.status();
  const auto& nest = four->nest;
  const auto& buffer = four->buffer;
  auto call = [&](const std::string& touched) { return four->Call(touched); };
  auto order = [&](const std::vector<Stmt>& stmts) {
    std::string names;
    for (const Stmt& s : stmts) {
      for (const auto& [name, n] : nest) {
        if (s.same_as(n)) names += name;
      }
      if (!s.same_as(nest.at("D")) && !s.same_as(nest.at("E")) && !s.same_as(nest.at("C"))) {
        names += "call";
      }
    }
    return names;
  };
  const Stmt lib = call("A");
  // E (reading C and D) moves past a call that touches neither; D, which reads A, stays
  // before the call that may write A; C before the call that names C.
  EXPECT_EQ(order(SinkOutputNests({nest.at("D"), nest.at("E"), lib}, {})), "DcallE");
  EXPECT_EQ(order(SinkOutputNests({nest.at("C"), call("C")}, {})), "Ccall");
  // D as a workspace of 4 MiB: E, which reads it, stays (D would live until the end).
  Buffer big = MakeBuffer("D", Float(32), {Expr(int64_t{1} << 20)});
  big->data = buffer.at("D")->data;
  EXPECT_EQ(order(SinkOutputNests({nest.at("D"), nest.at("E"), lib}, {big})), "DEcall");
  // Of 4 KiB it moves.
  EXPECT_EQ(order(SinkOutputNests({nest.at("D"), nest.at("E"), lib}, {buffer.at("D")})), "DcallE");
}

TEST(HoistLastReaders, TheLastReaderOfALargeWorkspaceRunsRightAfterWhatItNeeds) {
  auto four = LowerFourApart();
  ASSERT_TRUE(four.ok()) << four.status();
  const auto& nest = four->nest;
  auto order = [&](const std::vector<Stmt>& stmts) {
    std::string names;
    for (const Stmt& s : stmts) {
      std::string name = "call";
      for (const auto& [n, st] : nest) {
        if (s.same_as(st)) name = n;
      }
      names += name;
    }
    return names;
  };
  // A buffer of `name`'s data variable holding `floats` floats.
  auto sized = [&](const std::string& name, int64_t floats) {
    Buffer b = MakeBuffer(name, Float(32), {Expr(floats)});
    b->data = four->buffer.at(name)->data;
    return b;
  };
  const Buffer big_d = sized("D", 2 << 20), small_e = sized("E", 1024);
  const std::vector<Stmt> dcfe = {nest.at("D"), nest.at("C"), nest.at("F"), nest.at("E")};
  // E, D's last reader, needs C and D: it moves before F, which D (8 MiB) need not outlive.
  EXPECT_EQ(order(HoistLastReaders(dcfe, {big_d, small_e}, {big_d})), "DCEF");
  // Not when what E writes first is as large (it would be held sooner), nor for a small D.
  EXPECT_EQ(order(HoistLastReaders(dcfe, {big_d, sized("E", 2 << 20)}, {big_d})), "DCFE");
  EXPECT_EQ(order(HoistLastReaders(dcfe, {four->buffer.at("D"), small_e}, {four->buffer.at("D")})),
            "DCFE");
  // A call naming D may write it: E stays after it.
  EXPECT_EQ(order(HoistLastReaders(
                {nest.at("D"), nest.at("C"), four->Call("D"), nest.at("F"), nest.at("E")},
                {big_d, small_e}, {big_d})),
            "DCcallEF");
  // So does one naming C, which E reads (a call may write every buffer it names).
  EXPECT_EQ(order(HoistLastReaders(
                {nest.at("D"), nest.at("C"), four->Call("C"), nest.at("F"), nest.at("E")},
                {big_d, small_e}, {big_d})),
            "DCcallEF");
}

}  // namespace
}  // namespace cinn_like::ir
