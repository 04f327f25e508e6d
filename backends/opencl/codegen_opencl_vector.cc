/// \file CodeGenOpenCLDev's vector statements: dense accesses as aligned vector dereferences
/// (every buffer argument is 16-byte aligned: runtime/opencl/opencl_runtime.h) or
/// vload<n>/vstore<n>, around lanes computed as scalars.
#include "absl/strings/str_cat.h"
#include "backends/opencl/codegen_opencl_dev.h"
#include "backends/vector_lanes.h"
#include "ir/structural_equal.h"
#include "ir/transforms/simplify.h"
#include "runtime/opencl/opencl_runtime.h"

namespace cinn_like::backends {
namespace {

/// The OpenCL vector widths of vload<n>/vstore<n>.
bool IsVectorWidth(int lanes) {
  return lanes == 2 || lanes == 3 || lanes == 4 || lanes == 8 || lanes == 16;
}

}  // namespace

void CodeGenOpenCLDev::VisitLetStmt(const ir::LetStmt* op) {
  const bool integer = op->var.type().is_integer() && op->var.type().is_scalar();
  if (integer) lets_[op->var.node()] = ir::KnownDivisor(op->value, &lets_);
  CodeGenC::VisitLetStmt(op);
  if (integer) lets_.erase(op->var.node());
}

void CodeGenOpenCLDev::PrintVectorStore(const ir::Store* op) {
  const int lanes = op->value.type().lanes();  // 1: a scalar reduced from vectors
  if (op->indices.size() != 1 || (lanes > 1 && op->indices[0].type().lanes() != lanes)) {
    Fail(absl::InternalError(absl::StrCat("vector store to ", op->buffer->name, " of ", lanes,
                                          " lanes needs one flat index of as many lanes")));
    return;
  }
  // A dense access of a vector width, of a buffer in global or __local (work-group) memory (not
  // a thread's private array, whose elements stay registers), of a type with OpenCL vectors (not
  // bool): one vector access.
  auto vectorizable = [](const ir::Buffer& b, const ir::Expr& index, int n) {
    return DenseRamp(index) && IsVectorWidth(n) && !b->dtype.is_bool() &&
           b->scope != ir::MemoryScope::kLocal;
  };
  // A dense access of 8 or 16 bytes of a kernel argument (aligned to 16 bytes) at a known
  // multiple of its lanes dereferences an aligned vector pointer, so the device compiler issues
  // one wide access; others are vload<n>/vstore<n>, which assume the element's alignment only.
  auto aligned = [&](const ir::Buffer& b, const ir::Expr& index, int n) {
    const int bytes = n * b->dtype.bytes();
    return b->scope == ir::MemoryScope::kGlobal && (bytes == 8 || bytes == 16) &&
           bytes <= runtime::opencl::kOpenCLBufferAlignment &&
           ir::KnownDivisor(DenseRamp(index)->base, &lets_) % n == 0;
  };
  auto address = [&](const ir::Buffer& b, const ir::Expr& index) {
    return absl::StrCat(b->name, " + ", PrintOperand(DenseRamp(index)->base, 12, true));
  };
  struct Temp {
    const ir::Load* load;
    std::string name;
  };
  std::vector<Temp> temps;
  struct Finder : ir::IRVisitor {
    using ir::IRVisitor::Visit;
    std::vector<const ir::Load*> found;
    void VisitLoad(const ir::Load* l) override {
      ir::IRVisitor::VisitLoad(l);
      if (l->type.is_vector() && l->indices.size() == 1) found.push_back(l);
    }
  } finder;
  finder.Visit(op->value);
  for (const ir::Load* l : finder.found) {
    if (!vectorizable(l->buffer, l->indices[0], l->type.lanes())) continue;
    bool seen = false;
    for (const Temp& t : temps) {
      seen |= t.load->buffer == l->buffer && ir::StructuralEqual(t.load->indices[0], l->indices[0]);
    }
    if (seen) continue;
    temps.push_back({l, absl::StrCat(l->buffer->name, "_v", vector_count_++)});
    const int n = l->type.lanes();
    Indent();
    const std::string type = VectorTypeName(l->buffer->dtype, n);
    const std::string at = address(l->buffer, l->indices[0]);
    out_ << "const " << type << " " << temps.back().name << " = "
         << (aligned(l->buffer, l->indices[0], n)
                 ? absl::StrCat("*(const __global ", type, "*)(", at, ")")
                 : absl::StrCat("vload", n, "(0, ", at, ")"))
         << ";\n";
  }
  LoadHook hook = [&](const ir::Load* l, int k) -> ir::Expr {
    for (const Temp& t : temps) {
      if (t.load->buffer == l->buffer && ir::StructuralEqual(t.load->indices[0], l->indices[0])) {
        return ir::Var(absl::StrCat(t.name, ".s", std::string(1, "0123456789abcdef"[k])),
                       l->type.WithLanes(1));
      }
    }
    return ir::Expr();
  };
  if (lanes == 1) {
    PrintScalarStore(ir::Store::Make(op->buffer, op->indices, ExpandVectorReduces(op->value, hook))
                         .As<ir::Store>());
    return;
  }
  const ir::Expr& index = op->indices[0];
  if (vectorizable(op->buffer, index, lanes)) {
    std::string values;
    for (int k = 0; k < lanes; ++k)
      absl::StrAppend(&values, k ? ", " : "", Print(Lane(op->value, k, hook)));
    const std::string vector =
        absl::StrCat("(", VectorTypeName(op->buffer->dtype, lanes), ")(", values, ")");
    const std::string at = address(op->buffer, index);
    Indent();
    if (aligned(op->buffer, index, lanes)) {
      out_ << "*(__global " << VectorTypeName(op->buffer->dtype, lanes) << "*)(" << at
           << ") = " << vector << ";\n";
    } else {
      out_ << "vstore" << lanes << "(" << vector << ", 0, " << at << ");\n";
    }
    return;
  }
  for (int k = 0; k < lanes; ++k) {
    PrintScalarStore(
        ir::Store::Make(op->buffer, {Lane(index, k, nullptr)}, Lane(op->value, k, hook))
            .As<ir::Store>());
  }
}

}  // namespace cinn_like::backends
