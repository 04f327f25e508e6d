/* \file The C API of cinn_like: what a host framework that is not C++ (Python through ctypes,
 * a C runtime, another language's FFI) calls. Compile a Program in its JSON form for a target,
 * look functions up, call them with DLTensors on a stream, set flags, read the last error.
 * Every function returns 0 on success, else nonzero with the message in
 * cinn_like_get_last_error(); none aborts the process on bad input.
 *
 *   cinn_like_module m;
 *   if (cinn_like_compile(json, "x86", "f", &m) != 0) puts(cinn_like_get_last_error());
 *   cinn_like_function f;
 *   cinn_like_module_lookup(m, "f", &f);
 *   f(args, num_args, stream);  // inputs then outputs, as the Program declares them
 *   cinn_like_module_free(m);
 */
#ifndef CINN_LIKE_C_API_H_
#define CINN_LIKE_C_API_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A compiled Program: its functions stay callable until the module is freed. */
typedef struct cinn_like_module_s* cinn_like_module;
/* DESIGN.md's calling convention: the Program's inputs then outputs; 0 or nonzero. */
typedef int (*cinn_like_function)(DLTensor** args, int32_t num_args, void* stream);

/* The version of this library, "<major>.<minor>.<patch>". */
const char* cinn_like_version(void);

/* Compiles the Program in `program_json` (frontend/program_json.h) for `target` ("x86",
 * "cuda", "cuda -arch=sm_90") into one host entry called `name`. */
int cinn_like_compile(const char* program_json, const char* target, const char* name,
                      cinn_like_module* out);
/* Starts loading, on a background thread, what a first compile for `target` asks for (NVGPU:
 * cuBLASLt and its first heuristic query, cuDNN, NVRTC's builtins, in the calling thread's CUDA
 * context), so that a framework
 * can call it as it begins its own work on a graph; once per process, returns at once. Fails
 * only for a target that does not parse. */
int cinn_like_warm_up(const char* target);
/* The host entry `name` of a module. */
int cinn_like_module_lookup(cinn_like_module module, const char* name, cinn_like_function* out);
/* Readable generated code (CUDA C for the device part, or LLVM IR); owned by the module. */
int cinn_like_module_source(cinn_like_module module, const char** out);
/* The entry's arguments as JSON, owned by the module:
 *   {"inputs": [{"name": "x", "dtype": "float32", "shape": ["n", 64]}], "outputs": [...]}
 * Symbolic dims are names; callers bind them from the inputs they pass. */
int cinn_like_module_signature(cinn_like_module module, const char** out);
/* Calls `fn` (for hosts whose FFI cannot call a function pointer). The function checks its
 * arguments itself, however it is called: a null `args`, a wrong count, a null DLTensor, a
 * wrong dtype, rank, device or size, a null shape or data (data may be null only when the
 * tensor has no element), a negative size or non-row-major strides return nonzero with a
 * message naming the function, the argument and what was expected. Tensors with no element
 * are valid. No output may share memory with another argument (an input, or another output):
 * the function reads its inputs while it writes its outputs, so an operation in place (a
 * transpose of x into x) would read what it has overwritten; such a call returns nonzero before
 * anything runs, naming the output and the argument it overlaps. Inputs may share memory with
 * each other. The same holds for the opencl target, whose tensors are host memory too.
 * With the flag cinn_like_self_check on both when the module was compiled and at the call, a
 * call that succeeds is checked: its inputs (copied to the host before the call, CUDA ones
 * after waiting for the device) go through the reference interpreter and every output is
 * compared at its dtype's tolerance. A difference returns nonzero with a message naming the
 * function, the differing outputs and elements (got, want, tolerance), and the first differing
 * instruction (index, op, output, fusion group), found by compiling prefixes of the Program
 * and running them on the same inputs (slow: a debugging aid). A check that cannot run (the
 * reference refuses the inputs) also returns nonzero, saying why; the outputs are written.
 * Only calls through cinn_like_call are checked: calling `fn` directly skips the check.
 * Each tensor has the rank the Program's signature declares, with one more form for a
 * rank-0 one (shape [], a fill of rank 0, say): a rank-0 tensor, or a one-element rank-1
 * tensor (shape [1]), the form the function holds it in. A tensor declared [1] is a vector and
 * takes a rank-1 tensor only. A tensor of another rank is refused with a message naming the
 * function, the argument, its shape and the shape expected. */
int cinn_like_call(cinn_like_function fn, DLTensor** args, int32_t num_args, void* stream);
/* A call prepared once (the fast path for a framework that calls one function many times
 * with tensors of the same shapes): the plan copies each argument's dtype, device and shape
 * from `examples` (inputs then outputs, as for cinn_like_call; each example's data is not
 * kept), and later calls give only the data pointers and the stream. The plan's tensors are
 * row-major (null strides, byte_offset 0): a caller passes contiguous tensors. The function
 * still checks the arguments at every call, so a plan made from wrong examples fails its
 * calls with the same messages as cinn_like_call. Runs may come from several threads at once;
 * the plan must outlive them and be freed after its module's last call. */
typedef struct cinn_like_call_plan_s* cinn_like_call_plan;
int cinn_like_call_plan_create(cinn_like_function fn, DLTensor* const* examples, int32_t num_args,
                               cinn_like_call_plan* out);
/* Calls the plan's function with data[i] as argument i's data (num_args pointers) on
 * `stream`, as cinn_like_call does (self-check included). */
int cinn_like_call_plan_run(cinn_like_call_plan plan, void* const* data, void* stream);
/* Memory for the `bytes` bytes of output argument `index`, at least 64-byte aligned and shared
 * with no other argument (it is not checked for overlap, as given pointers are), or null (the
 * call then fails naming the output). */
typedef void* (*cinn_like_output_alloc_fn)(void* ctx, int32_t index, size_t bytes);
/* Says that the call will not name input argument `index` again: its memory may be reused once
 * the work the call has queued so far is done (for the cuda target, a free ordered on the
 * call's stream, as the CUDA caching allocators of frameworks do; for x86, at once). */
typedef void (*cinn_like_input_release_fn)(void* ctx, int32_t index);
/* cinn_like_call_plan_run with the caller managing memory during the call:
 * - with `alloc`, an output's data pointer may be null: the function asks `alloc` for that
 *   output's memory just before the first statement that writes it, so a long call holds a
 *   late output only from then on (a training step's backward, its gradients). The caller owns
 *   what `alloc` returned, whether the call succeeded or not;
 * - with `release`, the function calls it for each input of 64 KiB or more (or of a symbolic
 *   size) once past the last statement that names it (x86 and cuda targets; a function of
 *   another target never does), so a caller that holds an input only for this call can free
 *   it early (a backward's saved activations). An input may be released before the call
 *   fails. Calls the function makes for a self-check's diagnosis do not use either hook.
 * Either may be null, its context then unused. */
int cinn_like_call_plan_run_hooked(cinn_like_call_plan plan, void* const* data, void* stream,
                                   cinn_like_output_alloc_fn alloc, void* alloc_ctx,
                                   cinn_like_input_release_fn release, void* release_ctx);
void cinn_like_call_plan_free(cinn_like_call_plan plan);
/* CUDA graphs: a plan's call with `data` captured once, then launched without the host work of
 * a call (argument checks, launch parameters, library plans): each launch runs the recorded
 * kernels, library calls and workspace allocations on the same addresses, so a caller changes
 * the inputs in place between launches and reads the outputs after each (launches of one graph
 * run one after another, on any streams: they share these buffers). Capturing first runs the
 * call on `stream` (self-checked like cinn_like_call_plan_run; its errors come back as they
 * are, and its outputs are written), then records it on `stream` (a CUstream; null, or the
 * legacy or per-thread default stream: a stream of the library's own). Workspaces of the
 * recorded call come from the driver's stream-ordered allocator, whatever
 * cinn_like_set_allocator installed: the graph owns them. Fails with a message, before anything
 * is queued, for a function of another target than cuda, a build without CUDA, a driver
 * without CUDA graphs or stream-ordered allocation, or a stream that the caller is capturing
 * already (its own capture records cinn_like_call_plan_run); after the first run, for a call
 * that cannot be recorded (the debug flag cinn_like_check_indices synchronises) or a driver
 * error, leaving the stream usable. Launches are not self-checked. Free a graph before its
 * module. */
typedef struct cinn_like_cuda_graph_s* cinn_like_cuda_graph;
int cinn_like_call_plan_capture(cinn_like_call_plan plan, void* const* data, void* stream,
                                cinn_like_cuda_graph* out);
/* Queues one launch of the graph on `stream` (a CUstream; null: the legacy default stream). */
int cinn_like_cuda_graph_launch(cinn_like_cuda_graph graph, void* stream);
void cinn_like_cuda_graph_free(cinn_like_cuda_graph graph);
void cinn_like_module_free(cinn_like_module module);

/* Writes the module to `path` as one file (atomically) that cinn_like_module_load loads, in
 * another process too, without compiling anything (no NVRTC, no LLVM optimisation). Fails,
 * naming the path, rather than replace what is there when it is not a module file (a file of
 * another format, a directory, a device, a FIFO or a symbolic link). */
int cinn_like_module_save(cinn_like_module module, const char* path);
/* Loads a file written by cinn_like_module_save. Fails with a message naming the file when it
 * is not a regular file (a FIFO, a device), is not a module file, has another format version,
 * is damaged (SHA-256 checksum, truncation), or was made for another CPU or GPU arch. The
 * file's machine code runs when its functions are called: load only files that you, or someone
 * you trust, wrote, as with a shared library (the checksum finds damage, not a forgery). */
int cinn_like_module_load(const char* path, cinn_like_module* out);
/* The name of the module's host entry (the `name` it was compiled with), owned by the module. */
int cinn_like_module_name(cinn_like_module module, const char** out);
/* The persistent compile cache's counters in this process, as JSON owned by the library (valid
 * until the next call on this thread): {"hits", "misses", "stores", "damaged", "evictions",
 * "write_errors", "waits" (lookups that waited for another process's compile of the same
 * Program)}; and its directory ("" when compiles do not use it now). */
const char* cinn_like_cache_stats(void);
/* Where this process's compile time went, as JSON owned by the library (valid until the next
 * call on this thread): {"compiled", "loaded", "lower_ms", "library_check_ms" (part of lower_ms:
 * libraries loaded and asked, cuDNN plans made), "device_codegen_ms", "nvrtc_ms",
 * "module_load_ms", "host_codegen_ms", "host_optimize_ms", "orc_link_ms", "cache_ms",
 * "total_ms", "prebuilt_kernels" (library kernels loaded as built with cinn_like)}, summed over
 * every compile. */
const char* cinn_like_compile_stats(void);
/* The persistent compile cache's directory, "" when compiles do not use it now: off, bypassed,
 * or a directory that another user owns or that its group or others can write (refused, with a
 * warning in the log). */
const char* cinn_like_cache_dir(void);

/* The persistent store (cinn_like/cache/store.h, docs/persistence.md): one directory of files
 * that the processes of a machine share, which the compile cache keeps its modules in and a
 * host its own records (the torch backend its graph plans, kind "plan"). Each function takes
 * the directory (cinn_like_cache_dir()'s, say), made mode 0700 where missing and refused where
 * another user owns it or its group or others can write it; a key of 64 lower-case hex digits
 * (cinn_like_store_key), refused otherwise; and a kind by name ("plan": the one kind these
 * functions read and write; the compile cache's modules are its own). */

/* The store's key of the `size` bytes at `text`: their SHA-256 as 64 lower-case hex digits,
 * owned by the library (valid until the next call on this thread). */
const char* cinn_like_store_key(const char* text, size_t size);
/* Why cinn_like_store_get found no record. */
enum {
  CINN_LIKE_STORE_ABSENT = 1,  /* no record under the key */
  CINN_LIKE_STORE_DAMAGED = 2, /* it did not check (its checksum, its frame, another kind or key
                                  held): removed */
  CINN_LIKE_STORE_REFUSED = 3  /* not a regular file (left as it is), or an unusable directory */
};
/* Reads the record of `kind` under `key`: 0 with `*data` and `*size` its payload (owned by the
 * library, valid until the next call on this thread), the record marked recently used. Else
 * nonzero, `*miss` one of CINN_LIKE_STORE_* and the reason in cinn_like_get_last_error(). */
int cinn_like_store_get(const char* dir, const char* kind, const char* key, const void** data,
                        size_t* size, int* miss);
/* Writes `size` bytes at `data` as the record of `kind` under `key`, atomically (a reader sees
 * the old record or the whole new one; writers of one key at once leave one whole record).
 * Fails, naming the path, rather than replace what is not a regular file of the store's. */
int cinn_like_store_put(const char* dir, const char* kind, const char* key, const void* data,
                        size_t size);
/* The store's lock of `key` (an flock between processes and threads), held from this call to
 * cinn_like_store_unlock: a holder elsewhere is waited for, up to `max_wait_ms`, after which
 * `*out` is given unheld (the work then runs unlocked, as it would without a lock file).
 * `*waited` says whether another holder was waited for. A thread must not take a key it holds. */
typedef struct cinn_like_store_lock_s* cinn_like_store_lock;
int cinn_like_store_lock_key(const char* dir, const char* key, int max_wait_ms,
                             cinn_like_store_lock* out, int* waited);
void cinn_like_store_unlock(cinn_like_store_lock lock);

/* Sets one of cinn_like's own flags by name ("cinn_like_dump_dir", "cinn_like_fast_math", ...;
 * docs/flags.md), its value parsed by the flag's type (bool, string). Any other name,
 * gflags' and glog's flags included ("flagfile", "fromenv", "v"), is refused. */
int cinn_like_set_flag(const char* name, const char* value);

/* The message of the last failed call on this thread ("" when none). */
const char* cinn_like_get_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* CINN_LIKE_C_API_H_ */
