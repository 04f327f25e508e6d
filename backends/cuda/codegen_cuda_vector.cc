/// \file CodeGenCudaDev's vector statements: 128-bit (or 64-, 32-bit) loads and stores through
/// CUDA vector types, and the kernel's alignment plan (kernel_alignment.h): stores whose
/// alignment follows from the pointers' print as vectors alone, others with a test of their
/// addresses and a lane-by-lane scalar fallback.
#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "backends/cuda/codegen_cuda_dev.h"
#include "backends/cuda/kernel_alignment.h"
#include "backends/vector_lanes.h"
#include "ir/mutator.h"
#include "ir/printer.h"
#include "ir/structural_equal.h"
#include "ir/tensor.h"
#include "ir/transforms/simplify.h"
#include "ir/visitor.h"

namespace cinn_like::backends {
namespace {

const char kComponents[] = "xyzw";

/// The widest access (16, 8 or 4 bytes, holding at least two lanes) that tiles `lanes`
/// elements of `elem`; 0 when there is none.
int ChunkBytes(const ir::Type& elem, int lanes) {
  int bytes = elem.bytes();
  for (int chunk : {16, 8, 4}) {
    if (chunk % bytes == 0 && chunk / bytes >= 2 && (lanes * bytes) % chunk == 0) return chunk;
  }
  return 0;
}

/// True when every lane of `e` has the same value: no ramp and no vector variable in it (a
/// load at a broadcast index, the per-channel parameters of an NCHW tensor, is one value).
bool LaneInvariant(const ir::Expr& e) {
  struct Finder : ir::IRVisitor {
    using ir::IRVisitor::Visit;
    bool varies = false;
    void VisitRamp(const ir::Ramp*) override { varies = true; }
    void VisitVariable(const ir::Variable* op) override { varies |= op->type.is_vector(); }
  } f;
  f.Visit(e);
  return !f.varies;
}

/// Replaces each largest lane-invariant vector subexpression that computes something (a
/// load, a call, arithmetic; not a broadcast constant or variable) by a broadcast of a
/// temporary named by `name`, listed in `defs` with its scalar value: a value every lane
/// shares (batch norm's per-channel scale, say) is computed once per statement, not per lane.
class HoistLaneInvariants : public ir::IRMutator {
 public:
  explicit HoistLaneInvariants(std::function<std::string()> name) : name_(std::move(name)) {}
  using ir::IRMutator::Mutate;
  std::vector<std::pair<std::string, ir::Expr>> defs;

  ir::Expr Mutate(const ir::Expr& e) override {
    if (!e.defined() || !e.type().is_vector()) return e;
    if (auto* b = e.As<ir::Broadcast>()) {
      const ir::Expr& v = b->value;
      if (v.As<ir::Variable>() || v.As<ir::IntImm>() || v.As<ir::FloatImm>()) return e;
    }
    if (!LaneInvariant(e)) return ir::IRMutator::Mutate(e);
    ir::Expr scalar = Lane(e, 0, nullptr);
    const int lanes = e.type().lanes();
    for (const auto& [name, value] : defs) {
      if (ir::StructuralEqual(value, scalar)) {
        return ir::Broadcast::Make(ir::Var(name, scalar.type()), lanes);
      }
    }
    defs.emplace_back(name_(), scalar);
    return ir::Broadcast::Make(ir::Var(defs.back().first, scalar.type()), lanes);
  }

 private:
  std::function<std::string()> name_;
};

/// The dense vector loads of an expression, without repeats.
std::vector<const ir::Load*> DenseLoads(const ir::Expr& e) {
  struct Finder : ir::IRVisitor {
    using ir::IRVisitor::Visit;
    std::vector<const ir::Load*> found;
    void VisitLoad(const ir::Load* op) override {
      ir::IRVisitor::VisitLoad(op);
      if (op->type.is_scalar() || op->indices.size() != 1 || !DenseRamp(op->indices[0])) return;
      if (!ChunkBytes(op->buffer->dtype, op->type.lanes())) return;
      for (const ir::Load* f : found) {
        if (f->buffer == op->buffer && ir::StructuralEqual(f->indices[0], op->indices[0])) return;
      }
      found.push_back(op);
    }
  } finder;
  finder.Visit(e);
  return finder.found;
}

/// A dense access PrintVectorStore makes chunked vector accesses: the buffer, the index of
/// lane 0 and the chunk's bytes. None for a thread's local array (read and written lane by
/// lane: its elements stay registers where the indices are constants; a vector access would
/// take the array's address), a strided index, or a type without a chunk.
struct DenseAccess {
  const ir::Buffer* buffer;
  ir::Expr base;
  int chunk_bytes;
};
std::optional<DenseAccess> VectorAccess(const ir::Buffer& buffer, const ir::Expr& index,
                                        int lanes) {
  if (buffer->scope == ir::MemoryScope::kLocal) return std::nullopt;
  const ir::Ramp* ramp = DenseRamp(index);
  const int bytes = ramp ? ChunkBytes(buffer->dtype, lanes) : 0;
  if (!bytes || CodeGenCudaDev::CudaVectorType(buffer->dtype, bytes).name.empty()) {
    return std::nullopt;
  }
  return DenseAccess{&buffer, ramp->base, bytes};
}

/// The vector accesses of a vector store: its dense loads, then the store itself.
std::vector<DenseAccess> VectorAccesses(const ir::Store* op) {
  std::vector<DenseAccess> out;
  const int lanes = op->value.type().lanes();
  for (const ir::Load* l : DenseLoads(op->value)) {
    if (auto a = VectorAccess(l->buffer, l->indices[0], l->type.lanes())) out.push_back(*a);
  }
  if (op->indices.size() == 1 && lanes > 1) {
    if (auto a = VectorAccess(op->buffer, op->indices[0], lanes)) out.push_back(*a);
  }
  return out;
}

/// `(a | b) % 16 == 0 && c % 8 == 0`: the addresses (as integers) of each width aligned to it.
std::string AlignmentTest(const std::map<int, std::vector<std::string>>& by_width) {
  std::string test;
  for (const auto& [width, addrs] : by_width) {
    std::string ored = addrs[0];
    for (size_t i = 1; i < addrs.size(); ++i) absl::StrAppend(&ored, " | ", addrs[i]);
    if (addrs.size() > 1) ored = "(" + ored + ")";
    absl::StrAppend(&test, test.empty() ? "" : " && ", ored, " % ", width, " == 0");
  }
  return test;
}

}  // namespace

CodeGenCudaDev::VectorType CodeGenCudaDev::CudaVectorType(const ir::Type& elem, int bytes) {
  VectorType v;
  if (elem.bytes() == 0 || bytes % elem.bytes() != 0) return v;
  v.lanes = bytes / elem.bytes();
  static const std::map<std::pair<int, int>, const char*> kNative = {
      {{32, 2}, "2"}, {{32, 4}, "4"}, {{64, 2}, "2"}};
  const char* prefix = nullptr;
  if (elem.is_float() && elem.bits() == 32) prefix = "float";
  if (elem.is_float() && elem.bits() == 64) prefix = "double";
  if (elem.is_int() && elem.bits() == 32) prefix = "int";
  if (elem.is_uint() && elem.bits() == 32) prefix = "uint";
  if (elem.is_int() && elem.bits() == 64) prefix = "longlong";
  if (elem.is_uint() && elem.bits() == 64) prefix = "ulonglong";
  auto it = kNative.find({elem.bits(), v.lanes});
  if (prefix && it != kNative.end()) {
    v.name = absl::StrCat(prefix, it->second);
    v.native = true;
    return v;
  }
  v.name = bytes == 16 ? "uint4" : bytes == 8 ? "uint2" : "unsigned int";
  return v;
}

namespace {

/// The stores of `kernel` PlanKernelAlignment can print as vectors alone, and the widest chunk
/// each kernel argument is accessed with by them, where each variable of `assumed` is a
/// multiple of its value; empty when the kernel has shared arrays.
struct AlignedPlan {
  std::set<const ir::Store*> stores;
  std::map<const ir::BufferNode*, int> widest;
};
AlignedPlan PlanAligned(const ir::LoweredFuncNode& kernel,
                        const std::map<const ir::Variable*, int64_t>& assumed) {
  struct Scan : ir::IRVisitor {
    using ir::IRVisitor::Visit;
    std::map<const ir::Variable*, int64_t> lets;  // the known divisor of each let's value
    std::vector<const ir::Store*> stores;
    bool shared = false;
    void VisitLetStmt(const ir::LetStmt* op) override {
      // Stores are judged after the scan, so a variable bound twice (which the IR forbids)
      // gets no divisor rather than its last binding's.
      auto [it, fresh] = lets.emplace(op->var.node(), 1);
      it->second = fresh ? ir::KnownDivisor(op->value, &lets) : 1;
      ir::IRVisitor::VisitLetStmt(op);
    }
    void VisitAllocate(const ir::Allocate* op) override {
      shared |= op->buffer->scope == ir::MemoryScope::kShared;
      ir::IRVisitor::VisitAllocate(op);
    }
    void VisitStore(const ir::Store* op) override {
      if (op->value.type().is_vector() || HasVectorReduce(op->value)) stores.push_back(op);
      ir::IRVisitor::VisitStore(op);
    }
  } scan;
  scan.lets = assumed;
  scan.Visit(kernel.body);
  AlignedPlan plan;
  // A second copy of a shared array would double the block's shared memory.
  if (scan.shared) return plan;
  for (const ir::Argument& a : kernel.args) {
    if (a.is_buffer()) plan.widest[a.buffer.get()] = 0;
  }
  for (const ir::Store* store : scan.stores) {
    std::vector<DenseAccess> accesses = VectorAccesses(store);
    bool aligned = !accesses.empty();
    for (const DenseAccess& a : accesses) {
      const int lanes = a.chunk_bytes / (*a.buffer)->dtype.bytes();
      aligned = aligned && plan.widest.count(a.buffer->get()) &&
                ir::KnownDivisor(a.base, &scan.lets) % lanes == 0;
    }
    if (!aligned) continue;
    plan.stores.insert(store);
    for (const DenseAccess& a : accesses) {
      int& w = plan.widest[a.buffer->get()];
      w = std::max(w, a.chunk_bytes);
    }
  }
  return plan;
}

}  // namespace

KernelAlignment PlanKernelAlignment(const ir::LoweredFuncNode& kernel) {
  AlignedPlan plan = PlanAligned(kernel, {});
  // A row stride of symbolic length (x[row * s1 + ...]): with the kernel's size arguments
  // multiples of kSizeMultiple more stores may be aligned; then those the assumption is needed
  // for are tested too.
  std::map<const ir::Variable*, int64_t> sizes;
  for (const ir::Argument& a : kernel.args) {
    if (!a.is_buffer() && a.var.type().is_integer()) sizes[a.var.node()] = kSizeMultiple;
  }
  KernelAlignment out;
  if (!sizes.empty()) {
    AlignedPlan assumed = PlanAligned(kernel, sizes);
    if (assumed.stores.size() > plan.stores.size()) {
      // Drop the assumptions the aligned stores do without, one at a time, each drop checked
      // against what is left (x[row * (s1 * s2)] needs one of s1, s2, not both, nor neither);
      // the plan is then made with exactly the assumptions the kernel tests.
      auto kept = sizes;
      for (const auto& [v, multiple] : sizes) {
        auto fewer = kept;
        fewer.erase(v);
        if (PlanAligned(kernel, fewer).stores.size() == assumed.stores.size()) kept = fewer;
      }
      for (const auto& [v, multiple] : kept) out.sizes.push_back(v);
      plan = PlanAligned(kernel, kept);
    }
  }
  out.stores = std::move(plan.stores);
  for (size_t i = 0; i < kernel.args.size(); ++i) {
    const ir::Argument& a = kernel.args[i];
    if (!a.is_buffer() || plan.widest[a.buffer.get()] == 0) continue;
    out.pointers.push_back({static_cast<int>(i), plan.widest[a.buffer.get()]});
  }
  if (out.pointers.empty()) out = KernelAlignment();
  return out;
}

std::string CodeGenCudaDev::KernelAlignmentTest(const ir::LoweredFuncNode& kernel,
                                                const KernelAlignment& plan) {
  std::map<int, std::vector<std::string>> by_width;
  for (const KernelAlignment::Pointer& p : plan.pointers) {
    by_width[p.bytes].push_back(absl::StrCat("reinterpret_cast<unsigned long long>(",
                                             kernel.args[p.arg].buffer->name, ")"));
  }
  if (by_width.empty()) return "";
  std::string test = AlignmentTest(by_width);
  for (const ir::Variable* v : plan.sizes) {
    absl::StrAppend(&test, " && ", v->name, " % ", kSizeMultiple, " == 0");
  }
  return test;
}

void CodeGenCudaDev::PrintVectorStore(const ir::Store* store_op) {
  const int lanes = store_op->value.type().lanes();  // 1: a scalar reduced from vectors
  if (lanes > 1 &&
      (store_op->indices.size() != 1 || store_op->indices[0].type().lanes() != lanes)) {
    Fail(absl::InternalError(absl::StrCat("vector store to ", store_op->buffer->name, " of ", lanes,
                                          " lanes needs one flat index of as many lanes")));
    return;
  }
  // Values every lane shares, computed once before the lanes (both paths below read them).
  HoistLaneInvariants hoist([this] { return absl::StrCat("bcast", vector_count_++); });
  const ir::Expr value = hoist.Mutate(store_op->value);
  for (const auto& [name, v] : hoist.defs) {
    Indent();
    out_ << "const " << TypeName(v.type()) << " " << name << " = " << Print(v) << ";\n";
  }
  const ir::Stmt hoisted = ir::Store::Make(store_op->buffer, store_op->indices, value);
  const ir::Store* op = hoisted.As<ir::Store>();
  const ir::Expr& index = op->indices[0];
  auto scalar_lanes = [&](const LoadHook& hook) {
    if (lanes == 1) {  // vector_reduce(v): v's lanes combined, its loads through `hook`
      PrintStmt(ir::Store::Make(op->buffer, op->indices, ExpandVectorReduces(op->value, hook)));
      return;
    }
    for (int k = 0; k < lanes; ++k) {
      ir::Expr value = Lane(op->value, k, hook);
      if (!hook) {
        PrintStmt(ir::Store::Make(op->buffer, {Lane(index, k, nullptr)}, value));
        continue;
      }
      value = PrintCommonSubexpressions(value);
      Indent();
      out_ << op->buffer->name << "[" << Print(Lane(index, k, nullptr)) << "] = " << Print(value)
           << ";\n";
    }
  };

  // Every dense access of the statement with a vector type becomes chunked vector accesses.
  struct Access {
    const ir::Buffer* buffer;
    ir::Expr base;
    VectorType type;
    int chunk_bytes;
    std::string name;  // the temporary; chunk c is name + "_" + c when there are several
    int chunks;
    std::string Temp(int c) const { return chunks == 1 ? name : absl::StrCat(name, "_", c); }
    /// Lane k of the temporaries, as C.
    std::string Component(int k, const std::string& elem_type) const {
      std::string temp = Temp(k / type.lanes);
      int c = k % type.lanes;
      if (type.native) return absl::StrCat(temp, ".", std::string(1, kComponents[c]));
      return absl::StrCat("reinterpret_cast<", elem_type, "*>(&", temp, ")[", c, "]");
    }
  };
  auto make_access = [&](const ir::Buffer& buffer, const ir::Expr& idx,
                         int lanes) -> std::optional<Access> {
    std::optional<DenseAccess> dense = VectorAccess(buffer, idx, lanes);
    if (!dense) return std::nullopt;
    VectorType vt = CudaVectorType(buffer->dtype, dense->chunk_bytes);
    return Access{&buffer,
                  dense->base,
                  vt,
                  dense->chunk_bytes,
                  absl::StrCat(buffer->name, "_v", vector_count_++),
                  lanes / vt.lanes};
  };
  std::vector<const ir::Load*> loads;
  std::vector<Access> load_access;
  for (const ir::Load* l : DenseLoads(op->value)) {
    std::optional<Access> a = make_access(l->buffer, l->indices[0], l->type.lanes());
    if (!a) continue;
    loads.push_back(l);
    load_access.push_back(std::move(*a));
  }
  std::optional<Access> store =
      lanes > 1 ? make_access(op->buffer, index, lanes) : std::optional<Access>();
  if (load_access.empty() && !store) {
    scalar_lanes(nullptr);
    return;
  }

  auto vector_path = [&] {
    auto chunk_address = [&](const Access& a, int c) {
      ir::Expr base = c == 0 ? a.base : ir::Simplify(a.base + ir::Expr(c * a.type.lanes));
      return absl::StrCat("&", (*a.buffer)->name, "[", Print(base), "]");
    };
    for (auto& a : load_access) {
      for (int c = 0; c < a.chunks; ++c) {
        Indent();
        // Every vector type has an __ldcs overload (evict_first_: buffers read once).
        const bool once = evict_first_.count(a.buffer->get()) > 0;
        out_ << a.type.name << " " << a.Temp(c) << " = " << (once ? "__ldcs(" : "*")
             << "reinterpret_cast<const " << a.type.name << "*>(" << chunk_address(a, c)
             << (once ? "));\n" : ");\n");
      }
    }
    // One variable per lane of a temporary, so that repeats of a load are equal expressions
    // (PrintCommonSubexpressions compares variables by identity).
    std::map<std::pair<size_t, int>, ir::Var> lane_vars;
    LoadHook hook = [&](const ir::Load* l, int k) -> ir::Expr {
      for (size_t i = 0; i < loads.size(); ++i) {
        if (loads[i]->buffer != l->buffer ||
            !ir::StructuralEqual(loads[i]->indices[0], l->indices[0])) {
          continue;
        }
        auto [it, fresh] = lane_vars.try_emplace({i, k});
        if (fresh) {
          // A name the printer writes verbatim: the lane of the vector temporary.
          ir::Type elem = l->buffer->dtype;
          it->second = ir::Var(load_access[i].Component(k, TypeName(elem)), elem);
        }
        return it->second;
      }
      return ir::Expr();
    };
    if (store) {
      for (int c = 0; c < store->chunks; ++c) {
        Indent();
        out_ << store->type.name << " " << store->Temp(c) << ";\n";
      }
      std::string elem = TypeName(op->buffer->dtype);
      for (int k = 0; k < lanes; ++k) {
        const ir::Expr value = PrintCommonSubexpressions(Lane(op->value, k, hook));
        Indent();
        out_ << store->Component(k, elem) << " = " << Print(value) << ";\n";
      }
      for (int c = 0; c < store->chunks; ++c) {
        Indent();
        out_ << "*reinterpret_cast<" << store->type.name << "*>(" << chunk_address(*store, c)
             << ") = " << store->Temp(c) << ";\n";
      }
    } else {
      scalar_lanes(hook);
    }
  };
  if (assume_aligned_ && aligned_stores_.count(store_op)) {
    // The kernel's aligned version (PlanKernelAlignment): every access is aligned here.
    vector_path();
    return;
  }
  // The vector path needs each access aligned to its width: one test per width.
  std::map<int, std::vector<std::string>> by_width;
  auto address = [&](const Access& a) {
    return absl::StrCat("reinterpret_cast<unsigned long long>(&", (*a.buffer)->name, "[",
                        Print(a.base), "])");
  };
  for (auto& a : load_access) by_width[a.chunk_bytes].push_back(address(a));
  if (store) by_width[store->chunk_bytes].push_back(address(*store));
  Indent();
  out_ << "if (" << AlignmentTest(by_width) << ") {\n";
  ++indent_;
  vector_path();
  --indent_;
  Indent();
  out_ << "} else {\n";
  ++indent_;
  scalar_lanes(nullptr);
  --indent_;
  Indent();
  out_ << "}\n";
}

}  // namespace cinn_like::backends
