# dcs::warnings carries the project's warning flags; third-party targets never see them.
add_library(dcs_warnings INTERFACE)
add_library(dcs::warnings ALIAS dcs_warnings)
set(_dcs_cxx_warnings -Wall -Wextra -Wpedantic -Wshadow -Wconversion)
target_compile_options(dcs_warnings INTERFACE
  "$<$<COMPILE_LANGUAGE:CXX>:${_dcs_cxx_warnings}>"
  "$<$<COMPILE_LANG_AND_ID:CUDA,NVIDIA>:-Xcompiler=-Wall,-Wextra,-Wshadow>")
if(DCS_WARNINGS_AS_ERRORS)
  target_compile_options(dcs_warnings INTERFACE
    "$<$<COMPILE_LANGUAGE:CXX>:-Werror>"
    "$<$<COMPILE_LANG_AND_ID:CUDA,NVIDIA>:-Werror=all-warnings;-Xcompiler=-Werror>")
endif()
