/// \file Host code generation: a module of host entry functions to LLVM IR, following the
/// calling convention of DESIGN.md. Targets subclass it (x86, the CUDA host side).
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "backends/llvm/arena_plan.h"
#include "ir/module.h"

namespace cinn_like::backends {

/// An LLVM module with the context that owns it (the module is destroyed first).
struct LLVMModule {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  /// The textual LLVM IR.
  std::string ToString() const;
};

/// The JIT symbol of the entry `name`: a prefix no C symbol can carry (a '.'), so that an entry
/// named like a function generated code calls (`expf`, `memcpy`) or like the runtime
/// (`cinn_like_check_tensor`) neither shadows it nor collides with it.
std::string EntrySymbol(const std::string& name);

/// Translates the host entries of an ir::Module (indices flattened) to LLVM IR. Each entry `f`
/// becomes `i32 @cinn_like.entry.f(ptr %args, i32 %num_args, ptr %stream)` (EntrySymbol): it
/// checks the DLTensors through the runtime (count, dtype, rank, device, dims), binds symbolic
/// dims, runs the body and returns 0, or returns the runtime's nonzero code at the first failed
/// check.
class CodeGenLLVM {
 public:
  virtual ~CodeGenLLVM();

  /// Generates every function of `module`; functions that are not host entries are an error.
  absl::StatusOr<LLVMModule> Compile(const ir::Module& module);

 protected:
  CodeGenLLVM(std::string triple, std::string data_layout);

  /// The DLPack device type the entry's tensors must be on.
  virtual int32_t DeviceType() const;
  /// Whether the entry hands each input back after the last statement that names it
  /// (cinn_like_release_input): only where a statement done is its work finished (x86) or
  /// queued on the call's stream (cuda), so that a stream-ordered free is safe; not where a
  /// later statement may still read it (OpenCL's queue).
  virtual bool ReleasesInputs() const { return false; }
  /// Emits an intrinsic call (Call::CallKind::kIntrinsic): the default emits the CPU ones
  /// (vector reduces, extern calls). Report errors with Fail(); return a value of the call's
  /// type (any i32 value for void calls).
  virtual llvm::Value* EmitIntrinsicCall(const ir::Call* op);
  /// A vector reduce intrinsic (ir/intrinsics.h): llvm.vector.reduce.* (float sums and
  /// products reassociate; float max/min are maxnum/minnum, as the scalar Max/Min).
  llvm::Value* EmitVectorReduce(const ir::Call* op);
  /// An extern call (IntrinsicOp::kExternCall): `i32 name(args..., ptr stream)` with buffers as
  /// pointers, integers as i64 and floats as double; a nonzero result returns from the entry.
  llvm::Value* EmitExternCall(const ir::Call* op);
  /// philox_uniform (ir/philox.h) in integer instructions, scalar or lane by lane:
  /// codegen_llvm_philox.cc.
  llvm::Value* EmitPhiloxUniform(const ir::Call* op);

  // Helpers for subclasses.
  llvm::Value* EmitExpr(const ir::Expr& e);
  void EmitStmt(const ir::Stmt& s);
  /// Records the first error and returns a poison placeholder of `placeholder_type` (i32 when
  /// null or void); nothing more is emitted and Compile returns the error.
  llvm::Value* Fail(absl::Status status, llvm::Type* placeholder_type = nullptr);
  /// The register type of `t` (bool is i1) and its memory type (bool is i8).
  llvm::Type* LLVMType(const ir::Type& t) const;
  llvm::Type* MemoryType(const ir::Type& t) const;
  /// Declares (once) an external C function.
  llvm::FunctionCallee RuntimeFunction(const std::string& name, llvm::Type* ret,
                                       std::vector<llvm::Type*> params);
  /// A private constant C string.
  llvm::Value* ConstString(const std::string& s);
  /// When `code` is nonzero, returns it from the current function (an i32 function), first
  /// freeing the workspaces live at this point (innermost first): a branch to the innermost
  /// unwind block, so each workspace's free is emitted once however many checks follow it.
  void ReturnIfNonzero(llvm::Value* code);
  /// `e` (index arithmetic over bound size symbols) evaluated in 64 bits, each addition,
  /// subtraction and multiplication checked: `*overflow` (an i1) becomes true where one wraps.
  llvm::Value* EmitWideSize(const ir::Expr& e, llvm::Value** overflow);
  /// Fails the call (cinn_like_check_size_fits) unless the size `e` of `what` evaluates without
  /// overflow to a value in [0, max]: a wrapped polynomial of symbols could otherwise match a
  /// tensor's dim, or size a workspace, that the kernels then index past.
  void CheckSizeFits(llvm::Value* fname, const std::string& what, const ir::Expr& e, int64_t max);
  /// The same when `failed` (i1) holds, returning `code`.
  void ReturnIf(llvm::Value* failed, llvm::Value* code);
  /// Opens an unwind block (the error code arrives in a phi); CloseUnwind gives it `cleanup`
  /// (emitted in the block, then on to the enclosing unwind block), or removes it when no check
  /// branched there. The outermost one of an entry returns the code.
  void OpenUnwind(const std::string& name);
  void CloseUnwind(const std::function<void()>& cleanup);
  /// The entry keeps the values its nests read (tensor addresses, symbolic dims, workspaces) in
  /// stack slots of its own, stored once and loaded (volatile, so LLVM keeps them in memory)
  /// where a nest's call needs them: hundreds of values live across hundreds of calls make the
  /// register allocator's work grow quadratically, a reload costs one load.
  void KeepInFrame(const ir::Variable* v, llvm::Value* value);
  /// The value of `v` at the current point: in the entry from its frame slot when it has one,
  /// else (and in every other function) from vars_.
  llvm::Value* EntryValue(const ir::Variable* v);
  /// The entry's stream argument, or a null pointer inside an outlined parallel body.
  llvm::Value* CurrentStream();
  /// The bytes of `buf` (its dims times its element's size) as an i64, a constant where every
  /// dim is one; -1 (SIZE_MAX) when the product overflows or a constant dim is negative.
  llvm::Value* EmitBufferBytes(const ir::Buffer& buf);
  /// The fixed part of a device target's launch_kernel call (ir/intrinsics.h): the kernel's
  /// name, its grid x/y/z, block x/y/z and shared-memory bytes as i32 values, and its handle,
  /// loaded from the external slot `@<kernel>_ptr_` that the backend registers. Fails (and
  /// returns false) on a malformed call.
  struct KernelLaunch {
    std::string name;
    std::vector<llvm::Value*> dims;  // grid x y z, block x y z, shared-memory bytes
    llvm::Value* handle = nullptr;
  };
  static constexpr size_t kLaunchFixedArgs = 8;  // the name, 6 dims, shared-memory bytes
  bool EmitKernelLaunchHead(const ir::Call* op, KernelLaunch* out);
  /// Every buffer of `module`'s host entries (their arguments and the workspaces they allocate)
  /// by its data variable: what a launch's pointer argument is the data of, for its size.
  static std::unordered_map<const ir::Variable*, ir::Buffer> HostBuffers(const ir::Module& module);
  /// A stack slot in the current function's entry block.
  llvm::AllocaInst* EntryAlloca(llvm::Type* type, llvm::Value* count = nullptr,
                                const std::string& name = "");

  llvm::LLVMContext& ctx() { return *context_; }
  llvm::IRBuilder<>& builder() { return *builder_; }
  llvm::Module& module() { return *module_; }
  llvm::Type* i32() { return builder_->getInt32Ty(); }
  llvm::Type* i64() { return builder_->getInt64Ty(); }
  llvm::Type* ptr() { return builder_->getPtrTy(); }
  llvm::Value* stream() { return stream_; }
  llvm::Function* function() { return function_; }

 private:
  void EmitHostEntry(const ir::LoweredFuncNode& func);
  /// A loop nest at the entry's top level, as a call of `i32 <entry>_nest_<k>(ptr closure,
  /// ptr stream)` (codegen_llvm_outline.cc).
  void EmitOutlinedNest(const ir::Stmt& nest);
  /// What an outlined body (a parallel loop's, a nest's) reads from the function around it, by
  /// value in a struct: `leading` values first, then every free variable of the body bound
  /// here, in first-use order (twin nests list their counterparts in the same order).
  struct Closure {
    std::vector<const ir::Variable*> vars;  // the captured variables, after the leading fields
    std::vector<llvm::Value*> values;       // the leading fields and the variables' values
    llvm::StructType* type = nullptr;
  };
  Closure Capture(const ir::Stmt& body, const ir::Variable* defined,
                  std::vector<llvm::Value*> leading = {});
  /// Stores the closure's values into `slot` (at the current point).
  void StoreClosure(const Closure& c, llvm::Value* slot);
  /// In the outlined function: binds each captured variable to its load from `in`; returns the
  /// loads of the leading fields.
  std::vector<llvm::Value*> LoadClosure(const Closure& c, llvm::Value* in);
  struct Unwind;
  /// While alive, code goes into `fn` (a new entry block) with no variable bound and no unwind
  /// scope; the enclosing function's state comes back at its end.
  class OutlinedScope {
   public:
    OutlinedScope(CodeGenLLVM* cg, llvm::Function* fn, llvm::Value* stream);
    ~OutlinedScope();
    OutlinedScope(const OutlinedScope&) = delete;
    OutlinedScope& operator=(const OutlinedScope&) = delete;

   private:
    CodeGenLLVM* cg_;
    llvm::Function* fn_;
    llvm::Value* stream_;
    llvm::IRBuilderBase::InsertPoint ip_;
    std::unordered_map<const ir::Variable*, llvm::Value*> vars_;
    std::vector<Unwind> unwinds_;
  };
  llvm::Value* EmitBinary(const ir::BinaryNode* op);
  /// The binary operation `kind` on emitted operands of element type `t` (not 16-bit floats).
  llvm::Value* EmitBinaryOp(ir::IrNodeKind kind, llvm::Value* x, llvm::Value* y, const ir::Type& t);
  // Types and casts (codegen_llvm_types.cc). float16/bfloat16 arithmetic is promoted to
  // float32 and each result rounded back to nearest even, as on CUDA.
  llvm::Value* EmitCast(const ir::Cast* op);
  llvm::Value* CastValue(llvm::Value* v, const ir::Type& from, const ir::Type& to);
  /// A float16/bfloat16 value (any lanes) widened exactly to float32.
  llvm::Value* WidenToFloat(llvm::Value* v, const ir::Type& t);
  /// A float32 value rounded to nearest even to float16/bfloat16 `t`.
  llvm::Value* NarrowFromFloat(llvm::Value* f, const ir::Type& t);
  /// A float64 value to float32 with round-to-odd (so a later 16-bit rounding is exact).
  llvm::Value* DoubleToFloatRoundToOdd(llvm::Value* d);
  // Math calls (codegen_llvm_math.cc), from the table in ir/math.h.
  llvm::Value* EmitLoad(const ir::Load* op);
  void EmitStore(const ir::Store* op);
  llvm::Value* EmitRamp(const ir::Ramp* op);
  llvm::Value* EmitPureCall(const ir::Call* op);
  /// exp and tanh of a float32 vector, open-coded (codegen_llvm_vector_math.cc): the vector
  /// stays a vector instead of a libm call per lane.
  llvm::Value* EmitVectorExpF32(llvm::Value* x);
  llvm::Value* EmitVectorTanhF32(llvm::Value* x);
  void EmitFor(const ir::For* op);
  void EmitSerialFor(const ir::For* op, const char* loop_hint);
  void EmitParallelFor(const ir::For* op);
  void EmitIfThenElse(const ir::IfThenElse* op);
  /// A buffer on the stack (small, constant, CPU, local or inside a loop) or a workspace from
  /// the runtime's hook (cinn_like_alloc_workspace/free_workspace on the entry's stream).
  void EmitAllocate(const ir::Allocate* op);
  llvm::Value* BufferPointer(const ir::Buffer& buffer);
  llvm::Value* ElementPointer(const ir::Buffer& buffer, llvm::Value* index);

  std::string triple_, data_layout_;
  std::unique_ptr<llvm::LLVMContext> context_;
  std::unique_ptr<llvm::Module> module_;
  std::unique_ptr<llvm::IRBuilder<>> builder_;
  absl::Status status_;
  std::string func_name_;
  llvm::Function* function_ = nullptr;
  llvm::Function* entry_ = nullptr;  // the host entry being emitted
  // The outlined nests of the module by StructuralHashUpToBuffers: a nest equal to one of
  // them up to buffers and free variables calls its function.
  struct Outlined {
    ir::Stmt nest;
    llvm::Function* fn;
  };
  std::unordered_multimap<size_t, Outlined> outlined_;
  struct FrameSlot {
    llvm::Value* address;
    llvm::Type* type;
  };
  std::unordered_map<const ir::Variable*, FrameSlot> frame_;           // see KeepInFrame
  std::unordered_map<llvm::StructType*, llvm::AllocaInst*> closures_;  // the entry's, by type
  // The arena: the entry's top-level workspaces of constant size share one allocation (one
  // call, one check, one free however many intermediates the Program has); each buffer's byte
  // offset in it, and its size. PlanArena fills them before the entry's body is emitted.
  void PlanArena(const ir::Stmt& body);
  /// In the entry, once the arguments are checked and bound: returns 0 when every output
  /// buffer has a zero dim (nothing to write).
  void ReturnIfOutputsEmpty(const std::vector<const ir::Argument*>& buffers);
  /// A buffer's size when every dim is a constant: elements and bytes, and whether either
  /// overflows 64 bits or a dim is negative (the allocator then gets SIZE_MAX and refuses it).
  struct ConstantSize {
    bool constant = true;
    bool absurd = false;
    int64_t elems = 1;
    int64_t bytes = 0;
  };
  static ConstantSize SizeOf(const ir::Buffer& buf);
  std::unordered_map<const ir::BufferNode*, int64_t> arena_offsets_;
  int64_t arena_bytes_ = 0;
  // The entry's large workspaces, each allocated before the first top-level statement that
  // names it and freed after the last (ArenaPlan::own), and the statements they are placed
  // around (null once emitted).
  std::vector<ArenaPlan::Own> own_workspaces_;
  const ir::StmtNode* entry_statements_ = nullptr;
  // The entry's outputs (argument index, buffer): one given no memory (null data) is allocated
  // before the first statement that names it (cinn_like_alloc_output); the entry's name and
  // the slot of its argument array, which that call is given.
  struct EntryArg {
    int index;
    const ir::BufferNode* buffer;
  };
  std::vector<EntryArg> entry_outputs_;
  std::vector<int> output_first_use_;  // per entry output: ArenaPlan::output_first_use
  // The entry's inputs of 64 KiB or more (argument index, buffer), each handed back after the
  // last statement that names it (input_last_use_, ArenaPlan's; -1: before the first).
  std::vector<EntryArg> entry_inputs_;
  std::vector<int> input_last_use_;
  llvm::Value* entry_name_ = nullptr;
  llvm::AllocaInst* entry_args_slot_ = nullptr;
  void EmitEntryStatements(const ir::Stmt& s);
  /// Before statement `at` of EmitEntryStatements: allocates each output given no memory whose
  /// first statement it is (output_first_use_; one that none names, -1, is allocated by
  /// `at` = -1, after the last).
  void AllocateOutputsBefore(int at);
  /// After statement `at` of EmitEntryStatements (-1: before the first): hands back each input
  /// whose last statement it is.
  void ReleaseInputsAfter(int at);
  llvm::AllocaInst* arena_slot_ = nullptr;  // holds the arena's address while it is allocated
  int nest_count_ = 0;
  llvm::Value* stream_ = nullptr;
  int parallel_count_ = 0;
  int loop_depth_ = 0;  // host loops around the statement being emitted
  // Where a failed check at the current point of the entry goes, outermost first: the entry's
  // return block, then one block per live workspace (from cinn_like_alloc_workspace) that frees
  // it and goes on outwards. Empty inside an outlined parallel body (it returns no error).
  // The failing code travels in a stack slot, not a phi of every check: the entry is not
  // optimized (mem2reg does not run), and one value with an incoming edge per check (an argument
  // has several) made register allocation quadratic in the arguments.
  struct Unwind {
    llvm::BasicBlock* block;
    llvm::AllocaInst* code;
    bool used = false;
  };
  std::vector<Unwind> unwinds_;
  // Values of the variables in scope: loop indices, symbolic dims, buffer base addresses.
  std::unordered_map<const ir::Variable*, llvm::Value*> vars_;
};

}  // namespace cinn_like::backends
