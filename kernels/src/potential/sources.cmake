set(DCS_POTENTIAL_SOURCES src/cuda_stub_placeholder.cpp)
