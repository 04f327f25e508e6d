/// \file The options snapshot a compile reads its code-changing flags from, installed once by
/// whoever starts the compile: CompiledProgram::Compile (before the cache key, which reads it),
/// ProgramSource, and LowerAndBuild for callers that installed none (the self-checks).
#pragma once

#include <memory>
#include <optional>

#include "ir/compile_options.h"

namespace cinn_like {

/// While alive, the code-changing flags read once (ir::CompileOptions::Read) are this thread's
/// ir::CurrentCompileOptions(), unless a snapshot is installed already (a compile inside
/// another's scope keeps the outer one's).
class OptionsOfThisCompile {
 public:
  OptionsOfThisCompile() {
    if (!ir::InstalledCompileOptions()) {
      scope_.emplace(std::make_shared<const ir::CompileOptions>(ir::CompileOptions::Read()));
    }
  }

 private:
  std::optional<ir::CompileOptionsScope> scope_;
};

}  // namespace cinn_like
