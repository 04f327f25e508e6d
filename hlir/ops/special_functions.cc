/// \file Every special function's op, registered by family (special_functions.h).
#include "hlir/ops/special_functions.h"
#include "hlir/ops/elementwise_def.h"

namespace cinn_like::hlir::ops {

void RegisterSpecialFunctionOps(OpRegistry& r) {
  special::RegisterGammaFunctionOps(r);
  special::RegisterErrorFunctionOps(r);
  special::RegisterBesselFunctionOps(r);
  special::RegisterFloatBitOps(r);
  special::RegisterPolynomialOps(r);
}

}  // namespace cinn_like::hlir::ops
