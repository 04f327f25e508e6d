/// \file oneDNN loaded by dlopen (libdnnl.so.2, the 2.x C API of dnnl.h): its entry points,
/// one CPU engine and stream per process, and the primitives the externs build once per
/// configuration and run on any thread (runtime/x86/onednn.h). Internal to runtime/x86.
#pragma once

#include <dnnl.h>
#include <dnnl_debug.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace cinn_like::runtime::x86 {

// The entry points used, resolved with dlsym: only dnnl.h's types are used at compile time.
// clang-format off
#define CINN_LIKE_DNNL_FUNCTIONS(X)                                                            \
  X(dnnl_version) X(dnnl_status2str) X(dnnl_engine_create) X(dnnl_stream_create)               \
  X(dnnl_memory_desc_init_by_strides) X(dnnl_memory_desc_init_by_tag)                          \
  X(dnnl_memory_desc_get_size) X(dnnl_memory_desc_equal) X(dnnl_matmul_desc_init)              \
  X(dnnl_dilated_convolution_forward_desc_init) X(dnnl_reorder_primitive_desc_create)          \
  X(dnnl_primitive_attr_create) X(dnnl_primitive_attr_destroy)                                 \
  X(dnnl_primitive_attr_set_scratchpad_mode) X(dnnl_primitive_desc_create)                     \
  X(dnnl_primitive_desc_destroy) X(dnnl_primitive_desc_query) X(dnnl_primitive_desc_query_md)  \
  X(dnnl_primitive_create) X(dnnl_primitive_destroy) X(dnnl_primitive_execute)                 \
  X(dnnl_memory_create) X(dnnl_memory_destroy) X(dnnl_post_ops_create) X(dnnl_post_ops_destroy)  \
  X(dnnl_post_ops_append_eltwise) X(dnnl_primitive_attr_set_post_ops)
// clang-format on

struct Dnnl {
#define CINN_LIKE_DNNL_DECLARE(fn) decltype(&::fn) fn = nullptr;
  CINN_LIKE_DNNL_FUNCTIONS(CINN_LIKE_DNNL_DECLARE)
#undef CINN_LIKE_DNNL_DECLARE
  /// libgomp's, which the OpenMP build of oneDNN (Debian's) runs on (in a PyTorch process the
  /// one PyTorch loaded, which has the same soname); null in other builds.
  void (*omp_set_num_threads)(int) = nullptr;
  int (*omp_get_max_threads)() = nullptr;
  dnnl_engine_t engine = nullptr;
  dnnl_stream_t stream = nullptr;  // CPU execution is synchronous: one serves every thread
  std::string version;             // "oneDNN 2.6.3" (for messages)
};

/// oneDNN, loaded at the first call (thread-safe); Unavailable naming the libraries tried, or
/// what the loaded one lacks, when it cannot be used.
absl::StatusOr<const Dnnl*> GetDnnl();

/// "<call> failed: <oneDNN's status name>" when `rc` is not dnnl_success, else OK.
absl::Status CheckDnnl(const Dnnl& dnnl, dnnl_status_t rc, const char* call);

/// An argument a primitive takes in a layout of its own choosing (blocked: nChw16c, ...)
/// while the caller's tensor has a plain one: Execute reorders it into a temporary before the
/// primitive runs (an input) or out of one after (an output).
struct DnnlRelayout {
  size_t arg = 0;              // index into DnnlPrimitive::args
  bool output = false;         // reordered after the primitive, from its layout to the plain
  dnnl_memory_desc_t plain{};  // the caller's layout
  dnnl_primitive_t reorder = nullptr;
  size_t bytes = 0;  // of the temporary in the primitive's layout
};

/// A primitive made once for one configuration, with the memory descriptors its execution
/// takes, in the order Execute receives the pointers (DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, ...),
/// and its scratchpad's size. It uses a scratchpad of the caller's (the user mode), so that
/// any thread may run it: oneDNN's own scratchpad ties a primitive to the thread that made it.
struct DnnlPrimitive {
  dnnl_primitive_t primitive = nullptr;  // owned by the cache, kept for the process
  std::string impl;                      // oneDNN's implementation ("brg:avx512_core", "ref:any")
  std::vector<std::pair<int, dnnl_memory_desc_t>> args;
  size_t scratchpad_bytes = 0;
  dnnl_memory_desc_t scratchpad_md{};
  std::vector<DnnlRelayout> relayouts;  // arguments in the primitive's own layouts
};

/// The primitive of `op_desc` (a matmul or convolution descriptor) whose execution arguments
/// are `args` (DNNL_ARG_* with their descriptors); errors name the call that failed. Made, as
/// Execute runs it, with as many OpenMP threads as the runtime's pool has
/// (cinn_like_num_threads); the calling thread's own setting is restored after. An argument
/// `op_desc` left to oneDNN (format any) gets the layout it chose, and `plain[arg]`, the
/// caller's layout of it, is reordered to and from that one around each execution. With
/// `post_eltwise` (dnnl_eltwise_relu, dnnl_eltwise_gelu_tanh) the primitive applies it to its
/// result as a post-op (alpha and beta 0, scale 1).
absl::StatusOr<DnnlPrimitive> CreatePrimitive(const Dnnl& dnnl, const_dnnl_op_desc_t op_desc,
                                              std::vector<std::pair<int, dnnl_memory_desc_t>> args,
                                              const std::map<int, dnnl_memory_desc_t>& plain = {},
                                              dnnl_alg_kind_t post_eltwise = dnnl_alg_kind_undef);

/// Frees `p`'s primitives (one the cache does not keep).
void DestroyPrimitive(const Dnnl& dnnl, DnnlPrimitive& p);

/// Runs `p` on `pointers` (one per p.args, in order, in the caller's layouts) with a
/// scratchpad, and the temporaries of p.relayouts, from cinn_like_alloc_workspace.
absl::Status Execute(const Dnnl& dnnl, const DnnlPrimitive& p, const std::vector<void*>& pointers);
/// Execute for a primitive whose arguments are source, weights, bias (when `bias` is not null)
/// and destination, as the matmul and convolution's; an error starts with `what`.
absl::Status ExecuteForward(const Dnnl& dnnl, const DnnlPrimitive& p, const void* src,
                            const void* weights, const void* bias, void* dst,
                            const std::string& what);

/// Primitives by configuration (every argument that shapes them), made once and kept for the
/// process, failures too (a configuration oneDNN refuses is refused again without asking).
class PrimitiveCache {
 public:
  using Maker = absl::StatusOr<DnnlPrimitive> (*)(const Dnnl&, const std::vector<int64_t>& key);
  /// The primitive for `key`, made by `make` the first time it is asked for.
  absl::StatusOr<const DnnlPrimitive*> Get(const Dnnl& dnnl, const std::vector<int64_t>& key,
                                           Maker make);

 private:
  std::mutex mu_;
  std::map<std::vector<int64_t>, std::unique_ptr<absl::StatusOr<DnnlPrimitive>>> made_;
};

/// `p`'s implementation as "<oneDNN version> <implementation>" for the compile-time checks,
/// or Unimplemented when it is oneDNN's reference code ("ref:any"): plain loops, slower than
/// the generated compute that serves instead.
absl::StatusOr<std::string> FastImplementation(const Dnnl& dnnl, const DnnlPrimitive& p);

/// The eltwise algorithm of an epilogue's activation code (kDnnlActivation*: relu, tanh-gelu),
/// dnnl_alg_kind_undef for none; and its name for messages (", then relu", or "" for none).
dnnl_alg_kind_t DnnlActivationAlg(int64_t activation);
std::string DnnlActivationText(int64_t activation);

/// oneDNN's data type for the externs' dtype codes (0 float32, 1 float16, 2 bfloat16), or
/// dnnl_data_type_undef for another code.
dnnl_data_type_t DnnlDataType(int64_t dtype);

}  // namespace cinn_like::runtime::x86
