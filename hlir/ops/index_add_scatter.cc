/// \file index_add on GPUs as a scatter: a hand-written loop nest (an extern tensor's statement,
/// as the scans are) in place of the generated compute's reduction over every (row, k) pair,
/// whose work x.size * K made an embedding's gradient the slowest kernel of a GPT-2 training
/// step (a 50257 x 768 table and 1024 tokens: 40 G selects).
///
/// Two kernels. The first copies x to out. The second has a thread per element of `updates`
/// (viewed as [outer, K, inner] around `axis`): the thread of (o, k, j) whose index r = index[k]
/// occurs first at k (no k' < k with index[k'] == r) sums updates[o, k', j] over every k' >= k
/// with index[k'] == r, in order of k', in float32 for float16 and bfloat16, and adds the sum to
/// out[o, r, j]; the other threads do nothing. No atomics: each element of out has one writer,
/// and the sum's order is fixed, so the result is the same bit for bit at every run (PyTorch's
/// CUDA embedding backward is deterministic too). Work: K * K index compares per (o, j), cheap
/// beside the old x.size * K while K is the tokens of a batch (their loads are the same address
/// across a warp); a sort would make it K log K. Out-of-range indices are skipped (the GPU
/// compute's contract without FLAGS_cinn_like_check_indices; with it, the index is checked first).
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

}  // namespace

ir::Tensor IndexAddScatter(const ir::Tensor& x, const ir::Tensor& index, const ir::Tensor& updates,
                           int axis, const std::string& name) {
  auto build = [axis](const std::vector<ir::Buffer>& b, const ir::Buffer& out) -> Stmt {
    const ir::Buffer &x = b[0], &index = b[1], &updates = b[2];
    const std::vector<Expr>& xs = x->shape;
    const std::vector<Expr>& us = updates->shape;
    const int rank = static_cast<int>(xs.size());
    const ir::Type t = out->dtype;
    const ir::Type acc_t = t.is_low_precision_float() ? ir::Float(32) : t;

    // The copy: out = x, a thread per element.
    ir::Var e("e", ir::Int(64));
    std::vector<Expr> at(rank);
    Unflatten(e, xs, 0, rank, &at);
    Stmt copy =
        OnThreads(e, Product(xs, 0, rank), "copy", ir::Store::Make(out, at, ir::Load::Make(x, at)));

    // The scatter: a thread per element of updates, (o, k, j).
    ir::Var u("u", ir::Int(64));
    std::vector<Expr> src(rank);
    Unflatten(u, us, 0, rank, &src);
    const Expr k = src[axis];
    const Expr count = ir::Cast::Make(ir::Int(64), us[axis]);
    const Expr r = ir::Load::Make(index, {k});
    ir::Buffer first =
        ir::MakeBuffer(out->name + "_first", ir::Int(32), {Expr(1)}, ir::MemoryScope::kLocal);
    ir::Buffer sum = ir::MakeBuffer(out->name + "_sum", acc_t, {Expr(1)}, ir::MemoryScope::kLocal);
    ir::Var k2("k2", ir::Int(64));
    const Expr same = ir::Load::Make(index, {k2}) == r;
    Stmt find_first =
        ir::For::Make(k2, I64(0), k, ir::ForKind::kSerial,
                      ir::IfThenElse::Make(same, ir::Store::Make(first, {Expr(0)}, Expr(0))));
    std::vector<Expr> from = src;
    from[axis] = k2;
    Stmt add_up =
        ir::For::Make(k2, k, count - k, ir::ForKind::kSerial,
                      ir::IfThenElse::Make(
                          same, ir::Store::Make(sum, {Expr(0)},
                                                ir::Load::Make(sum, {Expr(0)}) +
                                                    CastTo(acc_t, ir::Load::Make(updates, from)))));
    std::vector<Expr> dst = src;
    dst[axis] = ir::Cast::Make(ir::Int(64), r);
    const Expr bound = ir::Cast::Make(ir::Int(64), xs[axis]);
    const Expr in_range =
        ir::Cast::Make(ir::Int(64), r) >= I64(0) && ir::Cast::Make(ir::Int(64), r) < bound;
    // x's element, not out's: the copy wrote the same value, and a store of out[i] + v would
    // read as a reduction into out to the passes that lower cross-thread reductions.
    Stmt write = ir::Store::Make(
        out, dst,
        CastTo(t, CastTo(acc_t, ir::Load::Make(x, dst)) + ir::Load::Make(sum, {Expr(0)})));
    Stmt owner = ir::Block::Make({ir::Store::Make(sum, {Expr(0)}, Const(acc_t, 0)), add_up, write});
    Stmt per_thread = ir::Block::Make(
        {ir::Store::Make(first, {Expr(0)}, Expr(1)), find_first,
         ir::IfThenElse::Make(in_range && ir::Load::Make(first, {Expr(0)}) == Expr(1), owner)});
    per_thread = ir::Allocate::Make(first, ir::Allocate::Make(sum, per_thread));
    Stmt scatter = OnThreads(u, Product(us, 0, rank), "scatter", per_thread);
    return ir::Block::Make({copy, scatter});
  };
  return ir::ExternTensor(name, x->dtype, x->shape, {x, index, updates}, build);
}

}  // namespace cinn_like::hlir::ops
