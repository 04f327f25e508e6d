/// \file The graph compiler: a Graph (or a FusedGraph, after hlir/pass/pipeline.h) to one
/// ir::Module for a target with one host entry. Each node's op builds its tensors in lang
/// (OpDef::compute, or OpDef::extern_compute for library calls); the group scheduler
/// (hlir/group_schedule/group_scheduler.h) schedules every stage and says which tactic each
/// kernel got and why (`<name>.tactics.txt` in the dump); ir::Lower makes the
/// host entry and, on GPUs, the kernels (CompileFusedGraph says which). LowerNodes lowers a
/// list of nodes as one function without groups (every stage scheduled on its own).
///
/// Everywhere, the stages of ops whose value is known at compile time
/// (OpDef::compile_time_value: constant) and one-element non-reductions are inlined into their
/// readers unless they are outputs.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlir/graph.h"
#include "hlir/group_schedule/tactic.h"
#include "hlir/pass/fusion.h"
#include "ir/module.h"
#include "ir/target.h"

namespace cinn_like::hlir {

/// Lowers `nodes` (ids in topological order) of `graph` as one function `name` whose
/// arguments are the values `inputs` (placeholders; every value the nodes read and do not
/// produce must be among them) then `outputs` (values the nodes produce). Values the nodes
/// produce that are not outputs are intermediates: on CPUs temporaries, each its own loop
/// nest; on GPUs non-reductions are inlined into their consumers and a reduction writes a
/// device temporary in a kernel of its own. Symbolic dims share one ir::Var per symbol name.
absl::StatusOr<ir::LoweredFunc> LowerNodes(const Graph& graph, const std::vector<int>& nodes,
                                           const std::vector<int>& inputs,
                                           const std::vector<int>& outputs,
                                           const ir::Target& target, const std::string& name);

/// One ir::Module holding one host entry `name` whose arguments are the graph's inputs then
/// its outputs (DESIGN.md's calling convention). Errors name the op or value at fault. The
/// module is named SafeFileName(name), so that its files stay inside the dump and source-save
/// folders whatever the entry's name.
absl::StatusOr<ir::Module> CompileGraph(const Graph& graph, const ir::Target& target,
                                        const std::string& name);

/// The graph compiler on fusion groups: one ir::Module with one host entry `name` (the
/// graph's inputs then outputs). Values read across groups (and outputs) are materialized;
/// what else is stored, and how each kernel runs, is the group scheduler's policy. Ops with an
/// extern_compute are library calls (cuBLAS/cuDNN on NVGPU, oneDNN on x86) when
/// FLAGS_cinn_like_extern_libs is on and the target's library takes the case; extern tensors
/// are never scheduled or inlined. The module is named SafeFileName(name), as CompileGraph's.
/// `knob_values` are the tuner's values by fusion group (GroupScheduleInput::knob_values);
/// `tactics`, when given, receives each kernel's tactic (with its group and knob).
absl::StatusOr<ir::Module> CompileFusedGraph(const FusedGraph& fused, const ir::Target& target,
                                             const std::string& name,
                                             const std::map<int, int>& knob_values = {},
                                             std::vector<TacticChoice>* tactics = nullptr);

}  // namespace cinn_like::hlir
