// Look-ups in the one variant table (dcs/variants.hpp).
#include "dcs/variants.hpp"

#include <string>
#include <vector>

#include "dcs/error.hpp"

namespace dcs {

const Variant& find_variant(BackendKind backend, VariantKind kind, std::string_view name) {
  const Variant* fallback = nullptr;
  std::string valid;
  for (const Variant& row : kVariantTable) {
    if (row.backend != backend || row.kind != kind) continue;
    if (name.empty() ? row.is_default : row.name == name) return row;
    valid += (valid.empty() ? "" : ", ") + std::string(row.name);
    if (row.is_default) fallback = &row;
  }
  const std::string what = kind == VariantKind::Potential ? "kernel" : "reduction";
  if (name.empty() && fallback == nullptr)
    throw UsageError("the " + std::string(backend_name(backend)) + " backend has no default " +
                     what);
  throw UsageError("unknown " + what + " '" + std::string(name) + "' for the " +
                   std::string(backend_name(backend)) + " backend (valid: " + valid + ")");
}

std::vector<VariantInfo> variant_infos(BackendKind backend) {
  std::vector<VariantInfo> infos;
  for (const Variant& row : kVariantTable)
    if (row.backend == backend)
      infos.push_back({std::string(row.name), std::string(row.summary),
                       std::string(backend_name(backend)), row.kind, row.is_default});
  return infos;
}

std::vector<VariantInfo> variant_infos(BackendKind backend, VariantKind kind) {
  std::vector<VariantInfo> infos;
  for (VariantInfo& info : variant_infos(backend))
    if (info.kind == kind) infos.push_back(std::move(info));
  return infos;
}

}  // namespace dcs
