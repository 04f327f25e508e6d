/// \file index_add on GPUs as a scatter: a hand-written loop nest (an extern tensor's statement,
/// as the scans are) in place of the generated compute's reduction over every (row, k) pair,
/// whose work x.size * K made an embedding's gradient the slowest kernel of a GPT-2 training
/// step (a 50257 x 768 table and 1024 tokens: 40 G selects).
///
/// Three kernels (two where x is an intermediate that the scatter updates in place,
/// ir/in_place_extern.h). The first links the index: a warp per position k finds whether k is the
/// first position of its index value, the next position of the same value and how many there
/// are from k on (IndexLinks: K * K compares, once for all columns). The second copies x to
/// out. The third has a thread per element of `updates` (viewed as [outer, K, inner] around
/// `axis`): the thread of (o, k, j) whose k is its index's first position r = index[k] follows
/// the links through every position of r, summing updates[o, k', j] in order of k', in float32
/// for float16 and bfloat16, and adds the sum to out[o, r, j]; the other threads do nothing. No
/// atomics: each element of out has one writer, and the sum's order is fixed, so the result is
/// the same bit for bit at every run (PyTorch's CUDA embedding backward is deterministic too).
/// Work: K * K for the links and one step per update, where each thread used to compare its
/// index with every earlier one (K * K per column: 0.25 ms of GPT-2's step for a table of 768
/// columns and 1024 tokens on an H200). Out-of-range indices are skipped (the GPU compute's
/// contract without FLAGS_cinn_like_check_indices; with it, the index is checked first).
#include "hlir/ops/index_add_scatter.h"

#include "hlir/ops/compute_util.h"
#include "ir/tensor.h"

namespace cinn_like::hlir::ops {
namespace {

using ir::Expr;
using ir::Stmt;

constexpr int kThreads = 256;

Expr I64(int64_t v) { return Expr(v); }

/// The product of dims [from, to) of `shape`.
Expr Product(const std::vector<Expr>& shape, int from, int to) {
  Expr p = I64(1);
  for (int d = from; d < to; ++d) p = p * ir::Cast::Make(ir::Int(64), shape[d]);
  return p;
}

/// `flat` (int64, row-major over dims [from, to) of shape) as one index per dim, into `at`.
void Unflatten(Expr flat, const std::vector<Expr>& shape, int from, int to, std::vector<Expr>* at) {
  for (int d = to - 1; d >= from; --d) {
    const Expr size = ir::Cast::Make(ir::Int(64), shape[d]);
    (*at)[d] = d > from ? flat % size : flat;
    flat = flat / size;
  }
}

/// A loop over [0, n) (int64) as blocks of kThreads threads, `body` guarded by v < n.
Stmt OnThreads(const ir::Var& v, const Expr& n, const std::string& tag, const Stmt& body) {
  ir::Var block(tag + "_block"), thread(tag + "_thread");
  Expr at =
      ir::Cast::Make(ir::Int(64), block) * I64(kThreads) + ir::Cast::Make(ir::Int(64), thread);
  Stmt guarded = ir::LetStmt::Make(v, at, ir::IfThenElse::Make(v < n, body));
  Stmt threads =
      ir::For::Make(thread, Expr(0), Expr(kThreads), ir::ForKind::kGpuThread, guarded, 0);
  Expr blocks = ir::Cast::Make(ir::Int(32), (n + I64(kThreads - 1)) / I64(kThreads));
  return ir::For::Make(block, Expr(0), blocks, ir::ForKind::kGpuBlock, threads, 0);
}

/// The links of `index` [K], as int32 [3, K]: for each k, whether no k' < k holds the same
/// index (row 0), the next k' > k that does (row 1; K where none does) and how many k' >= k
/// do, k itself included (row 2). A warp per k (kLinkRows of them a block): each lane compares
/// k with every 32nd k' and the lanes combine their counts by shuffles (block reduces over
/// threadIdx.x): K * K compares once, however many columns the scatter has, K / 32 of them per
/// lane (a thread per k, comparing with all K, was 0.12 ms of GPT-2's step at K = 1024).
ir::Tensor IndexLinks(const ir::Tensor& index, const std::string& name) {
  auto build = [](const std::vector<ir::Buffer>& b, const ir::Buffer& out) -> Stmt {
    constexpr int kLanes = 32, kLinkRows = 8;
    const ir::Buffer& index = b[0];
    const Expr count = ir::Cast::Make(ir::Int(64), index->shape[0]);
    ir::Var block("links_block"), row("links_row"), lane("links_lane");
    ir::Var k("k", ir::Int(64)), step("step", ir::Int(64));
    auto local = [&](const std::string& suffix, ir::Type t) {
      return ir::MakeBuffer(out->name + suffix, t, {Expr(1)}, ir::MemoryScope::kLocal);
    };
    const ir::Buffer earlier = local("_earlier", ir::Int(32)), same = local("_same", ir::Int(32)),
                     next = local("_next", ir::Int(64));
    auto load = [](const ir::Buffer& v) { return ir::Load::Make(v, {Expr(0)}); };
    auto set = [](const ir::Buffer& v, Expr e) { return ir::Store::Make(v, {Expr(0)}, e); };
    const Expr k2 = step * I64(kLanes) + ir::Cast::Make(ir::Int(64), lane);
    // k's own index is loaded only for k < count (&& short-circuits: the last block's rows
    // past the end load nothing).
    const Expr hit =
        k < count && k2 < count && ir::Load::Make(index, {k2}) == ir::Load::Make(index, {k});
    // A lane's k' grow with the step: its first hit after k is its nearest.
    Stmt visit = ir::IfThenElse::Make(
        hit, ir::Block::Make({ir::IfThenElse::Make(k2 < k, set(earlier, load(earlier) + Expr(1))),
                              ir::IfThenElse::Make(k2 >= k, set(same, load(same) + Expr(1))),
                              ir::IfThenElse::Make(k2 > k && load(next) == count, set(next, k2))}));
    auto combine = [&](const ir::Buffer& v, ir::IntrinsicOp op) {
      return set(v, ir::Call::Make(v->dtype, op, {load(v)}));
    };
    // Every lane reaches the combines (k past the end adds nothing); lane 0 stores.
    Stmt body = ir::Block::Make(
        {set(earlier, Expr(0)), set(same, Expr(0)), set(next, count),
         ir::For::Make(step, I64(0), (count + I64(kLanes - 1)) / I64(kLanes), ir::ForKind::kSerial,
                       visit),
         combine(earlier, ir::IntrinsicOp::kBlockReduceSum),
         combine(same, ir::IntrinsicOp::kBlockReduceSum),
         combine(next, ir::IntrinsicOp::kBlockReduceMin),
         ir::IfThenElse::Make(
             k < count && Expr(lane) == Expr(0),
             ir::Block::Make(
                 {ir::Store::Make(out, {Expr(0), k},
                                  ir::Select::Make(load(earlier) == Expr(0), Expr(1), Expr(0))),
                  ir::Store::Make(out, {Expr(1), k}, ir::Cast::Make(ir::Int(32), load(next))),
                  ir::Store::Make(out, {Expr(2), k}, load(same))}))});
    body = ir::Allocate::Make(earlier, ir::Allocate::Make(same, ir::Allocate::Make(next, body)));
    body = ir::LetStmt::Make(
        k, ir::Cast::Make(ir::Int(64), block) * I64(kLinkRows) + ir::Cast::Make(ir::Int(64), row),
        body);
    Stmt lanes = ir::For::Make(lane, Expr(0), Expr(kLanes), ir::ForKind::kGpuThread, body, 0);
    Stmt rows = ir::For::Make(row, Expr(0), Expr(kLinkRows), ir::ForKind::kGpuThread, lanes, 1);
    Expr blocks = ir::Cast::Make(ir::Int(32), (count + I64(kLinkRows - 1)) / I64(kLinkRows));
    return ir::For::Make(block, Expr(0), blocks, ir::ForKind::kGpuBlock, rows, 0);
  };
  return ir::ExternTensor(name, ir::Int(32), {Expr(3), index->shape[0]}, {index}, build);
}

}  // namespace

ir::Tensor IndexAddScatter(const ir::Tensor& x, const ir::Tensor& index, const ir::Tensor& updates,
                           int axis, const std::string& name) {
  const ir::Tensor links = IndexLinks(index, name + "_links");
  auto build = [axis](const std::vector<ir::Buffer>& b, const ir::Buffer& out) -> Stmt {
    const ir::Buffer &x = b[0], &index = b[1], &updates = b[2], &links = b[3];
    const std::vector<Expr>& xs = x->shape;
    const std::vector<Expr>& us = updates->shape;
    const int rank = static_cast<int>(xs.size());
    const ir::Type t = out->dtype;
    const ir::Type acc_t = t.is_low_precision_float() ? ir::Float(32) : t;

    // The copy: out = x, a thread per element; none where x is out (updated in place).
    ir::Var e("e", ir::Int(64));
    std::vector<Expr> at(rank);
    Unflatten(e, xs, 0, rank, &at);
    const bool in_place = x == out;
    Stmt copy = in_place ? Stmt()
                         : OnThreads(e, Product(xs, 0, rank), "copy",
                                     ir::Store::Make(out, at, ir::Load::Make(x, at)));

    // The scatter: a thread per element of updates, (o, k, j); the thread of the first k of
    // its index follows the links through every later k of the same index.
    ir::Var u("u", ir::Int(64));
    std::vector<Expr> src(rank);
    Unflatten(u, us, 0, rank, &src);
    const Expr k = src[axis];
    const Expr r = ir::Load::Make(index, {k});
    ir::Buffer sum = ir::MakeBuffer(out->name + "_sum", acc_t, {Expr(1)}, ir::MemoryScope::kLocal);
    ir::Buffer at_k =
        ir::MakeBuffer(out->name + "_at", ir::Int(64), {Expr(1)}, ir::MemoryScope::kLocal);
    ir::Var step("step", ir::Int(64));
    std::vector<Expr> from = src;
    from[axis] = ir::Load::Make(at_k, {Expr(0)});
    Stmt add_up = ir::For::Make(
        step, I64(0), ir::Cast::Make(ir::Int(64), ir::Load::Make(links, {Expr(2), k})),
        ir::ForKind::kSerial,
        ir::Block::Make(
            {ir::Store::Make(
                 sum, {Expr(0)},
                 ir::Load::Make(sum, {Expr(0)}) + CastTo(acc_t, ir::Load::Make(updates, from))),
             ir::Store::Make(
                 at_k, {Expr(0)},
                 ir::Cast::Make(ir::Int(64), ir::Load::Make(links, {Expr(1), from[axis]})))}));
    std::vector<Expr> dst = src;
    dst[axis] = ir::Cast::Make(ir::Int(64), r);
    const Expr bound = ir::Cast::Make(ir::Int(64), xs[axis]);
    const Expr in_range =
        ir::Cast::Make(ir::Int(64), r) >= I64(0) && ir::Cast::Make(ir::Int(64), r) < bound;
    // x's element added into the thread's sum, then stored: a store of out[i] + v would read
    // as a reduction into out to the passes that lower cross-thread reductions (x may be out).
    Stmt add_x = ir::Store::Make(
        sum, {Expr(0)}, CastTo(acc_t, ir::Load::Make(x, dst)) + ir::Load::Make(sum, {Expr(0)}));
    Stmt write = ir::Store::Make(out, dst, CastTo(t, ir::Load::Make(sum, {Expr(0)})));
    Stmt owner = ir::Block::Make({ir::Store::Make(sum, {Expr(0)}, Const(acc_t, 0)),
                                  ir::Store::Make(at_k, {Expr(0)}, ir::Cast::Make(ir::Int(64), k)),
                                  add_up, add_x, write});
    Stmt per_thread =
        ir::IfThenElse::Make(in_range && ir::Load::Make(links, {Expr(0), k}) == Expr(1), owner);
    per_thread = ir::Allocate::Make(sum, ir::Allocate::Make(at_k, per_thread));
    Stmt scatter = OnThreads(u, Product(us, 0, rank), "scatter", per_thread);
    return in_place ? scatter : ir::Block::Make({copy, scatter});
  };
  ir::Tensor out = ir::ExternTensor(name, x->dtype, x->shape, {x, index, updates, links}, build);
  out.node()->extern_updates_first_input = true;
  return out;
}

}  // namespace cinn_like::hlir::ops
