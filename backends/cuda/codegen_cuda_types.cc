/// \file CUDA spelling of the scalar types: __half and __nv_bfloat16, casts with defined
/// rounding, and math function names (fast-math variants included).
///
/// Arithmetic on float16/bfloat16 is done in float32 and rounded back after each operation
/// (CodeGenC::WidenToFloat), not with the native __half operators (sm_53+) or __nv_bfloat16
/// ones (sm_80+): one path for every arch, and results equal to the x86 backend's.
#include <utility>

#include "absl/strings/str_cat.h"
#include "backends/cuda/codegen_cuda_dev.h"
#include "ir/compile_options.h"
#include "ir/flags.h"

namespace cinn_like::backends {

std::string CodeGenCudaDev::TypeIncludes() const {
  // max and min of two 16-bit values, for the block-reduce helpers (their combiners call
  // max(a, b) on the value's own type): in float32, as the printed arithmetic is.
  auto min_max = [](const char* type, const char* widen, const char* narrow) {
    std::string out;
    for (const char* f : {"max", "min"}) {
      out +=
          absl::StrCat("__device__ __forceinline__ ", type, " ", f, "(", type, " a, ", type,
                       " b) { return ", narrow, "(", f, "(", widen, "(a), ", widen, "(b))); }\n");
    }
    return out;
  };
  std::string s;
  if (uses_fp16_) {
    s += "#include <cuda_fp16.h>\n" + min_max("__half", "__half2float", "__float2half_rn");
  }
  if (uses_bf16_) {
    s += "#include <cuda_bf16.h>\n" +
         min_max("__nv_bfloat16", "__bfloat162float", "__float2bfloat16_rn");
  }
  return s;
}

std::string CodeGenCudaDev::TypeName(const ir::Type& t) {
  if (t.is_scalar() && t.is_float16()) {
    uses_fp16_ = true;
    return "__half";
  }
  if (t.is_scalar() && t.is_bfloat16()) {
    uses_bf16_ = true;
    return "__nv_bfloat16";
  }
  return CodeGenC::TypeName(t);
}

std::string CodeGenCudaDev::FloatLiteral(const ir::Type& t, double v) {
  // The constant already holds a value of its 16-bit type, so the float literal is exact.
  if (t.is_low_precision_float()) return NarrowFromFloat(t, FloatLiteral(ir::Float(32), v));
  return CodeGenC::FloatLiteral(t, v);
}

std::string CodeGenCudaDev::WidenToFloat(const ir::Type& t, const std::string& e) {
  if (t.is_float16()) {
    uses_fp16_ = true;
    return absl::StrCat("__half2float(", e, ")");
  }
  if (t.is_bfloat16()) {
    uses_bf16_ = true;
    return absl::StrCat("__bfloat162float(", e, ")");
  }
  return CodeGenC::WidenToFloat(t, e);
}

std::string CodeGenCudaDev::NarrowFromFloat(const ir::Type& t, const std::string& e) {
  if (t.is_float16()) {
    uses_fp16_ = true;
    return absl::StrCat("__float2half_rn(", e, ")");
  }
  if (t.is_bfloat16()) {
    uses_bf16_ = true;
    return absl::StrCat("__float2bfloat16_rn(", e, ")");
  }
  return CodeGenC::NarrowFromFloat(t, e);
}

bool CodeGenCudaDev::FastMath() const { return ir::CurrentCompileOptions().fast_math; }

namespace {

/// The fast, less accurate CUDA float32 spelling of a math op (the fast-math flag), or nullptr
/// where the C name stays. rsqrt without fast math is `1.0f / sqrtf(x)` (rsqrtf is 2 ulp).
const char* FastMathFloat32Name(ir::MathOp op) {
  static constexpr std::pair<ir::MathOp, const char*> kFast[] = {
      {ir::MathOp::kExp, "__expf"},   {ir::MathOp::kLog, "__logf"},
      {ir::MathOp::kLog2, "__log2f"}, {ir::MathOp::kLog10, "__log10f"},
      {ir::MathOp::kRsqrt, "rsqrtf"}, {ir::MathOp::kSin, "__sinf"},
      {ir::MathOp::kCos, "__cosf"},   {ir::MathOp::kTan, "__tanf"},
      {ir::MathOp::kPow, "__powf"}};
  for (const auto& [fast_op, name] : kFast) {
    if (fast_op == op) return name;
  }
  return nullptr;
}

/// The cuda_fp16.h / cuda_bf16.h suffix of an integer type: "int", "ll", "uint", "ull".
const char* IntSuffix(const ir::Type& t) {
  if (t.is_uint()) return t.bits() == 64 ? "ull" : "uint";
  return t.bits() == 64 ? "ll" : "int";
}

}  // namespace

std::string CodeGenCudaDev::MathFunctionName(ir::MathOp op, const ir::Type& t) {
  // fast_exp is __expf whatever the flag (ir/math.h: ops ask for it where the error is hidden).
  if (op == ir::MathOp::kFastExp && t.bits() == 32) return "__expf";
  const char* fast = FastMath() && t.bits() == 32 ? FastMathFloat32Name(op) : nullptr;
  return fast ? fast : CodeGenC::MathFunctionName(op, t);
}

std::string CodeGenCudaDev::Reciprocal(const ir::Type& t, const std::string& x) {
  if (t.bits() != 32) return CodeGenC::Reciprocal(t, x);
  uses_rcp_approx_ = true;
  return absl::StrCat("cinn_like_rcp_approx(", x, ")");
}

void CodeGenCudaDev::VisitLoad(const ir::Load* op) {
  const ir::Type& t = op->type;
  const bool once = evict_first_.count(op->buffer.get()) && t.lanes() == 1 && !t.is_bool() &&
                    (t.is_int() || t.is_uint() || (t.is_float() && t.bits() >= 32));
  if (once) *expr_ << "__ldcs(&";
  CodeGenC::VisitLoad(op);
  if (once) *expr_ << ")";
}

// Casts. float->int truncates toward zero and int narrowing wraps (C casts on CUDA); to a
// 16-bit float rounds to nearest even in one step from any source type (the _rn intrinsics,
// __double2half); from a 16-bit float widens exactly to float32 first.
void CodeGenCudaDev::VisitCast(const ir::Cast* op) {
  const ir::Type& to = op->type;
  const ir::Type& from = op->value.type();
  if (!to.is_low_precision_float() && !from.is_low_precision_float()) {
    CodeGenC::VisitCast(op);
    return;
  }
  if (to.is_vector() || from.is_handle() || to.is_handle() || from.is_string() || to.is_string()) {
    Fail(absl::InvalidArgumentError(
        absl::StrCat("cannot cast ", from.ToString(), " to ", to.ToString(), " in CUDA codegen")));
    return;
  }
  // The operand is printed once, either way: printing it twice per cast doubled the source at
  // each nested 16-bit cast (a grid sampler's index arithmetic took minutes).
  const bool after_c_cast =
      !from.is_low_precision_float() && (from.is_bool() || (!from.is_float() && from.bits() < 32));
  std::string v = after_c_cast ? PrintOperand(op->value, 14) : Print(op->value);
  if (from.is_low_precision_float()) {
    std::string f = WidenToFloat(from, v);
    if (to.is_low_precision_float()) {
      *expr_ << NarrowFromFloat(to, f);  // exact widening, one rounding
    } else if (to == ir::Float(32)) {
      *expr_ << f;
    } else if (to.is_bool()) {
      *expr_ << "(" << f << " != 0.0f)";
    } else {
      *expr_ << "(" << TypeName(to) << ")" << f;
    }
    return;
  }
  const char* target = to.is_float16() ? "half" : "bfloat16";
  TypeName(to);  // notes the header
  if (from == ir::Float(32) || from.is_bool()) {
    *expr_ << NarrowFromFloat(to, from.is_bool() ? "(float)" + v : v);
  } else if (from.is_float()) {  // float64, one rounding
    *expr_ << "__double2" << target << "(" << v << ")";
  } else {
    std::string arg =
        from.bits() < 32 ? absl::StrCat("(", from.is_uint() ? "unsigned int" : "int", ")", v) : v;
    *expr_ << "__" << IntSuffix(from) << "2" << target << "_rn(" << arg << ")";
  }
}

}  // namespace cinn_like::backends
