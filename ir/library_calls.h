/// \file The integer arguments of each library call (ir/library_functions.h's LibraryCall): a
/// struct per call with named fields, and one order, its `Fields`, which is the order of the
/// runtime's C functions, both declared from the lists of runtime/library_args.h.
/// An op fills the fields with IR expressions (T = ir::Expr, hlir/ops/*_extern.cc) and the
/// call passes ArgList of them after its pointers; the graph pipeline's probes fill them with
/// numbers (T = int64_t, kArgAtCall where unknown); a library's check reads them back by name
/// (ArgsFromList, backends/library_functions.cc). One more argument is one more name in a list
/// of runtime/library_args.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "runtime/library_args.h"

namespace cinn_like::ir {

/// kMatmul and kMatmulEpilogue, kConv2d (and its channels-last and epilogue calls), the
/// convolution's gradients: the structs of runtime/library_args.h, whose lists are the order.
template <typename T>
using MatmulArgs = runtime::MatmulArgList<T>;
template <typename T>
using Conv2dArgs = runtime::Conv2dArgList<T>;
template <typename T>
using Conv2dGradArgs = runtime::Conv2dGradArgList<T>;

/// The arguments as the call passes them, after its pointers (`epilogue`: the activation last).
template <template <typename> class Args, typename T>
std::vector<T> ArgList(const Args<T>& a, bool epilogue = false) {
  std::vector<T> list;
  Args<T>::Fields(a, epilogue, [&](const T& v) { list.push_back(v); });
  return list;
}

/// `list` read back by field; an error naming `call` when its length is not the struct's.
template <template <typename> class Args, typename T>
absl::StatusOr<Args<T>> ArgsFromList(const std::vector<T>& list, bool epilogue,
                                     const std::string& call) {
  Args<T> a;
  size_t count = 0;
  Args<T>::Fields(a, epilogue, [&](T&) { ++count; });
  if (list.size() != count) {
    return absl::InternalError(
        absl::StrCat("the ", call, " call takes ", count, " integer arguments, not ", list.size()));
  }
  size_t i = 0;
  Args<T>::Fields(a, epilogue, [&](T& v) { v = list[i++]; });
  return a;
}

/// The number of fields of `Args` (with the activation where `epilogue`), at compile time.
template <template <typename> class Args>
constexpr size_t ArgCount(bool epilogue) {
  Args<int64_t> a{};
  size_t count = 0;
  Args<int64_t>::Fields(a, epilogue, [&count](int64_t&) { ++count; });
  return count;
}

/// Every field `value` (a probe's kArgAtCall).
template <template <typename> class Args, typename T>
Args<T> ArgsAll(const T& value) {
  Args<T> a;
  Args<T>::Fields(a, /*epilogue=*/true, [&](T& v) { v = value; });
  return a;
}

}  // namespace cinn_like::ir
