/// \file Index tensors checked at run time before a compute reads them.
#include "hlir/ops/index_check.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/compile_options.h"
#include "ir/flags.h"
#include "ir/printer.h"

namespace cinn_like::hlir::ops {

const char* IndexCheckFunction(bool gpu) {
  if (!gpu) return "cinn_like_check_indices";
  return ir::CurrentCompileOptions().check_indices ? "cinn_like_cuda_check_indices" : nullptr;
}

std::string DescribeIrTensor(const ir::Tensor& t) {
  return absl::StrCat(
      t->name, " ", t->dtype.ToString(), "[",
      absl::StrJoin(t->shape, ", ",
                    [](std::string* o, const ir::Expr& d) { absl::StrAppend(o, ir::ToString(d)); }),
      "]");
}

std::string AxisIndexWhat(const std::string& op, const std::string& name, const ir::Tensor& index,
                          int a, const ir::Tensor& x) {
  return absl::StrCat("op ", op, " (", name, "): index ", DescribeIrTensor(index), " into axis ", a,
                      " of ", DescribeIrTensor(x));
}

ir::Tensor CheckedIndices(const ir::Tensor& index, ir::Expr low, ir::Expr high,
                          const std::string& what, const std::string& name, const char* check) {
  ir::Expr count = ir::Expr(int64_t{1});
  for (const ir::Expr& d : index->shape) count = count * ir::Cast::Make(ir::Int(64), d);
  const ir::Expr lo = ir::Cast::Make(ir::Int(64), low);
  const ir::Expr hi = ir::Cast::Make(ir::Int(64), high);
  const int64_t bits = index->dtype.bits();
  return ir::ExternTensor(name + "_index", index->dtype, index->shape, {index},
                          [=](const std::vector<ir::Buffer>& b, const ir::Buffer& out) {
                            return ir::ExternCall(
                                check, {b[0]->data, out->data, count, ir::Expr(bits), lo, hi,
                                        ir::StringImm::Make(what)});
                          });
}

}  // namespace cinn_like::hlir::ops
