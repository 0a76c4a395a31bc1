// `dcs kernels` and `dcs devices`: the variant table and the devices, one line each.
#pragma once

namespace dcs::app {

int list_kernels();
int list_devices();

}  // namespace dcs::app
