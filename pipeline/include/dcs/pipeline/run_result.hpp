// What a run reports for each map it was asked for.
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "dcs/map.hpp"
#include "dcs/types.hpp"

namespace dcs {

struct RunResult {
  std::string input;
  long long model = -1;              ///< --models each: the model of `input` mapped; else -1
  std::vector<std::string> outputs;  ///< files written
  std::size_t atoms = 0;
  std::size_t residues = 0;      ///< of the atoms read (System::residue_count(); 0: none named)
  std::size_t hetatm = 0;        ///< HETATM records among them
  MapMetadata metadata;          ///< grid, physics, stats, validation, provenance
  double compute_seconds = 0.0;  ///< compute + statistics
  double write_seconds = 0.0;    ///< all output files
  double total_seconds = 0.0;    ///< read to last byte written
  double evaluations = 0.0;      ///< atoms * grid points
  double busy_fraction = 0.0;    ///< workers' time in compute over wall time
  std::size_t workers = 0;       ///< devices (or CPU workers) used
  std::size_t slabs_computed = 0;
  std::size_t slabs_reused = 0;     ///< found complete in a partial file (--resume)
  std::size_t frames = 0;           ///< trajectory runs: frames averaged
  std::size_t frames_computed = 0;  ///< trajectory runs: frames computed by this run (not resumed)
  double decode_seconds = 0.0;      ///< trajectory runs: reading and fitting frames, summed
  std::size_t decode_threads = 0;   ///< trajectory runs: the threads sharing that work
  std::string cell_note;            ///< trajectory runs whose cell changes: how the map follows it
  std::size_t points = 0;           ///< points runs: values computed
  std::string points_description;   ///< points runs: where ("2562 vertices of surf.ply, ...")
  double colour_range = 0.0;        ///< points runs: the colour map's ±range
  /// Points runs of a list or mesh: the median and largest distance (Å) of the points to their
  /// nearest atom centre; negative when not measured (--at-atoms).
  double nearest_atom_median = -1.0, nearest_atom_max = -1.0;
  /// --at-atoms --periodic: ½ Σ qᵢ φᵢ, the system's Ewald electrostatic energy, kcal/mol (NaN:
  /// not computed).
  double energy_kcal_per_mol = std::numeric_limits<double>::quiet_NaN();
  bool skipped = false;   ///< --resume found the outputs complete
  bool attempted = true;  ///< false: a batch stopped (failure) before this input
  std::string error;      ///< non-empty when this input failed
  int exit_code = 0;
  int rank = -1;  ///< MPI batch: the rank that ran it (-1 without MPI)

  /// atoms, residues and hetatm from the atoms read.
  void count_atoms(const System& system) {
    atoms = system.size();
    residues = system.residue_count();
    hetatm = system.hetatm_count();
  }
};

}  // namespace dcs
