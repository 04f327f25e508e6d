/// \file Names in generated source: user names (tensors, dims, functions) made into legal C,
/// CUDA and OpenCL identifiers that no keyword, builtin or runtime symbol shadows, and unique
/// within a function.
#pragma once

#include <set>
#include <string>

namespace cinn_like::ir {

/// `name` as an identifier: characters outside [A-Za-z0-9_] become '_', a leading digit (or an
/// empty name) gets a "v" in front, and a name generated code cannot use as it is (a C, C++ or
/// CUDA keyword or builtin such as `int` or `threadIdx`, a vector type such as `float4`, a C
/// math function, a name in the reserved `__`/`cinn_like_` namespaces, or a name of the C
/// printers' temporaries, `bcast<n>` and `cse_<n>`) gets "v_" in front.
std::string CIdentifier(const std::string& name);

/// Hands out identifiers unique among those it has given: CIdentifier(name), then "_1", "_2",
/// ... appended while taken.
class NameSupply {
 public:
  std::string Unique(const std::string& name);

 private:
  std::set<std::string> used_;
};

}  // namespace cinn_like::ir
