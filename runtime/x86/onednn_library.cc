/// \file Loading oneDNN by dlopen, its engine and stream, and making, caching and running its
/// primitives.
#include "runtime/x86/onednn_library.h"

#include <dlfcn.h>

#include "absl/strings/str_cat.h"
#include "runtime/cinn_like_runtime.h"
#include "runtime/thread_pool.h"
#include "runtime/x86/onednn.h"

namespace cinn_like::runtime::x86 {
namespace {

absl::StatusOr<Dnnl> Load() {
  void* lib = nullptr;
  std::string tried;
  for (const char* name : {"libdnnl.so.2", "libdnnl.so"}) {
    lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib) break;
    const char* why = dlerror();
    absl::StrAppend(&tried, tried.empty() ? "" : "; ", why ? why : name);
  }
  if (!lib) {
    return absl::UnavailableError(absl::StrCat("oneDNN could not be loaded (", tried,
                                               "); on Debian: apt-get install libdnnl-dev"));
  }
  Dnnl d;
  d.dnnl_version = reinterpret_cast<decltype(d.dnnl_version)>(dlsym(lib, "dnnl_version"));
  const dnnl_version_t* v = d.dnnl_version ? d.dnnl_version() : nullptr;
  if (!v || v->major != DNNL_VERSION_MAJOR) {
    return absl::UnavailableError(absl::StrCat(
        "the loaded oneDNN is version ", v ? absl::StrCat(v->major, ".", v->minor) : "unknown",
        "; cinn_like calls the C API of oneDNN ", DNNL_VERSION_MAJOR, ".x"));
  }
  d.version = absl::StrCat("oneDNN ", v->major, ".", v->minor, ".", v->patch);
#define CINN_LIKE_DNNL_RESOLVE(fn)                                                        \
  d.fn = reinterpret_cast<decltype(d.fn)>(dlsym(lib, #fn));                               \
  if (!d.fn) {                                                                            \
    return absl::UnavailableError(absl::StrCat("the loaded ", d.version, " lacks " #fn)); \
  }
  CINN_LIKE_DNNL_FUNCTIONS(CINN_LIKE_DNNL_RESOLVE)
#undef CINN_LIKE_DNNL_RESOLVE
  // dlsym on the library's handle searches its dependencies too (libgomp).
  d.omp_set_num_threads = reinterpret_cast<void (*)(int)>(dlsym(lib, "omp_set_num_threads"));
  d.omp_get_max_threads = reinterpret_cast<int (*)()>(dlsym(lib, "omp_get_max_threads"));
  if (!d.omp_get_max_threads) d.omp_set_num_threads = nullptr;
  // Generated parallel loops go to the same OpenMP team, which spins between oneDNN's calls
  // (runtime/thread_pool.h says why).
  OpenMpRuntime omp{reinterpret_cast<decltype(omp.parallel)>(dlsym(lib, "GOMP_parallel")),
                    reinterpret_cast<decltype(omp.thread_num)>(dlsym(lib, "omp_get_thread_num")),
                    reinterpret_cast<decltype(omp.num_threads)>(dlsym(lib, "omp_get_num_threads"))};
  absl::Status st =
      CheckDnnl(d, d.dnnl_engine_create(&d.engine, dnnl_cpu, 0), "dnnl_engine_create");
  if (st.ok()) {
    st = CheckDnnl(d, d.dnnl_stream_create(&d.stream, d.engine, dnnl_stream_default_flags),
                   "dnnl_stream_create");
  }
  if (!st.ok()) return absl::UnavailableError(st.message());
  if (d.omp_set_num_threads) UseOpenMpForParallelLoops(omp);
  return d;
}

/// oneDNN's OpenMP threads, for the scope, as many as the runtime's pool: the OpenMP setting
/// belongs to the calling thread, whose host (PyTorch) may have set its own, restored after.
class PoolThreads {
 public:
  explicit PoolThreads(const Dnnl& d) : d_(d) {
    if (!d_.omp_set_num_threads) return;
    saved_ = d_.omp_get_max_threads();
    if (saved_ != cinn_like_num_threads()) d_.omp_set_num_threads(cinn_like_num_threads());
  }
  ~PoolThreads() {
    if (d_.omp_set_num_threads && saved_ != cinn_like_num_threads()) {
      d_.omp_set_num_threads(saved_);
    }
  }

 private:
  const Dnnl& d_;
  int saved_ = 0;
};

}  // namespace

absl::StatusOr<const Dnnl*> GetDnnl() {
  static std::once_flag once;
  static absl::StatusOr<Dnnl>* dnnl = nullptr;  // kept for the process, as the library
  std::call_once(once, [] { dnnl = new absl::StatusOr<Dnnl>(Load()); });
  if (!dnnl->ok()) return dnnl->status();
  return &**dnnl;
}

absl::StatusOr<std::string> DnnlVersion() {
  auto d = GetDnnl();
  if (!d.ok()) return d.status();
  return (*d)->version;
}

dnnl_alg_kind_t DnnlActivationAlg(int64_t activation) {
  return activation == kDnnlActivationRelu       ? dnnl_eltwise_relu
         : activation == kDnnlActivationGeluTanh ? dnnl_eltwise_gelu_tanh
                                                 : dnnl_alg_kind_undef;
}

std::string DnnlActivationText(int64_t activation) {
  switch (activation) {
    case kDnnlActivationNone:
      return "";
    case kDnnlActivationRelu:
      return ", then relu";
    case kDnnlActivationGeluTanh:
      return ", then gelu (tanh)";
  }
  return absl::StrCat(", then activation ", activation);
}

absl::Status CheckDnnl(const Dnnl& dnnl, dnnl_status_t rc, const char* call) {
  if (rc == dnnl_success) return absl::OkStatus();
  std::string msg = absl::StrCat(call, " failed: ", dnnl.dnnl_status2str(rc));
  return rc == dnnl_unimplemented ? absl::UnimplementedError(msg) : absl::InvalidArgumentError(msg);
}

namespace {

/// `make(attr)` with primitive attributes asking for a scratchpad of the caller's (the user
/// mode: any thread may then run the primitive), destroyed after.
template <typename Make>
absl::Status WithUserScratchpad(const Dnnl& d, Make make) {
  dnnl_primitive_attr_t attr = nullptr;
  absl::Status st = CheckDnnl(d, d.dnnl_primitive_attr_create(&attr), "dnnl_primitive_attr_create");
  if (!st.ok()) return st;
  st = CheckDnnl(d, d.dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user),
                 "dnnl_primitive_attr_set_scratchpad_mode");
  if (st.ok()) st = make(attr);
  d.dnnl_primitive_attr_destroy(attr);
  return st;
}

/// `alg` (an eltwise algorithm; none for dnnl_alg_kind_undef) as `attr`'s one post-op.
absl::Status SetPostEltwise(const Dnnl& d, dnnl_primitive_attr_t attr, dnnl_alg_kind_t alg) {
  if (alg == dnnl_alg_kind_undef) return absl::OkStatus();
  dnnl_post_ops_t ops = nullptr;
  absl::Status st = CheckDnnl(d, d.dnnl_post_ops_create(&ops), "dnnl_post_ops_create");
  if (st.ok()) {
    st = CheckDnnl(d, d.dnnl_post_ops_append_eltwise(ops, 1.f, alg, 0.f, 0.f),
                   "dnnl_post_ops_append_eltwise");
  }
  if (st.ok()) {
    st = CheckDnnl(d, d.dnnl_primitive_attr_set_post_ops(attr, ops),
                   "dnnl_primitive_attr_set_post_ops");
  }
  if (ops) d.dnnl_post_ops_destroy(ops);  // the attributes keep a copy
  return st;
}

/// A reorder from `from` to `to`, made with a scratchpad of the caller's (never needed by
/// oneDNN 2's CPU reorders: one that asks is refused, and the caller keeps plain layouts).
absl::StatusOr<dnnl_primitive_t> CreateReorder(const Dnnl& d, const dnnl_memory_desc_t& from,
                                               const dnnl_memory_desc_t& to) {
  dnnl_primitive_desc_t pd = nullptr;
  absl::Status st = WithUserScratchpad(d, [&](dnnl_primitive_attr_t attr) {
    return CheckDnnl(
        d, d.dnnl_reorder_primitive_desc_create(&pd, &from, d.engine, &to, d.engine, attr),
        "dnnl_reorder_primitive_desc_create");
  });
  if (!st.ok()) return st;
  const dnnl_memory_desc_t* scratch =
      d.dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  dnnl_primitive_t reorder = nullptr;
  if (scratch && d.dnnl_memory_desc_get_size(scratch) > 0) {
    st = absl::UnimplementedError("a reorder that needs a scratchpad");
  } else {
    st = CheckDnnl(d, d.dnnl_primitive_create(&reorder, pd), "dnnl_primitive_create (reorder)");
  }
  d.dnnl_primitive_desc_destroy(pd);
  if (!st.ok()) return st;
  return reorder;
}

}  // namespace

absl::StatusOr<DnnlPrimitive> CreatePrimitive(const Dnnl& d, const_dnnl_op_desc_t op_desc,
                                              std::vector<std::pair<int, dnnl_memory_desc_t>> args,
                                              const std::map<int, dnnl_memory_desc_t>& plain,
                                              dnnl_alg_kind_t post_eltwise) {
  PoolThreads threads(d);
  dnnl_primitive_desc_t pd = nullptr;
  absl::Status st = WithUserScratchpad(d, [&](dnnl_primitive_attr_t attr) {
    absl::Status post = SetPostEltwise(d, attr, post_eltwise);
    if (!post.ok()) return post;
    return CheckDnnl(d, d.dnnl_primitive_desc_create(&pd, op_desc, attr, d.engine, nullptr),
                     "dnnl_primitive_desc_create");
  });
  if (!st.ok()) return st;
  DnnlPrimitive p;
  p.args = std::move(args);
  for (size_t i = 0; i < p.args.size() && st.ok(); ++i) {
    auto& [arg, md] = p.args[i];
    if (md.format_kind != dnnl_format_kind_any) continue;
    const dnnl_memory_desc_t* chosen =
        d.dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, arg);
    auto it = plain.find(arg);
    if (!chosen || it == plain.end()) {
      st = absl::InternalError(
          absl::StrCat("argument ", arg, " left to oneDNN without a plain layout"));
      break;
    }
    md = *chosen;
    if (d.dnnl_memory_desc_equal(&md, &it->second)) continue;  // it chose the plain one
    const bool output = arg == DNNL_ARG_DST;
    auto reorder = output ? CreateReorder(d, md, it->second) : CreateReorder(d, it->second, md);
    if (!reorder.ok()) {
      st = reorder.status();
      break;
    }
    p.relayouts.push_back({i, output, it->second, *reorder, d.dnnl_memory_desc_get_size(&md)});
  }
  if (const dnnl_memory_desc_t* md =
          st.ok() ? d.dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0) : nullptr) {
    p.scratchpad_md = *md;
    p.scratchpad_bytes = d.dnnl_memory_desc_get_size(md);
  }
  const char* impl = nullptr;
  if (st.ok() &&
      d.dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl) {
    p.impl = impl;
  }
  if (st.ok())
    st = CheckDnnl(d, d.dnnl_primitive_create(&p.primitive, pd), "dnnl_primitive_create");
  d.dnnl_primitive_desc_destroy(pd);
  if (!st.ok()) {
    DestroyPrimitive(d, p);
    return st;
  }
  return p;
}

void DestroyPrimitive(const Dnnl& d, DnnlPrimitive& p) {
  for (DnnlRelayout& r : p.relayouts) {
    if (r.reorder) d.dnnl_primitive_destroy(r.reorder);
    r.reorder = nullptr;
  }
  if (p.primitive) d.dnnl_primitive_destroy(p.primitive);
  p.primitive = nullptr;
}

absl::Status Execute(const Dnnl& d, const DnnlPrimitive& p, const std::vector<void*>& pointers) {
  PoolThreads threads(d);
  constexpr int32_t kCpu = 1;  // kDLCPU
  constexpr size_t kAlign = 64;
  // One workspace: the scratchpad, then a temporary per relayout.
  auto round_up = [](size_t n) { return (n + kAlign - 1) / kAlign * kAlign; };
  size_t bytes = round_up(p.scratchpad_bytes);
  for (const DnnlRelayout& r : p.relayouts) bytes += round_up(r.bytes);
  char* workspace = nullptr;
  if (bytes > 0) {
    workspace = static_cast<char*>(cinn_like_alloc_workspace(kCpu, bytes, nullptr));
    if (!workspace) {
      return absl::ResourceExhaustedError(
          absl::StrCat("workspace of ", bytes, " bytes: ", cinn_like_get_last_error()));
    }
  }
  std::vector<dnnl_memory_t> made;
  absl::Status st;
  auto wrap = [&](const dnnl_memory_desc_t& md, void* ptr) {
    dnnl_memory_t m = nullptr;
    if (st.ok())
      st = CheckDnnl(d, d.dnnl_memory_create(&m, &md, d.engine, ptr), "dnnl_memory_create");
    if (m) made.push_back(m);
    return m;
  };
  auto run = [&](dnnl_primitive_t prim, const std::vector<dnnl_exec_arg_t>& exec,
                 const char* what) {
    if (!st.ok()) return;
    st = CheckDnnl(
        d, d.dnnl_primitive_execute(prim, d.stream, static_cast<int>(exec.size()), exec.data()),
        what);
  };
  // Arguments in the primitive's own layouts run on temporaries of the workspace, the
  // caller's tensors reordered into them before the primitive (inputs) or out after (outputs).
  std::vector<dnnl_exec_arg_t> exec;
  for (const auto& [arg, md] : p.args) exec.push_back({arg, nullptr});
  std::vector<std::pair<dnnl_memory_t, dnnl_memory_t>> plain_and_own;  // by relayout
  size_t offset = round_up(p.scratchpad_bytes);
  for (const DnnlRelayout& r : p.relayouts) {
    plain_and_own.push_back(
        {wrap(r.plain, pointers[r.arg]), wrap(p.args[r.arg].second, workspace + offset)});
    exec[r.arg].memory = plain_and_own.back().second;
    offset += round_up(r.bytes);
  }
  for (size_t i = 0; i < p.args.size(); ++i) {
    if (!exec[i].memory) exec[i].memory = wrap(p.args[i].second, pointers[i]);
  }
  if (p.scratchpad_bytes > 0) {
    exec.push_back({DNNL_ARG_SCRATCHPAD, wrap(p.scratchpad_md, workspace)});
  }
  auto relayout = [&](bool outputs) {
    for (size_t k = 0; k < p.relayouts.size(); ++k) {
      if (p.relayouts[k].output != outputs) continue;
      auto [plain, own] = plain_and_own[k];
      run(p.relayouts[k].reorder,
          {{DNNL_ARG_FROM, outputs ? own : plain}, {DNNL_ARG_TO, outputs ? plain : own}},
          "dnnl_primitive_execute (reorder)");
    }
  };
  relayout(/*outputs=*/false);
  run(p.primitive, exec, "dnnl_primitive_execute");
  relayout(/*outputs=*/true);
  for (dnnl_memory_t m : made) d.dnnl_memory_destroy(m);
  if (workspace) cinn_like_free_workspace(kCpu, workspace, nullptr);
  return st;
}

absl::Status ExecuteForward(const Dnnl& dnnl, const DnnlPrimitive& p, const void* src,
                            const void* weights, const void* bias, void* dst,
                            const std::string& what) {
  std::vector<void*> pointers{const_cast<void*>(src), const_cast<void*>(weights)};
  if (bias) pointers.push_back(const_cast<void*>(bias));
  pointers.push_back(dst);
  absl::Status st = Execute(dnnl, p, pointers);
  if (!st.ok()) return absl::Status(st.code(), absl::StrCat(what, ": ", st.message()));
  return st;
}

absl::StatusOr<const DnnlPrimitive*> PrimitiveCache::Get(const Dnnl& dnnl,
                                                         const std::vector<int64_t>& key,
                                                         Maker make) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = made_[key];
  if (!slot) slot = std::make_unique<absl::StatusOr<DnnlPrimitive>>(make(dnnl, key));
  if (!slot->ok()) return slot->status();
  return &**slot;
}

absl::StatusOr<std::string> FastImplementation(const Dnnl& dnnl, const DnnlPrimitive& p) {
  if (p.impl.rfind("ref", 0) == 0) {
    return absl::UnimplementedError(
        absl::StrCat(dnnl.version, " has only its reference implementation (", p.impl, ") for it"));
  }
  return absl::StrCat(dnnl.version, " ", p.impl);
}

dnnl_data_type_t DnnlDataType(int64_t dtype) {
  switch (dtype) {
    case 0:
      return dnnl_f32;
    case 1:
      return dnnl_f16;
    case 2:
      return dnnl_bf16;
    default:
      return dnnl_data_type_undef;
  }
}

}  // namespace cinn_like::runtime::x86
