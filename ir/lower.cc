/// \file The lowering pipeline, in order, with a dump and a timer after each pass.
#include "ir/lower.h"

#include <glog/logging.h>

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "ir/buffer_reads.h"
#include "ir/compile_options.h"
#include "ir/in_place_extern.h"
#include "ir/lower_stage.h"
#include "ir/math.h"
#include "ir/pass_runner.h"
#include "ir/printer.h"
#include "ir/transforms/block_reductions.h"
#include "ir/transforms/flatten_storage.h"
#include "ir/transforms/hoist_common_index.h"
#include "ir/transforms/insert_sync.h"
#include "ir/transforms/loop_partition.h"
#include "ir/transforms/lower_thread_reduce.h"
#include "ir/transforms/remove_redundant_guards.h"
#include "ir/transforms/simplify.h"
#include "ir/transforms/split_host_device.h"
#include "ir/transforms/unroll.h"
#include "ir/transforms/vectorize.h"
#include "ir/transforms/vectorize_reduce.h"

namespace cinn_like::ir {

absl::StatusOr<LoweredFunc> Lower(const std::string& name, const std::vector<Tensor>& args,
                                  const Schedule& schedule, const Target& target) {
  auto func = std::make_shared<LoweredFuncNode>();
  func->name = name;
  std::set<const BufferNode*> arg_buffers;
  for (auto& t : args) {
    if (!t.defined()) {
      return absl::InvalidArgumentError("function " + name + ": an argument tensor is undefined");
    }
    if (!arg_buffers.insert(t->buffer.get()).second) {
      return absl::InvalidArgumentError("function " + name + ": tensor " + t.name() +
                                        " is listed twice as an argument");
    }
    func->args.push_back(t->is_placeholder ? Argument::Input(t->buffer)
                                           : Argument::Output(t->buffer));
  }

  // 1. Each top-level stage's loop nest, producers first. Inlined and folded stages have no
  // nest; stages computed at a consumer's loop are in that consumer's nest.
  std::vector<TensorNest> nests;
  std::vector<Buffer> temporaries;
  std::set<const BufferNode*> computed;
  for (auto& stage : schedule.stages()) {
    const Buffer& own = stage->tensor()->buffer;
    const char* hidden = stage->inlined()  ? "inlined"
                         : stage->folded() ? "folded into its producer"
                         : stage->attach() ? "computed at another stage's loop"
                                           : nullptr;
    if (stage->fold_buffer() && arg_buffers.count(own.get())) {
      return absl::InvalidArgumentError("function " + name + ": tensor " + own->name +
                                        " is an argument but its consumer was folded into it, "
                                        "so it is never stored");
    }
    const bool own_buffer = stage->attach() && stage->attach()->own_buffer;
    if (hidden && !stage->folded() && !own_buffer && arg_buffers.count(own.get())) {
      return absl::InvalidArgumentError("function " + name + ": tensor " + own->name +
                                        " is an argument but is " + hidden +
                                        ", so it is never stored");
    }
    if (hidden) {
      if (const Stage::Attach* at = stage->attach()) {
        const Stage& consumer = *at->consumer;
        bool leaf = false;
        for (int l : consumer.leaves()) leaf |= consumer.axes()[l].var.same_as(at->loop);
        if (!leaf || consumer.inlined() || consumer.folded()) {
          return absl::InvalidArgumentError(
              "function " + name + ": stage " + stage->tensor().name() + " is computed at loop " +
              at->loop.name() + " of stage " + consumer.tensor().name() +
              ", which was split, fused or inlined away afterwards; schedule the consumer's "
              "loops before compute_at");
        }
        computed.insert(at->buffer.get());
        // Stored whole by the consumer's nest: an intermediate is allocated as any other.
        if (own_buffer && !arg_buffers.count(own.get())) temporaries.push_back(own);
      }
      continue;
    }
    if (stage->tensor()->extern_body) {
      // An extern: its statement on the buffers of its inputs, which must be stored whole.
      std::vector<Buffer> inputs;
      for (auto& in : stage->tensor()->inputs) {
        const Stage* producer = nullptr;
        for (auto& p : schedule.stages()) {
          if (p->tensor().node() == in) producer = p.get();
        }
        if (producer && (producer->inlined() || producer->folded() || producer->attach())) {
          return absl::InvalidArgumentError("function " + name + ": tensor " + in->name +
                                            " is an input of extern " + stage->tensor().name() +
                                            " but is inlined, folded or computed at a loop; an " +
                                            "extern call reads whole stored buffers");
        }
        inputs.push_back(in->buffer);
      }
      nests.push_back({stage->tensor().node().get(), stage->tensor()->extern_body(inputs, own)});
    } else {
      auto nest = LowerStage(*stage);
      if (!nest.ok()) return nest.status();
      nests.push_back({stage->tensor().node().get(), *nest});
    }
    const Buffer& out = stage->store_buffer();
    computed.insert(out.get());
    // An intermediate: an Allocate around the body (on a GPU device memory that the host
    // allocates through the runtime's hook around the kernels; see split_host_device.h).
    if (!arg_buffers.count(out.get())) temporaries.push_back(out);
  }
  // An extern updating its first input (index_add's scatter) takes its producer's store.
  const std::set<const BufferNode*> in_place = UpdateExternsInPlace(&nests, arg_buffers);
  temporaries.erase(std::remove_if(temporaries.begin(), temporaries.end(),
                                   [&](const Buffer& b) { return in_place.count(b.get()) > 0; }),
                    temporaries.end());
  std::vector<Stmt> stmts;
  for (TensorNest& n : nests) stmts.push_back(std::move(n.stmt));
  Stmt body = Block::Make(stmts);
  for (const BufferNode* read : BuffersReadFromOutside(body)) {
    if (!computed.count(read) && !arg_buffers.count(read)) {
      return absl::InvalidArgumentError("function " + name + ": tensor " + read->name +
                                        " is read but is neither an argument nor computed here");
    }
  }
  for (auto& tmp : temporaries) body = Allocate::Make(tmp, body);
  absl::Status math_ok = CheckMathCalls(name, body);
  if (!math_ok.ok()) return math_ok;

  // 2. The passes, in order.
  PassRunner passes(name);
  passes.Dump("schedule", body);
  body = passes.Run(
      "simplify", [](const Stmt& s) { return Simplify(s); }, body);
  if (target.is_gpu()) {
    // Reductions raced by threadIdx.x: per-thread partials and one block reduce, while the
    // loops are still whole (before flattening; the bound loops stay for the host/device split).
    auto lowered = passes.Run("lower_thread_reduce", LowerThreadReduce, body);
    if (!lowered.ok()) {
      return absl::Status(lowered.status().code(),
                          "function " + name + ": " + std::string(lowered.status().message()));
    }
    body = *std::move(lowered);
  }
  if (!target.is_gpu()) {
    // Vector partials live in SIMD registers; a GPU thread's vectors are only its wide loads and
    // stores, and its reductions go across threads instead (lower_thread_reduce).
    body = passes.Run("vectorize_reduce", VectorizeReductions, body);
  }
  // Long float sums in blocks of partials (a sum of 2^25 ones exact in float32). On GPUs too: a
  // thread that sums a whole column (a column mean, a column sum whose rows split into no
  // chunks) added every row into one accumulator; of a symbolic number of rows too. GPU loops
  // over a thread's share of a symbolic row are left whole: blocked for nothing (PartitionLoops
  // then split the copies' bounds).
  const bool symbolic_shares = !target.is_gpu();
  body = passes.Run(
      "block_reductions",
      [symbolic_shares](const Stmt& s) { return BlockReductions(s, symbolic_shares); }, body);
  // Guards first: remove_redundant_guards drops those the loop bounds imply (symbolic too),
  // then partition_loops splits serial/parallel loops so that their main part has no tail
  // guard; both before vectorize, which turns each guard left inside a vectorized loop into a
  // branch between the vector body and a scalar tail. The guard lower_thread_reduce puts on
  // the single final store (tx == 0) is an equality, which remove_redundant_guards never drops,
  // and partition_loops leaves loops around thread loops whole; insert_sync comes after it, so
  // it splits a loop with shared memory or a block reduce only where all threads agree.
  body = passes.Run("remove_redundant_guards", RemoveRedundantGuards, body);
  body = passes.Run("partition_loops", PartitionLoops, body);
  body = passes.Run("vectorize", VectorizeLoops, body);
  body = passes.Run("unroll", UnrollLoops, body);
  if (target.has_shared_memory()) body = passes.Run("insert_sync", InsertSync, body);
  body = passes.Run("flatten_storage", FlattenStorage, body);
  body = passes.Run(
      "simplify_final", [](const Stmt& s) { return Simplify(s); }, body);
  // On canonical flat indices; only for GPU code, which becomes CUDA source: LLVM hoists and
  // shares on its own. It names pure integer arithmetic only (no loads, no calls) and moves no
  // statement, so the barriers and block reduce calls stay where insert_sync and
  // lower_thread_reduce put them.
  if (target.is_gpu()) body = passes.Run("hoist_common_index", HoistCommonIndex, body);
  func->body = body;
  if (!target.is_gpu()) return func;

  // 3. Last, for GPUs: independent bound loop nests of one launch shape are grouped, then each
  // nest or group becomes a device kernel that the host entry launches; the dump shows the
  // host entry and its kernels.
  auto split = passes.Time("split_host_device", [&] {
    return SplitHostDevice(*func, CurrentCompileOptions().merge_kernels);
  });
  if (split.ok()) passes.DumpText("split_host_device", [&] { return ToString(**split); });
  return split;
}

}  // namespace cinn_like::ir
