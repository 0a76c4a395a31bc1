// placeholder until the CUDA backend lands
