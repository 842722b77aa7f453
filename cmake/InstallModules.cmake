# The Lmod modulefile pfc/<version>.lua, from modules/pfc.lua.in with its paths and the
# libraries of this build written in (configure_file), so that it works wherever it is copied:
#  - for the build tree, now: <build>/modulefiles/pfc/<version>.lua (pfc from <build>/bin, the
#    scripts and configs from the checkout);
#  - for an installed tree, at `cmake --install` (whose --prefix counts):
#    <prefix>/${PFC_MODULEFILES_DIR}/pfc/<version>.lua.
set(PFC_MODULEFILES_DIR modulefiles CACHE STRING
    "where cmake --install writes pfc/<version>.lua: relative to the prefix, or absolute")
set(PFC_MODULE_TEMPLATE ${CMAKE_SOURCE_DIR}/modules/pfc.lua.in)
set(PFC_VERSION ${PROJECT_VERSION})

# The version in a header's "#define NAME 9" lines, one per part, joined with dots.
function(pfc_header_version header out)
  set(parts)
  foreach(macro ${ARGN})
    file(STRINGS ${header} line REGEX "^#define ${macro} +[0-9]+")
    string(REGEX REPLACE "^#define ${macro} +([0-9]+).*$" "\\1" number "${line}")
    list(APPEND parts "${number}")
  endforeach()
  list(JOIN parts "." version)
  set(${out} ${version} PARENT_SCOPE)
endfunction()

# The MPI library and its version, from its mpi.h (Open MPI, or MPICH and its derivatives).
set(PFC_MPI_MODULE mpi)
set(PFC_MPI_NAME "an MPI ${MPI_C_VERSION} library")
set(PFC_MPI_VERSION ${MPI_C_VERSION})
set(PFC_MPI_HEADER ${MPI_C_HEADER_DIR}/mpi.h)
if(EXISTS ${PFC_MPI_HEADER})
  file(STRINGS ${PFC_MPI_HEADER} PFC_OMPI REGEX "^#define OMPI_MAJOR_VERSION ")
  file(STRINGS ${PFC_MPI_HEADER} PFC_MPICH REGEX "^#define MPICH_VERSION ")
  if(PFC_OMPI)
    pfc_header_version(${PFC_MPI_HEADER} PFC_MPI_VERSION
                       OMPI_MAJOR_VERSION OMPI_MINOR_VERSION OMPI_RELEASE_VERSION)
    set(PFC_MPI_MODULE openmpi)
    set(PFC_MPI_NAME "Open MPI ${PFC_MPI_VERSION}")
  elseif(PFC_MPICH)
    string(REGEX MATCH "[0-9]+(\\.[0-9]+)*" PFC_MPI_VERSION "${PFC_MPICH}")
    set(PFC_MPI_MODULE mpich)
    set(PFC_MPI_NAME "MPICH ${PFC_MPI_VERSION}")
  endif()
endif()
set(PFC_MPI_DESCRIPTION "${PFC_MPI_NAME} (${MPI_C_HEADER_DIR})")
set(PFC_HDF5_VERSION ${HDF5_VERSION})
if(HDF5_IS_PARALLEL)
  set(PFC_HDF5_KIND parallel)
else()
  set(PFC_HDF5_KIND serial)
endif()
list(GET HDF5_C_INCLUDE_DIRS 0 PFC_HDF5_INCLUDE)
set(PFC_HDF5_DESCRIPTION "HDF5 ${HDF5_VERSION}, ${PFC_HDF5_KIND} (${PFC_HDF5_INCLUDE})")

if(PFC_HAVE_CUDA)
  set(PFC_CUDA_VERSION ${CUDAToolkit_VERSION_MAJOR}.${CUDAToolkit_VERSION_MINOR})
  get_filename_component(PFC_CUDA_ROOT ${CUDAToolkit_BIN_DIR} DIRECTORY)
  pfc_header_version(${CUDNN_INCLUDE_DIR}/cudnn_version.h PFC_CUDNN_VERSION
                     CUDNN_MAJOR CUDNN_MINOR CUDNN_PATCHLEVEL)
  pfc_header_version(${NCCL_INCLUDE_DIR}/nccl.h PFC_NCCL_VERSION NCCL_MAJOR NCCL_MINOR NCCL_PATCH)
  string(CONCAT PFC_CUDA_DESCRIPTION "CUDA ${CUDAToolkit_VERSION} (${PFC_CUDA_ROOT}), cuDNN "
                                     "${PFC_CUDNN_VERSION}, NCCL ${PFC_NCCL_VERSION}")
else()
  set(PFC_CUDA_VERSION none)
  set(PFC_CUDA_DESCRIPTION "none: a CPU-only build")
endif()

# The build tree's modulefile.
set(PFC_MODULE_WHERE "the build tree ${CMAKE_BINARY_DIR}")
set(PFC_MODULE_ROOT ${CMAKE_SOURCE_DIR})
set(PFC_MODULE_BIN ${CMAKE_BINARY_DIR}/bin)
set(PFC_MODULE_JOBS ${CMAKE_SOURCE_DIR}/jobs)
set(PFC_MODULE_INPUT ${CMAKE_SOURCE_DIR}/input)
configure_file(${PFC_MODULE_TEMPLATE}
               ${CMAKE_BINARY_DIR}/modulefiles/pfc/${PROJECT_VERSION}.lua @ONLY)

# The installed tree's, written by the install script: the prefix is known only then.
set(PFC_MODULE_FIXED)
foreach(name PFC_VERSION PFC_MODULEFILES_DIR PFC_MPI_DESCRIPTION PFC_MPI_MODULE PFC_MPI_VERSION
             PFC_CUDA_DESCRIPTION PFC_CUDA_VERSION PFC_HDF5_DESCRIPTION PFC_HDF5_VERSION)
  string(APPEND PFC_MODULE_FIXED "set(${name} [==[${${name}}]==])\n")
endforeach()
install(CODE "${PFC_MODULE_FIXED}
get_filename_component(prefix \"\${CMAKE_INSTALL_PREFIX}\" ABSOLUTE)
set(PFC_MODULE_WHERE \"installed in \${prefix}\")
set(PFC_MODULE_ROOT \"\${prefix}\")
set(PFC_MODULE_BIN \"\${prefix}/bin\")
set(PFC_MODULE_JOBS \"\${prefix}/share/pfc/jobs\")
set(PFC_MODULE_INPUT \"\${prefix}/share/pfc/input\")
if(IS_ABSOLUTE \"\${PFC_MODULEFILES_DIR}\")
  set(modulefiles \"\${PFC_MODULEFILES_DIR}\")
else()
  set(modulefiles \"\${prefix}/\${PFC_MODULEFILES_DIR}\")
endif()
set(modulefile \"\$ENV{DESTDIR}\${modulefiles}/pfc/\${PFC_VERSION}.lua\")
message(STATUS \"Installing: \${modulefile}\")
configure_file([==[${PFC_MODULE_TEMPLATE}]==] \"\${modulefile}\" @ONLY)
")
