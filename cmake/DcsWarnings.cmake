# dcs::warnings carries the project's warning flags; third-party targets never see them.
add_library(dcs_warnings INTERFACE)
add_library(dcs::warnings ALIAS dcs_warnings)
set(_dcs_cxx_warnings -Wall -Wextra -Wpedantic -Wshadow -Wconversion)
target_compile_options(dcs_warnings INTERFACE
  "$<$<COMPILE_LANGUAGE:CXX>:${_dcs_cxx_warnings}>"
  "$<$<COMPILE_LANG_AND_ID:CUDA,NVIDIA>:-Xcompiler=-Wall,-Wextra,-Wshadow>")
# GCC 12 at -O3 reports impossible -Wrestrict overlaps inside libstdc++'s std::string
# assignment from short literals (GCC bug 105329, fixed in 13); silence only that check there.
target_compile_options(dcs_warnings INTERFACE
  "$<$<AND:$<COMPILE_LANG_AND_ID:CXX,GNU>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,13>>:-Wno-restrict>")
if(DCS_WARNINGS_AS_ERRORS)
  target_compile_options(dcs_warnings INTERFACE
    "$<$<COMPILE_LANGUAGE:CXX>:-Werror>"
    "$<$<COMPILE_LANG_AND_ID:CUDA,NVIDIA>:-Werror=all-warnings;-Xcompiler=-Werror>")
endif()
# GCC 13 at -O3 reports an out-of-bounds memmove inside fmt 9's bigint (format_dragon, which
# formatting a double instantiates; /usr/include/fmt/format.h) from any file that formats one:
# a false positive in the library's header. It stays a warning there, not an error
# (after -Werror above).
target_compile_options(dcs_warnings INTERFACE
  "$<$<AND:$<COMPILE_LANG_AND_ID:CXX,GNU>,$<VERSION_GREATER_EQUAL:$<CXX_COMPILER_VERSION>,13>>:-Wno-error=array-bounds>")
