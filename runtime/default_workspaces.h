/// \file A scope in which this thread's workspaces come from the default allocators, whatever
/// hook cinn_like_set_allocator installed. A CUDA graph capture needs it: the driver's
/// stream-ordered allocations it records become memory the graph owns at each launch, while a
/// framework's allocator would hand out memory the graph keeps using after it was freed.
/// Defined in runtime/workspace.cc, beside the hook it sets aside.
#pragma once

namespace cinn_like::runtime {

class DefaultWorkspaces {
 public:
  DefaultWorkspaces();
  ~DefaultWorkspaces();
  DefaultWorkspaces(const DefaultWorkspaces&) = delete;
  DefaultWorkspaces& operator=(const DefaultWorkspaces&) = delete;

  /// Whether this thread is in such a scope.
  static bool active();
};

}  // namespace cinn_like::runtime
