# The field's libraries, all from Debian. fmt and spdlog are linked as the compiled libraries
# Debian ships: used header-only, every translation unit that formats or logs would compile
# their implementation again, which took most of the build's time. The installed tree carries
# both (cmake/Install.cmake), so it still runs on machines that lack them. toml++ stays
# header-only (Debian ships no compiled part) and only the config files include it.
find_package(MPI REQUIRED COMPONENTS C)
set(HDF5_PREFER_PARALLEL OFF)
find_package(HDF5 REQUIRED COMPONENTS C)
# metrics.h5 is read live through SWMR with the file lock turned off per file
# (H5Pset_file_locking), which HDF5 has since 1.10.7.
if(HDF5_VERSION VERSION_LESS 1.10.7)
  message(FATAL_ERROR "pfc needs HDF5 >= 1.10.7; found ${HDF5_VERSION} (${HDF5_C_INCLUDE_DIRS})")
endif()
find_package(CLI11 REQUIRED)
find_package(tomlplusplus REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(Threads REQUIRED)
find_package(libjpeg-turbo REQUIRED)
find_package(PNG REQUIRED)
# ONNX export (libonnx-dev): its CMake targets link protobuf::libprotobuf, which FindProtobuf
# defines, so protobuf is looked up first.
find_package(Protobuf REQUIRED)
find_package(ONNX REQUIRED CONFIG)
# PyTorch's model files (torch.save writes a zip archive) are read through libzip. Found by
# its header and library: Debian's libzip-dev ships a CMake config that also demands the
# command-line tools of other packages (zipcmp, zipmerge, ziptool).
find_path(LIBZIP_INCLUDE_DIR zip.h REQUIRED)
find_library(LIBZIP_LIBRARY zip REQUIRED)

set(BLA_VENDOR OpenBLAS)
find_package(BLAS REQUIRED)
find_path(CBLAS_INCLUDE_DIR cblas.h
          PATH_SUFFIXES openblas-pthread openblas x86_64-linux-gnu/openblas-pthread
          HINTS /usr/include/x86_64-linux-gnu/openblas-pthread REQUIRED)

add_library(pfc_deps INTERFACE)
target_include_directories(pfc_deps INTERFACE ${HDF5_C_INCLUDE_DIRS} ${CBLAS_INCLUDE_DIR}
                                             ${LIBZIP_INCLUDE_DIR})
target_compile_definitions(pfc_deps INTERFACE ${HDF5_C_DEFINITIONS} TOML_HEADER_ONLY=1)
# Only MPI's C API is used: keep <mpi.h> from pulling in the deprecated C++ bindings, whose
# symbols live in a library (libmpi_cxx) that MPI::MPI_C does not link.
target_compile_definitions(pfc_deps INTERFACE OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
target_link_libraries(pfc_deps INTERFACE
  MPI::MPI_C ${HDF5_C_LIBRARIES} CLI11::CLI11
  spdlog::spdlog fmt::fmt ${BLAS_LIBRARIES}
  libjpeg-turbo::turbojpeg PNG::PNG onnx ${LIBZIP_LIBRARY} Threads::Threads)
