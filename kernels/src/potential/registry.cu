// The registry rows: {name, launch function, requirements}. Names and summaries are the variant
// table's (dcs/variants.hpp, shared with the CPU-only stub); a static_assert keeps the two in
// step.
#include "potential/registry.hpp"

#include <array>

#include "dcs/atoms.hpp"
#include "dcs/error.hpp"
#include "dcs/variants.hpp"

namespace dcs::cuda::detail {
namespace {

constexpr PotentialKernel row(std::string_view name, PotentialLaunchFn launch,
                              KernelRequirements requirements) {
  for (const Variant& variant : kVariantTable)
    if (variant.backend == BackendKind::Cuda && variant.kind == VariantKind::Potential &&
        variant.name == name)
      return {name, variant.summary, launch, requirements};
  throw "registry row without a variant-table entry";
}

constexpr KernelRequirements kProductionNeeds{kProductionChunkAtoms, false, false, true};
constexpr KernelRequirements kCoulombProductionNeeds{kProductionChunkAtoms, false, false,
                                                     Production8::kEveryModel};
constexpr KernelRequirements kScatterNeeds{kConstantChunkAtoms, true, true, false};
constexpr KernelRequirements kGatherNeeds{kConstantChunkAtoms, true, true, false};

constexpr std::array kRegistry{
    row("production", &launch_production<ProductionDefault>, kProductionNeeds),
    row("production-mufu", &launch_production<ProductionMufu>, kProductionNeeds),
    row("production-sw4", &launch_production<ProductionSoftware4>, kProductionNeeds),
    row("production-sw2", &launch_production<ProductionSoftware2>, kProductionNeeds),
    row("production-8", &launch_production<Production8>, kCoulombProductionNeeds),
    row("scatter", &launch_scatter, kScatterNeeds),
    row("gather", &launch_gather<GatherPlain>, kGatherNeeds),
    row("coarsened", &launch_gather<GatherCoarsened>, kGatherNeeds),
    row("coalesced", &launch_gather<GatherCoalesced>, kGatherNeeds),
};

static_assert(registry_matches_table(BackendKind::Cuda, VariantKind::Potential, kRegistry),
              "registry.cu rows must list the variant table's CUDA kernels in table order");

}  // namespace

std::span<const PotentialKernel> potential_kernels() { return kRegistry; }

const PotentialKernel& find_potential_kernel(const std::string& name) {
  const Variant& variant = find_variant(BackendKind::Cuda, VariantKind::Potential, name);
  return kRegistry[variant_index(BackendKind::Cuda, VariantKind::Potential, variant.name)];
}

void enqueue_potential(const PotentialKernel& kernel, const GridSpec& grid, const Slab& slab,
                       float min_r2, const GridAtom* d_atoms, std::size_t atom_count, float* d_slab,
                       StreamView stream, PairKind pair, float screen_c) {
  if (pair != PairKind::kCoulomb && !kernel.requirements.every_model)  // prepare() refuses it
    throw UsageError("--kernel " + std::string(kernel.name) + ": Coulomb term only");
  PotentialLaunch launch;
  launch.d_slab = d_slab;
  launch.nx = static_cast<int>(grid.nx());
  launch.ny = static_cast<int>(grid.ny());
  launch.z_begin = static_cast<int>(slab.z_begin);
  launch.z_count = static_cast<int>(slab.z_count);
  launch.hx = static_cast<float>(grid.spacing[0]);
  launch.hy = static_cast<float>(grid.spacing[1]);
  launch.hz = static_cast<float>(grid.spacing[2]);
  launch.min_r2 = min_r2;
  launch.pair = pair;
  launch.screen_c = screen_c;
  bool first = true;
  for (const AtomChunk& chunk : atom_chunks(atom_count, kernel.requirements.chunk_atoms)) {
    launch.d_atoms = d_atoms + chunk.begin;
    launch.atom_count = static_cast<int>(chunk.count);
    launch.accumulate = !first;
    kernel.launch(launch, stream);
    first = false;
  }
}

}  // namespace dcs::cuda::detail
