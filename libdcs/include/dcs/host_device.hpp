// DCS_HD marks functions compiled for both the host and the device: __host__ __device__ under
// nvcc, nothing in plain C++ (so dcs::core never needs a CUDA header).
#pragma once

#if defined(__CUDACC__)
#define DCS_HD __host__ __device__
#else
#define DCS_HD
#endif
