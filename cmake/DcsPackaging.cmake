# `cpack -G DEB` (in the build directory): a Debian package of what `cmake --install` installs
# (bin/dcs, share/dcs/python/, the man page, the README), for /usr. Library dependencies come
# from dpkg-shlibdeps (dpkg-dev); `dcs preview` and python/dcs_map.py need Python with h5py and
# numpy (and matplotlib to draw), recommended rather than required by the computing binary. The
# MPI build is the package dcs-mpi, which replaces dcs (the same /usr/bin/dcs).
set(CPACK_GENERATOR "DEB")
set(CPACK_SOURCE_GENERATOR "")
set(CPACK_PACKAGE_NAME "dcs")
if(DCS_ENABLE_MPI)
  set(CPACK_PACKAGE_NAME "dcs-mpi")
  set(CPACK_DEBIAN_PACKAGE_CONFLICTS "dcs")
  set(CPACK_DEBIAN_PACKAGE_REPLACES "dcs")
  set(CPACK_DEBIAN_PACKAGE_PROVIDES "dcs")
endif()
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "electrostatic potential maps by direct Coulomb summation")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
    "dcs computes the electrostatic potential of a molecule (PQR) on a regular 3-D grid by exact "
    "Coulomb summation, on NVIDIA GPUs or all CPU cores, and writes HDF5, OpenDX and MRC maps "
    "that ChimeraX, ParaView, PyMOL and VMD open.")
set(CPACK_PACKAGE_CONTACT "dcs developers <dcs@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME "DEB-DEFAULT")
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3, python3-h5py, python3-numpy, python3-matplotlib")
include(CPack)
