/// \file The default CPU workspace allocator (when no framework hook is installed): large blocks
/// are kept for reuse instead of going back to the system at each free. A compiled function
/// asks for the same sizes at every call (its arena, the oneDNN scratchpads), and malloc gives
/// blocks of megabytes back to the system at each free (mmap), so that every call would fault
/// all of its pages in afresh (a quarter of the CPU time of a transformer layer on two cores).
#pragma once

#include <cstddef>

namespace cinn_like::runtime {

/// A 64-byte-aligned block of at least `bytes` (at least 1): a kept block of the same rounded
/// size when there is one, else a new one; null when the system has no memory for it.
void* CpuBlockAlloc(size_t bytes);

/// Gives back a block of CpuBlockAlloc (null is a no-op): a large one is kept for reuse, up to
/// kCpuBlocksKeptMax bytes in all (the least recently freed go back to the system first).
void CpuBlockFree(void* ptr);

/// Blocks of at least this size are kept; smaller ones malloc recycles well by itself.
inline constexpr size_t kCpuBlockKeptMin = size_t{64} << 10;
inline constexpr size_t kCpuBlocksKeptMax = size_t{1} << 30;

/// The bytes kept now (for tests).
size_t CpuBlocksKeptBytes();

}  // namespace cinn_like::runtime
