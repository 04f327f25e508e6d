/// \file ORC LLJIT setup, the O3 pipeline, symbol lookup and object export.
#include "backends/llvm/execution_engine.h"

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Passes/StandardInstrumentations.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/Timer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <mutex>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/flags.h"
#include "runtime/symbols.h"

namespace cinn_like::backends {

namespace {

void InitializeNativeTargetOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    // The lock every TimerGroup takes (each PassBuilder's pass instrumentation makes two) is
    // a lazily created LLVM static, published with LLVM's own atomics; made here, under
    // call_once, threads that compile at once see it made (ThreadSanitizer, which does not
    // see inside the prebuilt LLVM, reported its first use as a race).
    llvm::TimerGroup first("cinn_like", "cinn_like");
  });
}

std::string ToString(llvm::Error err) { return llvm::toString(std::move(err)); }

absl::StatusOr<llvm::orc::JITTargetMachineBuilder> HostMachineBuilder() {
  InitializeNativeTargetOnce();
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) {
    return absl::InternalError("cannot describe the host CPU for LLVM: " +
                               ToString(jtmb.takeError()));
  }
  jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  return std::move(*jtmb);
}

/// `glue`: code that only calls (the NVGPU host entries): LLVM's fastest code generation (fast
/// instruction selection and register allocation). The entry is one optnone function of a
/// block per launch; on efficientnet_b0's glue (52 launches, 670 KB of IR) llc took 0.06 s at
/// O0 and 0.22 s at O1, for code whose speed is a few moves per launch.
absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> HostTargetMachine(bool glue = false) {
  auto jtmb = HostMachineBuilder();
  if (!jtmb.ok()) return jtmb.status();
  if (glue) jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::None);
  jtmb->setRelocationModel(llvm::Reloc::PIC_);
  jtmb->setCodeModel(llvm::CodeModel::Small);
  auto tm = jtmb->createTargetMachine();
  if (!tm)
    return absl::InternalError("cannot create the host target machine: " +
                               ToString(tm.takeError()));
  return std::move(*tm);
}

/// LLVM's unroller unrolls loops the schedule marked (kUnrolled: llvm.loop.unroll.full) and,
/// by its own cost heuristics, any loop whose unrolled size is under `unroll-threshold` (300 at
/// O3). That heuristic full unrolling of every small constant loop of a training graph nearly
/// doubled its optimized code and the time to optimize and compile it (mobilenet_v3_small's
/// training graphs at 64x64: about 20 s at 300, 10-12 s at 0, measured with the zoo probe), and
/// bought nothing measurable on the x86 examples (cinn_stages). Partial and runtime unrolling
/// stay: without them (PipelineTuningOptions::LoopUnrolling off, 8 s) the register-tiled matmul
/// example ran 2.6x slower and a small vadd call 2.5x. The threshold is a command-line option
/// of the LLVM linked into this library, set once.
void LimitHeuristicUnrolling() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto& options = llvm::cl::getRegisteredOptions();
    auto it = options.find("unroll-threshold");
    if (it != options.end()) it->second->addOccurrence(0, "unroll-threshold", "0");
  });
}

void RunPipeline(llvm::Module& m, llvm::TargetMachine* tm, llvm::OptimizationLevel level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions options;
  options.LoopVectorization = true;
  options.SLPVectorization = true;
  options.LoopUnrolling = true;  // what the schedule marks (see LimitHeuristicUnrolling)
  // The standard instrumentations make the pipeline honour optnone (the host entry's).
  llvm::PassInstrumentationCallbacks callbacks;
  llvm::StandardInstrumentations instrumentations(m.getContext(), /*DebugLogging=*/false);
  instrumentations.registerCallbacks(callbacks, &mam);
  llvm::PassBuilder pb(tm, options, std::nullopt, &callbacks);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(level);
  mpm.run(m, mam);
}

}  // namespace

absl::StatusOr<std::pair<std::string, std::string>> HostTargetDescription() {
  auto jtmb = HostMachineBuilder();
  if (!jtmb.ok()) return jtmb.status();
  auto layout = jtmb->getDefaultDataLayoutForTarget();
  if (!layout) {
    return absl::InternalError("cannot get the host data layout: " + ToString(layout.takeError()));
  }
  return std::make_pair(jtmb->getTargetTriple().str(), layout->getStringRepresentation());
}

absl::StatusOr<std::string> HostCodeDescription() {
  // Asked at every cache key, store and load: the host's features are detected once.
  static const absl::StatusOr<std::string> description = []() -> absl::StatusOr<std::string> {
    auto jtmb = HostMachineBuilder();
    if (!jtmb.ok()) return jtmb.status();
    return absl::StrCat(jtmb->getTargetTriple().str(), " ", jtmb->getCPU(), " ",
                        jtmb->getFeatures().getString());
  }();
  return description;
}

ExecutionEngine::ExecutionEngine() = default;
ExecutionEngine::~ExecutionEngine() = default;

absl::StatusOr<std::unique_ptr<ExecutionEngine>> ExecutionEngine::Create(HostCode code) {
  LimitHeuristicUnrolling();
  auto jtmb = HostMachineBuilder();
  if (!jtmb.ok()) return jtmb.status();
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*jtmb)).create();
  if (!jit) return absl::InternalError("cannot create the ORC JIT: " + ToString(jit.takeError()));
  std::unique_ptr<ExecutionEngine> engine(new ExecutionEngine());
  engine->code_ = code;
  engine->jit_ = std::move(*jit);
  auto& jd = engine->jit_->getMainJITDylib();
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      engine->jit_->getDataLayout().getGlobalPrefix());
  if (!process) {
    return absl::InternalError("cannot search the process's libraries: " +
                               ToString(process.takeError()));
  }
  jd.addGenerator(std::move(*process));
  absl::Status s = engine->RegisterSymbols(runtime::RuntimeSymbols());
  if (!s.ok()) return s;
  return engine;
}

absl::Status ExecutionEngine::RegisterSymbols(
    const std::vector<std::pair<std::string, void*>>& symbols) {
  llvm::orc::SymbolMap map;
  for (auto& [name, address] : symbols) {
    map[jit_->mangleAndIntern(name)] = llvm::orc::ExecutorSymbolDef(
        llvm::orc::ExecutorAddr::fromPtr(address),
        llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
  }
  if (llvm::Error err =
          jit_->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(map)))) {
    return absl::AlreadyExistsError("cannot register JIT symbols: " + ToString(std::move(err)));
  }
  return absl::OkStatus();
}

absl::Status ExecutionEngine::Optimize(LLVMModule& m) {
  if (!m.module || !m.context) return absl::InvalidArgumentError("Optimize of an empty module");
  auto tm = HostTargetMachine(code_ == HostCode::kGlue);
  if (!tm.ok()) return tm.status();
  m.module->setDataLayout((*tm)->createDataLayout());
  m.module->setTargetTriple((*tm)->getTargetTriple().str());
  std::string errors;
  llvm::raw_string_ostream es(errors);
  if (llvm::verifyModule(*m.module, &es)) {
    es.flush();
    return absl::InternalError("invalid LLVM module " + m.module->getName().str() + ": " + errors);
  }
  std::string cpu = (*tm)->getTargetCPU().str();
  std::string features = (*tm)->getTargetFeatureString().str();
  for (llvm::Function& f : *m.module) {
    if (f.isDeclaration()) continue;
    f.addFnAttr("target-cpu", cpu);
    if (!features.empty()) f.addFnAttr("target-features", features);
  }
  RunPipeline(*m.module, tm->get(),
              code_ == HostCode::kGlue ? llvm::OptimizationLevel::O1 : llvm::OptimizationLevel::O3);
  if (!DumpDir().empty()) {
    std::string text;
    llvm::raw_string_ostream ts(text);
    m.module->print(ts, nullptr);
    ts.flush();
    DumpToFile(m.module->getName().str() + ".host.opt.ll", text);
  }
  return absl::OkStatus();
}

absl::Status ExecutionEngine::AddModule(LLVMModule m) {
  if (!m.module || !m.context) return absl::InvalidArgumentError("AddModule of an empty module");
  auto tm = HostTargetMachine(code_ == HostCode::kGlue);
  if (!tm.ok()) return tm.status();
  // What LLJIT's own compile layer would make (same target machine: PIC, small code model),
  // made here so that the object's bytes can be kept (Compiler::Code) and exported.
  llvm::orc::SimpleCompiler compile(**tm);
  auto object = compile(*m.module);
  if (!object) {
    return absl::InternalError(absl::StrCat("cannot compile ", m.module->getName().str(),
                                            " to machine code: ", ToString(object.takeError())));
  }
  return AddObject(std::string((*object)->getBuffer()));
}

absl::Status ExecutionEngine::AddObject(const std::string& object) {
  auto buffer = llvm::MemoryBuffer::getMemBuffer(object, "cinn_like_object", false);
  auto file = llvm::object::ObjectFile::createObjectFile(buffer->getMemBufferRef());
  if (!file) {
    return absl::InvalidArgumentError("not an object file for this host: " +
                                      ToString(file.takeError()));
  }
  std::vector<std::string> defined;  // the functions it defines for others
  for (const llvm::object::SymbolRef& symbol : (*file)->symbols()) {
    auto flags = symbol.getFlags();
    auto type = symbol.getType();
    auto name = symbol.getName();
    if (!flags || !type || !name) {
      llvm::consumeError(flags.takeError());
      llvm::consumeError(type.takeError());
      llvm::consumeError(name.takeError());
      return absl::InvalidArgumentError("an object file with an unreadable symbol table");
    }
    if ((*flags & llvm::object::SymbolRef::SF_Global) &&
        !(*flags & llvm::object::SymbolRef::SF_Undefined) &&
        *type == llvm::object::SymbolRef::ST_Function) {
      defined.push_back(name->str());
    }
  }
  if (llvm::Error err = jit_->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(object))) {
    return absl::InvalidArgumentError("cannot add an object to the JIT: " +
                                      ToString(std::move(err)));
  }
  // Linked now, so that an unresolved symbol is this call's error, not the first Lookup's.
  for (const std::string& name : defined) {
    auto addr = jit_->lookup(name);
    if (!addr) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot link function '", name, "': ", ToString(addr.takeError())));
    }
  }
  objects_.push_back(object);
  const std::string prefix = EntrySymbol("");
  for (const std::string& symbol : defined) {
    if (absl::StartsWith(symbol, prefix)) functions_.push_back(symbol.substr(prefix.size()));
  }
  return absl::OkStatus();
}

absl::Status CheckHostCode(const std::string& host) {
  auto here = HostCodeDescription();
  if (!here.ok()) return here.status();
  if (host != *here) {
    return absl::FailedPreconditionError(
        absl::StrCat("the code was made for the CPU '", host, "'; this host is '", *here, "'"));
  }
  return absl::OkStatus();
}

absl::Status ExecutionEngine::AddObjectsFor(const std::string& host,
                                            const std::vector<std::string>& objects) {
  absl::Status fits = CheckHostCode(host);
  if (!fits.ok()) return fits;
  for (const std::string& object : objects) {
    absl::Status added = AddObject(object);
    if (!added.ok()) return added;
  }
  return absl::OkStatus();
}

absl::StatusOr<void*> ExecutionEngine::Lookup(const std::string& name) {
  if (name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the function name to look up is empty; functions added: ",
                     functions_.empty() ? "(none)" : absl::StrJoin(functions_, ", ")));
  }
  bool known = std::find(functions_.begin(), functions_.end(), name) != functions_.end();
  if (!known) {
    return absl::NotFoundError(
        absl::StrCat("function '", name, "' was not found in the JIT; functions added: ",
                     functions_.empty() ? "(none)" : absl::StrJoin(functions_, ", ")));
  }
  auto addr = jit_->lookup(EntrySymbol(name));
  if (!addr) {
    return absl::InternalError(
        absl::StrCat("cannot link function '", name, "': ", ToString(addr.takeError())));
  }
  return addr->toPtr<void*>();
}

absl::StatusOr<EntryFunction> ExecutionEngine::LookupEntry(const std::string& name) {
  auto address = Lookup(name);
  if (!address.ok()) return address.status();
  return reinterpret_cast<EntryFunction>(*address);
}

absl::Status ExecutionEngine::ExportObject(const std::string& path) {
  if (objects_.empty()) return absl::FailedPreconditionError("nothing was built to export");
  for (size_t k = 0; k < objects_.size(); ++k) {
    const std::string file = k == 0 ? path : absl::StrCat(path, ".", k, ".o");
    std::error_code ec;
    llvm::raw_fd_ostream out(file, ec, llvm::sys::fs::OF_None);
    if (ec) {
      return absl::InvalidArgumentError("cannot open " + file + " for writing: " + ec.message());
    }
    out << objects_[k];
    out.flush();
    if (out.has_error()) {
      std::string msg = out.error().message();
      out.clear_error();
      return absl::InternalError("cannot write " + file + ": " + msg);
    }
  }
  return absl::OkStatus();
}

}  // namespace cinn_like::backends
