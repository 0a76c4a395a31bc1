// The books' own kernels: plain float sums with the launch shapes the books use, for the seed
// measurements (Nsight Compute counters, the PCC speed-up ladder) and for the tests at the sizes
// the books allow. One per registry name; their trees are the same functions the statistics
// kernels use (block_reduce.cuh), so what is measured here is what runs there.
//
//   simple, convergent, shared   PMPP Fig. 10.6/10.9/10.11: ONE block of n/2 threads, n a power
//                                of two <= 2048; simple and convergent reduce in place.
//   segmented, coarsened         PMPP Fig. 10.13/10.15: BLOCK_DIM 512, COARSE_FACTOR 2, one float
//                                atomicAdd per block; n a multiple of the segment.
//   neighbored ... unroll8-template   PCC ch. 3: blocks of 512, one partial per block, in place;
//                                n a multiple of 512 * unrolling factor (the book's assumption).
//   warp-shuffle                 any n; the statistics kernel's shape with a float sum.
#pragma once

#include <cstddef>
#include <string>

#include "reduce/reduce.hpp"
#include "stream.hpp"

namespace dcs::cuda::detail {

/// Empty when the book's kernel of `name` accepts n values; otherwise the book's requirement,
/// as a sentence. Throws UsageError for an unknown name.
std::string textbook_requirement(const std::string& name, std::size_t n);

/// Whether the kernel of `name` overwrites its input (then pass a copy, never the map).
bool textbook_in_place(const std::string& name);

/// Floats the kernel of `name` writes to d_out for n values (their sum is the total).
std::size_t textbook_outputs(const std::string& name, std::size_t n);

/// Enqueues the book's kernel(s) for `name` on `stream`: reads d_data (and overwrites it when
/// textbook_in_place), writes textbook_outputs(name, n) floats to d_out. Throws UsageError when
/// textbook_requirement() is not empty. Does not block.
void enqueue_textbook_sum(const std::string& name, float* d_data, std::size_t n, float* d_out,
                          ReduceWorkspace& workspace, StreamView stream);

/// Blocks of 512 threads, as in PCC (its main() default).
inline constexpr unsigned kTextbookPccBlock = 512;

}  // namespace dcs::cuda::detail
