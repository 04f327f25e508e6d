/// \file The names hoist_common_index gives index subterms, for codegen expectations that pin
/// the index arithmetic whether or not (and under whichever idxN) a subterm was named.
#pragma once

#include <string>

namespace cinn_like::testing {

/// The name of the first `<prefix>idxN = <value><suffix>` line of `text`, or `value` itself
/// when no line names it.
inline std::string IndexName(const std::string& text, const std::string& prefix,
                             const std::string& value, const std::string& suffix) {
  const std::string definition = " = " + value + suffix + "\n";
  for (size_t pos = text.find(prefix + "idx"); pos != std::string::npos;
       pos = text.find(prefix + "idx", pos + 1)) {
    size_t name = pos + prefix.size();
    size_t eq = text.find(" = ", name);
    size_t end = text.find('\n', name);
    if (eq < end && text.compare(eq, end + 1 - eq, definition) == 0) {
      return text.substr(name, eq - name);
    }
  }
  return value;
}

/// In CUDA source: `const int32_t idxN = value;` gives idxN, e.g. for "i * n".
inline std::string CudaIndexName(const std::string& src, const std::string& value) {
  return IndexName(src, "const int32_t ", value, ";");
}

/// In printed IR: `let idxN = value` gives idxN, e.g. for "(i * n)".
inline std::string IrIndexName(const std::string& ir, const std::string& value) {
  return IndexName(ir, "let ", value, "");
}

}  // namespace cinn_like::testing
