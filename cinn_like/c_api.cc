/// \file The C API over CompileProgram. Every entry catches what C++ could throw, so a failure
/// is a return code and a message, never an abort in the host.
#include "cinn_like/c_api.h"

#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cinn_like/cache/disk_cache.h"
#include "cinn_like/cache/store.h"
#include "cinn_like/compile.h"
#include "cinn_like/pipeline/compile_stats.h"
#include "cinn_like/tune/warm_up.h"
#include "cinn_like/verify/call_check.h"
#include "ir/flags.h"
#include "runtime/call_hooks.h"
#include "runtime/cinn_like_runtime.h"
#ifdef CINN_LIKE_WITH_CUDA
#include "runtime/cuda/cuda_graph.h"
#endif

struct cinn_like_module_s {
  std::unique_ptr<cinn_like::CompiledProgram> program;
};

/// Copies of the example tensors' descriptions, the shapes they point to, and the function.
struct cinn_like_call_plan_s {
  cinn_like_function fn;
  std::vector<DLTensor> tensors;  // data null; shape into `shapes`
  std::vector<std::vector<int64_t>> shapes;
};

struct cinn_like_store_lock_s {
  cinn_like::StoreLock lock;
};

struct cinn_like_cuda_graph_s {
#ifdef CINN_LIKE_WITH_CUDA
  std::unique_ptr<cinn_like::runtime::cuda::CudaGraph> graph;
#endif
};

namespace {

int Fail(const std::string& message) {
  cinn_like_set_last_error(message.c_str());
  return -1;
}

int Fail(const absl::Status& status) { return Fail(std::string(status.message())); }

/// Runs `body`, turning an escaped exception into an error return.
template <typename Body>
int Guarded(const char* what, Body&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    return Fail(std::string(what) + ": internal error: " + e.what());
  } catch (...) {
    return Fail(std::string(what) + ": internal error");
  }
}

static_assert(static_cast<int>(cinn_like::StoreMiss::kAbsent) == CINN_LIKE_STORE_ABSENT &&
              static_cast<int>(cinn_like::StoreMiss::kDamaged) == CINN_LIKE_STORE_DAMAGED &&
              static_cast<int>(cinn_like::StoreMiss::kRefused) == CINN_LIKE_STORE_REFUSED);

/// The store in `dir` and the kind named `kind`, or a failure of `what` (its message set).
struct StoreArgs {
  std::optional<cinn_like::Store> store;
  cinn_like::StoreKind kind = cinn_like::StoreKind::kPlan;
};
/// The store in `dir` for work on `key`, or a failure of `what` (its message set).
int OpenStoreForKey(const char* what, const char* dir, const char* key,
                    std::optional<cinn_like::Store>* out) {
  if (!dir || !key) return Fail(absl::StrCat(what, ": null argument"));
  if (!cinn_like::IsStoreKey(key)) {
    return Fail(absl::StrCat(what, ": the key '", key, "' is not 64 lower-case hex digits"));
  }
  auto store = cinn_like::Store::Open(dir);
  if (!store.ok()) return Fail(absl::StrCat(what, ": ", store.status().message()));
  *out = *std::move(store);
  return 0;
}

int OpenStore(const char* what, const char* dir, const char* kind, const char* key,
              StoreArgs* out) {
  if (!kind) return Fail(absl::StrCat(what, ": null argument"));
  const std::optional<cinn_like::StoreKind> named = cinn_like::StoreKindNamed(kind);
  if (!named || *named == cinn_like::StoreKind::kModule) {
    return Fail(absl::StrCat(what, ": no record kind '", kind, "' (these functions keep: plan)"));
  }
  out->kind = *named;
  return OpenStoreForKey(what, dir, key, &out->store);
}

/// `make()` in a string of this thread's that lives until the next call; "" (with the error
/// set) if it throws: no exception crosses the C API.
template <typename Make>
const char* ThreadText(const char* what, Make&& make) {
  thread_local std::string text;
  try {
    text = make();
  } catch (const std::exception& e) {
    Fail(std::string(what) + ": internal error: " + e.what());
    text.clear();
  }
  return text.c_str();
}

/// The plan's tensors with data[i] as argument i's data, in arrays of this thread's that live
/// until its next call (runs on several threads do not share the data pointers).
DLTensor** PlanArgs(const cinn_like_call_plan_s& plan, void* const* data) {
  thread_local std::vector<DLTensor> tensors;
  thread_local std::vector<DLTensor*> args;
  const size_t n = plan.tensors.size();
  tensors.assign(plan.tensors.begin(), plan.tensors.end());
  args.resize(n);
  for (size_t i = 0; i < n; ++i) {
    tensors[i].data = data[i];
    args[i] = &tensors[i];
  }
  return args.data();
}

}  // namespace

extern "C" {

const char* cinn_like_version(void) { return cinn_like::kVersion; }

int cinn_like_compile(const char* program_json, const char* target, const char* name,
                      cinn_like_module* out) {
  return Guarded("cinn_like_compile", [&] {
    if (!program_json || !target || !name || !out) {
      return Fail("cinn_like_compile: program_json, target, name and out must not be null");
    }
    *out = nullptr;
    if (*name == '\0') return Fail("cinn_like_compile: the function name is empty");
    auto parsed = cinn_like::ir::Target::Parse(target);
    if (!parsed.ok()) return Fail(parsed.status());
    auto compiled = cinn_like::CompileProgramJson(program_json, *parsed, name);
    if (!compiled.ok()) return Fail(compiled.status());
    *out = new cinn_like_module_s{std::move(*compiled)};
    return 0;
  });
}

int cinn_like_warm_up(const char* target) {
  return Guarded("cinn_like_warm_up", [&] {
    if (!target) return Fail("cinn_like_warm_up: target must not be null");
    auto parsed = cinn_like::ir::Target::Parse(target);
    if (!parsed.ok()) return Fail(parsed.status());
    cinn_like::WarmUp(*parsed);
    return 0;
  });
}

int cinn_like_module_lookup(cinn_like_module module, const char* name, cinn_like_function* out) {
  return Guarded("cinn_like_module_lookup", [&] {
    if (!module || !name || !out) return Fail("cinn_like_module_lookup: null argument");
    auto fn = module->program->Lookup(name);
    if (!fn.ok()) return Fail("cinn_like_module_lookup: " + std::string(fn.status().message()));
    // Compiled with the flag cinn_like_self_check: cinn_like_call finds the check by pointer.
    if (module->program->call_check()) {
      cinn_like::RegisterCallCheck(*fn, module->program->call_check());
    }
    *out = *fn;
    return 0;
  });
}

int cinn_like_module_source(cinn_like_module module, const char** out) {
  return Guarded("cinn_like_module_source", [&] {
    if (!module || !out) return Fail("cinn_like_module_source: null argument");
    *out = module->program->source().c_str();  // may lower the Program again (a cache hit)
    return 0;
  });
}

int cinn_like_module_signature(cinn_like_module module, const char** out) {
  if (!module || !out) return Fail("cinn_like_module_signature: null argument");
  *out = module->program->signature().c_str();
  return 0;
}

int cinn_like_call(cinn_like_function fn, DLTensor** args, int32_t num_args, void* stream) {
  if (!fn) return Fail("cinn_like_call: the function is null");
  // The entry checks its own arguments (cinn_like_check_args, cinn_like_check_tensor): direct
  // calls through the pointer are as safe as this one, and a passing call formats nothing.
  // Without the flag cinn_like_self_check this is that direct call.
  return Guarded("cinn_like_call",
                 [&] { return cinn_like::CallWithSelfCheck(fn, args, num_args, stream); });
}

int cinn_like_call_plan_create(cinn_like_function fn, DLTensor* const* examples, int32_t num_args,
                               cinn_like_call_plan* out) {
  return Guarded("cinn_like_call_plan_create", [&] {
    if (out) *out = nullptr;
    if (!fn || !out || (num_args > 0 && !examples) || num_args < 0) {
      return Fail(
          "cinn_like_call_plan_create: null function, examples or out, or a negative "
          "argument count");
    }
    auto plan = std::make_unique<cinn_like_call_plan_s>();
    plan->fn = fn;
    plan->tensors.resize(num_args);
    plan->shapes.resize(num_args);
    for (int32_t i = 0; i < num_args; ++i) {
      const DLTensor* e = examples[i];
      if (!e || e->ndim < 0 || (e->ndim > 0 && !e->shape)) {
        return Fail(absl::StrCat("cinn_like_call_plan_create: example ", i,
                                 " is null or has a null shape or a negative rank"));
      }
      plan->shapes[i].assign(e->shape, e->shape + e->ndim);
      DLTensor& t = plan->tensors[i];
      t = DLTensor{};
      t.device = e->device;
      t.dtype = e->dtype;
      t.ndim = e->ndim;
      t.shape = plan->shapes[i].data();
    }
    *out = plan.release();
    return 0;
  });
}

int cinn_like_call_plan_run(cinn_like_call_plan plan, void* const* data, void* stream) {
  if (!plan || (!data && !plan->tensors.empty())) {
    return Fail("cinn_like_call_plan_run: null plan or data");
  }
  DLTensor** args = PlanArgs(*plan, data);
  return cinn_like_call(plan->fn, args, static_cast<int32_t>(plan->tensors.size()), stream);
}

int cinn_like_call_plan_run_hooked(cinn_like_call_plan plan, void* const* data, void* stream,
                                   cinn_like_output_alloc_fn alloc, void* alloc_ctx,
                                   cinn_like_input_release_fn release, void* release_ctx) {
  cinn_like::runtime::CallHooksScope scope(alloc, alloc_ctx, release, release_ctx);
  return cinn_like_call_plan_run(plan, data, stream);
}

void cinn_like_call_plan_free(cinn_like_call_plan plan) { delete plan; }

int cinn_like_call_plan_capture(cinn_like_call_plan plan, void* const* data, void* stream,
                                cinn_like_cuda_graph* out) {
  return Guarded("cinn_like_call_plan_capture", [&]() -> int {
    if (out) *out = nullptr;
    if (!plan) return Fail("cinn_like_call_plan_capture: the plan is null");
    if (!out) return Fail("cinn_like_call_plan_capture: the output pointer is null");
    if (!data && !plan->tensors.empty()) {
      return Fail("cinn_like_call_plan_capture: the data pointers are null");
    }
    const int32_t n = static_cast<int32_t>(plan->tensors.size());
    if (n == 0) return Fail("cinn_like_call_plan_capture: the plan has no argument");
    for (int32_t i = 0; i < n; ++i) {
      if (plan->tensors[i].device.device_type != kDLCUDA) {
        return Fail(absl::StrCat("cinn_like_call_plan_capture: argument ", i,
                                 " is not a CUDA tensor (DLPack device type ",
                                 plan->tensors[i].device.device_type,
                                 "): CUDA graphs capture functions of the cuda target"));
      }
    }
#ifdef CINN_LIKE_WITH_CUDA
    using cinn_like::runtime::cuda::CudaGraph;
    absl::Status can = CudaGraph::CheckCanCapture(stream);
    if (!can.ok()) return Fail("cinn_like_call_plan_capture: " + std::string(can.message()));
    // The first run loads what the call uses (libraries, their plans), which a capture could
    // not record, and reports a wrong argument with the call's own message.
    if (cinn_like_call_plan_run(plan, data, stream) != 0) return -1;
    auto graph = CudaGraph::Capture(
        [&](void* capturing) {
          // The entry itself: the self check copies to the host, which a capture cannot record.
          if (plan->fn(PlanArgs(*plan, data), n, capturing) == 0) return absl::OkStatus();
          return absl::InternalError(cinn_like_get_last_error());
        },
        stream);
    if (!graph.ok())
      return Fail("cinn_like_call_plan_capture: " + std::string(graph.status().message()));
    *out = new cinn_like_cuda_graph_s{std::move(*graph)};
    return 0;
#else
    (void)stream;
    return Fail("cinn_like_call_plan_capture: cinn_like was built without CUDA");
#endif
  });
}

int cinn_like_cuda_graph_launch(cinn_like_cuda_graph graph, void* stream) {
  if (!graph) return Fail("cinn_like_cuda_graph_launch: the graph is null");
#ifdef CINN_LIKE_WITH_CUDA
  return Guarded("cinn_like_cuda_graph_launch", [&] {
    absl::Status launched = graph->graph->Launch(stream);
    if (!launched.ok())
      return Fail("cinn_like_cuda_graph_launch: " + std::string(launched.message()));
    return 0;
  });
#else
  (void)stream;
  return Fail("cinn_like_cuda_graph_launch: cinn_like was built without CUDA");
#endif
}

void cinn_like_cuda_graph_free(cinn_like_cuda_graph graph) { delete graph; }

void cinn_like_module_free(cinn_like_module module) {
  if (module && module->program->call_check()) {
    cinn_like::UnregisterCallChecks(module->program->call_check().get());
  }
  delete module;
}

int cinn_like_module_save(cinn_like_module module, const char* path) {
  return Guarded("cinn_like_module_save", [&] {
    if (!module || !path) return Fail("cinn_like_module_save: null argument");
    absl::Status saved = module->program->Save(path);
    if (!saved.ok()) return Fail("cinn_like_module_save: " + std::string(saved.message()));
    return 0;
  });
}

int cinn_like_module_load(const char* path, cinn_like_module* out) {
  return Guarded("cinn_like_module_load", [&] {
    if (!path || !out) return Fail("cinn_like_module_load: null argument");
    *out = nullptr;
    auto loaded = cinn_like::LoadCompiledProgram(path);
    if (!loaded.ok())
      return Fail("cinn_like_module_load: " + std::string(loaded.status().message()));
    *out = new cinn_like_module_s{std::move(*loaded)};
    return 0;
  });
}

int cinn_like_module_name(cinn_like_module module, const char** out) {
  if (!module || !out) return Fail("cinn_like_module_name: null argument");
  *out = module->program->name().c_str();
  return 0;
}

const char* cinn_like_cache_stats(void) {
  return ThreadText("cinn_like_cache_stats", [] { return cinn_like::DiskCacheStatsJson(); });
}

const char* cinn_like_compile_stats(void) {
  return ThreadText("cinn_like_compile_stats", [] { return cinn_like::CompileStatsJson(); });
}

const char* cinn_like_cache_dir(void) {
  return ThreadText("cinn_like_cache_dir", [] { return cinn_like::DiskCacheDir(); });
}

const char* cinn_like_store_key(const char* text, size_t size) {
  return ThreadText("cinn_like_store_key", [&] {
    return text ? cinn_like::StoreKey(std::string_view(text, size)) : std::string();
  });
}

int cinn_like_store_get(const char* dir, const char* kind, const char* key, const void** data,
                        size_t* size, int* miss) {
  return Guarded("cinn_like_store_get", [&] {
    if (!data || !size || !miss) return Fail("cinn_like_store_get: null argument");
    *data = nullptr;
    *size = 0;
    *miss = CINN_LIKE_STORE_REFUSED;
    StoreArgs args;
    if (OpenStore("cinn_like_store_get", dir, kind, key, &args) != 0) return -1;
    auto payload = args.store->Get(args.kind, key);
    if (!payload.ok()) {
      *miss = static_cast<int>(cinn_like::MissOf(payload.status()));
      return Fail(absl::StrCat("cinn_like_store_get: ", payload.status().message()));
    }
    thread_local std::string held;
    held = *std::move(payload);
    *data = held.data();
    *size = held.size();
    return 0;
  });
}

int cinn_like_store_put(const char* dir, const char* kind, const char* key, const void* data,
                        size_t size) {
  return Guarded("cinn_like_store_put", [&] {
    if (!data && size != 0) return Fail("cinn_like_store_put: null data");
    StoreArgs args;
    if (OpenStore("cinn_like_store_put", dir, kind, key, &args) != 0) return -1;
    absl::Status written = args.store->Put(
        args.kind, key, std::string_view(static_cast<const char*>(data), data ? size : 0));
    if (!written.ok()) return Fail(absl::StrCat("cinn_like_store_put: ", written.message()));
    return 0;
  });
}

int cinn_like_store_lock_key(const char* dir, const char* key, int max_wait_ms,
                             cinn_like_store_lock* out, int* waited) {
  return Guarded("cinn_like_store_lock_key", [&] {
    if (!out || !waited) return Fail("cinn_like_store_lock_key: null argument");
    *out = nullptr;
    std::optional<cinn_like::Store> store;
    if (OpenStoreForKey("cinn_like_store_lock_key", dir, key, &store) != 0) return -1;
    *out = new cinn_like_store_lock_s{{dir, key, max_wait_ms}};
    *waited = (*out)->lock.waited() ? 1 : 0;
    return 0;
  });
}

void cinn_like_store_unlock(cinn_like_store_lock lock) { delete lock; }

int cinn_like_set_flag(const char* name, const char* value) {
  return Guarded("cinn_like_set_flag", [&] {
    if (!name || !value) return Fail("cinn_like_set_flag: name and value must not be null");
    std::string error;
    if (!cinn_like::SetFlag(name, value, &error)) return Fail(error);
    return 0;
  });
}

}  // extern "C"
