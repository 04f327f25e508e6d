/// \file CodeGenOpenCLDev's types, literals, casts and math spellings: half through cl_khr_fp16
/// (computed in float32 and rounded back, as the C printer's 16-bit arithmetic is), double
/// through cl_khr_fp64, bool stored as uchar, overloaded math and min/max.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "backends/opencl/codegen_opencl_dev.h"

namespace cinn_like::backends {

std::string CodeGenOpenCLDev::VectorTypeName(const ir::Type& elem, int lanes) {
  std::string scalar;
  if (elem.is_float()) {
    scalar = TypeName(elem);  // half, float, double (notes the extension)
  } else if (elem.is_int() || elem.is_uint()) {
    const char* names[] = {"char", "short", "int", "long"};
    const int k = elem.bits() == 8 ? 0 : elem.bits() == 16 ? 1 : elem.bits() == 32 ? 2 : 3;
    scalar = absl::StrCat(elem.is_uint() ? "u" : "", names[k]);
  } else {
    Fail(absl::InternalError("no OpenCL vector of " + elem.ToString()));
  }
  return absl::StrCat(scalar, lanes);
}
std::string CodeGenOpenCLDev::TypeName(const ir::Type& t) {
  if (t.is_scalar() && t.is_float16()) {
    if (!types_.fp16) {
      Fail(absl::UnimplementedError("unsupported dtype float16 for this device: " + types_.device +
                                    " does not report cl_khr_fp16"));
    }
    uses_fp16_ = true;
    return "half";
  }
  if (t.is_scalar() && t.is_bfloat16()) {
    Fail(absl::UnimplementedError("unsupported dtype bfloat16 for OpenCL (" + types_.device +
                                  "): OpenCL C has no bfloat16 type"));
    return "ushort";
  }
  if (t.is_scalar() && t.is_float() && t.bits() == 64) {
    if (!types_.fp64) {
      Fail(absl::UnimplementedError("unsupported dtype float64 for this device: " + types_.device +
                                    " does not report cl_khr_fp64"));
    }
    uses_fp64_ = true;
  }
  return CodeGenC::TypeName(t);
}

std::string CodeGenOpenCLDev::MemoryTypeName(const ir::Type& t) {
  return t.is_bool() ? "uchar" : TypeName(t);
}

std::string CodeGenOpenCLDev::FloatLiteral(const ir::Type& t, double v) {
  if (t.is_low_precision_float()) return NarrowFromFloat(t, FloatLiteral(ir::Float(32), v));
  if (std::isnan(v)) {
    return t.bits() == 32 ? "as_float(0x7fc00000)" : "as_double(0x7ff8000000000000UL)";
  }
  if (t.bits() == 64) TypeName(t);  // notes cl_khr_fp64
  return CodeGenC::FloatLiteral(t, v);
}
std::string CodeGenOpenCLDev::WidenToFloat(const ir::Type& t, const std::string& e) {
  if (t.is_float16()) {
    TypeName(t);
    return absl::StrCat("convert_float(", e, ")");
  }
  TypeName(t);  // bfloat16: the error
  return e;
}

std::string CodeGenOpenCLDev::NarrowFromFloat(const ir::Type& t, const std::string& e) {
  if (t.is_float16()) {
    TypeName(t);
    return absl::StrCat("convert_half_rte(", e, ")");
  }
  TypeName(t);
  return e;
}

std::string CodeGenOpenCLDev::MathFunctionName(ir::MathOp op, const ir::Type& t) {
  if (op == ir::MathOp::kNearbyint) return "rint";  // OpenCL C has no nearbyint
  // The maximum and minimum helpers are not overloaded: float32's take "f", as in C.
  if (op == ir::MathOp::kMaximum || op == ir::MathOp::kMinimum) {
    return CodeGenC::MathFunctionName(op, t);
  }
  return CMathName(op);  // overloaded on float and double
}
void CodeGenOpenCLDev::VisitCast(const ir::Cast* op) {
  const ir::Type& to = op->type;
  const ir::Type& from = op->value.type();
  if (to.is_vector() || from.is_vector()) {
    Fail(absl::InvalidArgumentError(absl::StrCat("cannot cast ", from.ToString(), " to ",
                                                 to.ToString(), " in OpenCL C codegen")));
    return;
  }
  if (!to.is_low_precision_float() && !from.is_low_precision_float()) {
    CodeGenC::VisitCast(op);
    return;
  }
  const std::string v = Print(op->value);
  if (from.is_low_precision_float()) {
    const std::string f = WidenToFloat(from, v);  // exact
    if (to.is_low_precision_float()) {
      *expr_ << NarrowFromFloat(to, f);
    } else if (to == ir::Float(32)) {
      *expr_ << f;
    } else if (to.is_bool()) {
      *expr_ << "(" << f << " != 0.0f)";
    } else {
      *expr_ << "(" << TypeName(to) << ")" << f;
    }
    return;
  }
  if (!to.is_float16()) {  // bfloat16: the error
    *expr_ << NarrowFromFloat(to, v);
    return;
  }
  TypeName(to);
  // One rounding from every source type (cl_khr_fp16's conversions); bool through float.
  *expr_ << "convert_half_rte(" << (from.is_bool() ? "(float)(" + v + ")" : v) << ")";
}

void CodeGenOpenCLDev::PrintMinMax(const ir::BinaryNode* op, bool is_min) {
  const ir::Type& t = op->type;
  const char* fn = t.is_float() ? (is_min ? "fmin" : "fmax") : (is_min ? "min" : "max");
  if (t.is_low_precision_float()) {
    *expr_ << NarrowFromFloat(t, absl::StrCat(fn, "(", WidenToFloat(t, Print(op->a)), ", ",
                                              WidenToFloat(t, Print(op->b)), ")"));
    return;
  }
  if (t.is_integer()) {
    // One overload per type: operands C promotes (a literal, a sum of int8 values) are cast
    // back to the IR's type, which is also its wrap-around.
    const std::string type = TypeName(t);
    *expr_ << fn << "((" << type << ")(" << Print(op->a) << "), (" << type << ")(" << Print(op->b)
           << "))";
    return;
  }
  *expr_ << fn << "(" << Print(op->a) << ", " << Print(op->b) << ")";
}

void CodeGenOpenCLDev::VisitMin(const ir::Min* op) { PrintMinMax(op, true); }
void CodeGenOpenCLDev::VisitMax(const ir::Max* op) { PrintMinMax(op, false); }
}  // namespace cinn_like::backends
