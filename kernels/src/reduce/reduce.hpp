// Private interface between the CUDA backend and the reduction family (kernels/src/reduce/).
// The backend computes statistics and validation metrics of device arrays through these
// functions; the reduction variant is chosen by name from the registry (--reduction).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "dcs/stats.hpp"
#include "dcs/variants.hpp"
#include "device_buffer.hpp"
#include "stream.hpp"

namespace dcs::cuda::detail {

/// Scratch memory the reductions reuse between calls (partials, copies for in-place kernels).
/// Grows on demand; owned by the backend, one per stream.
class ReduceWorkspace;

/// All reduction variants (name, one-line summary, default marked), registry order.
std::vector<VariantInfo> reduction_variants();
/// Name of the default variant (the fastest correct one, by measurement).
std::string default_reduction();
/// Throws UsageError listing the valid names when `name` is not a variant.
void check_reduction_name(const std::string& name);

/// Statistics (min, max, sum, sum of squares in double, count, non-finite count) of n device
/// floats in one pass with the named variant. Never modifies d_values. Blocks until the
/// result is on the host.
StatsAccum device_statistics(const float* d_values, std::size_t n, const std::string& variant,
                             ReduceWorkspace& workspace, StreamView stream);

/// max|a - ref|, sum (a - ref)^2, max|ref| and counts of n device values against a device
/// float64 reference. Blocks until the result is on the host.
DiffAccum device_difference(const float* d_values, const double* d_reference, std::size_t n,
                            const std::string& variant, ReduceWorkspace& workspace,
                            StreamView stream);

}  // namespace dcs::cuda::detail
