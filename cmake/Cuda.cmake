# Finds nvcc, the CUDA runtime and cuBLAS, cuDNN (9 or later) and NCCL. PFC_HAVE_CUDA is ON
# when all are there. PFC_CUDA=AUTO builds CPU-only otherwise (the configure output names what
# is missing, and `pfc info` says the build is CPU-only); PFC_CUDA=ON makes a missing one a
# configure error naming it.
#
# cuDNN and NCCL are looked for where cluster modules announce them, first to last:
# CUDNN_ROOT / NCCL_ROOT (CMake or environment variables), CUDNN_HOME / NCCL_HOME and
# EasyBuild's EBROOTCUDNN / EBROOTNCCL (environment), CMAKE_PREFIX_PATH and the system, and
# the CUDA toolkit's own folders.
#
# GPU code: CMAKE_CUDA_ARCHITECTURES as usual (e.g. -DCMAKE_CUDA_ARCHITECTURES=90 for one
# cluster's GPUs). By default, machine code for Volta (70: V100), Turing (75: T4), Ampere (80:
# A100; also runs on the 86/89 parts) and Hopper (90: H100, H200), each where this nvcc can
# still build it, plus PTX of the newest, which the driver compiles for later GPUs. CUDA 13
# dropped Volta: V100 clusters need a CUDA 12.x or older toolkit.
set(PFC_HAVE_CUDA OFF)

# pfc_find_cuda_library(PREFIX HEADER LIBRARY NAME): PREFIX_INCLUDE_DIR, PREFIX_LIBRARY and
# PREFIX_VERSION ("" when the header names none), from the roots above, then the default
# places, then the toolkit.
function(pfc_find_cuda_library prefix header library)
  set(roots ${${prefix}_ROOT} $ENV{${prefix}_ROOT} $ENV{${prefix}_HOME} $ENV{EBROOT${prefix}})
  if(roots)
    find_path(${prefix}_INCLUDE_DIR ${header} PATHS ${roots} PATH_SUFFIXES include
              NO_DEFAULT_PATH)
    find_library(${prefix}_LIBRARY ${library} PATHS ${roots}
                 PATH_SUFFIXES lib64 lib lib/x86_64-linux-gnu NO_DEFAULT_PATH)
  endif()
  find_path(${prefix}_INCLUDE_DIR ${header} HINTS ${CUDAToolkit_INCLUDE_DIRS})
  find_library(${prefix}_LIBRARY ${library} HINTS ${CUDAToolkit_LIBRARY_DIR})
  set(version "")
  if(${prefix}_INCLUDE_DIR)
    # cuDNN keeps its version in cudnn_version.h, NCCL in nccl.h.
    foreach(file ${prefix}_version.h ${header})
      string(TOLOWER ${file} file)
      set(path ${${prefix}_INCLUDE_DIR}/${file})
      if(version STREQUAL "" AND EXISTS ${path})
        file(STRINGS ${path} lines REGEX "^#define ${prefix}_(MAJOR|MINOR|PATCH|PATCHLEVEL) ")
        string(REGEX REPLACE ".*_MAJOR +([0-9]+).*" "\\1" major "${lines}")
        string(REGEX REPLACE ".*_MINOR +([0-9]+).*" "\\1" minor "${lines}")
        string(REGEX REPLACE ".*_PATCH(LEVEL)? +([0-9]+).*" "\\2" patch "${lines}")
        if(major MATCHES "^[0-9]+$" AND minor MATCHES "^[0-9]+$" AND patch MATCHES "^[0-9]+$")
          set(version ${major}.${minor}.${patch})
        endif()
      endif()
    endforeach()
  endif()
  set(${prefix}_VERSION "${version}" PARENT_SCOPE)
endfunction()

# pfc_buildable_cuda_codes(OUT): the sm_NN this nvcc builds (its --list-gpu-code), as numbers;
# empty when it cannot tell (an nvcc too old to list them).
function(pfc_buildable_cuda_codes out)
  execute_process(COMMAND ${CMAKE_CUDA_COMPILER} --list-gpu-code OUTPUT_VARIABLE codes
                  RESULT_VARIABLE status ERROR_QUIET)
  set(numbers)
  if(status EQUAL 0)
    string(REGEX MATCHALL "sm_[0-9]+" codes "${codes}")
    string(REPLACE "sm_" "" numbers "${codes}")
  endif()
  set(${out} ${numbers} PARENT_SCOPE)
endfunction()

# pfc_default_cuda_architectures(OUT BUILDABLE...): the default list described above.
function(pfc_default_cuda_architectures out)
  set(chosen)
  foreach(arch 70 75 80 90)
    if(NOT ARGN OR arch IN_LIST ARGN)
      list(APPEND chosen ${arch})
    endif()
  endforeach()
  if(NOT chosen)
    message(FATAL_ERROR "pfc: ${CMAKE_CUDA_COMPILER} builds none of sm_70, 75, 80, 90; set "
                        "CMAKE_CUDA_ARCHITECTURES for your GPUs")
  endif()
  if(ARGN AND NOT 70 IN_LIST ARGN)
    message(STATUS "pfc: this nvcc cannot build for Volta (sm_70, e.g. V100): V100 clusters "
                   "need pfc built with a CUDA 12.x or older toolkit")
  endif()
  list(POP_BACK chosen newest)
  list(TRANSFORM chosen APPEND "-real")
  list(APPEND chosen ${newest})  # "90" is machine code and PTX
  set(${out} ${chosen} PARENT_SCOPE)
endfunction()

if(NOT PFC_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  set(pfc_cuda_missing)
  if(NOT CMAKE_CUDA_COMPILER)
    list(APPEND pfc_cuda_missing "nvcc (put it on PATH or set CMAKE_CUDA_COMPILER)")
  else()
    find_package(CUDAToolkit QUIET)
    if(NOT CUDAToolkit_FOUND OR NOT TARGET CUDA::cublas)
      list(APPEND pfc_cuda_missing "the CUDA toolkit's runtime and cuBLAS (CUDAToolkit_ROOT)")
    endif()
    pfc_find_cuda_library(CUDNN cudnn.h cudnn)
    pfc_find_cuda_library(NCCL nccl.h nccl)
    if(NOT EXISTS "${CUDNN_INCLUDE_DIR}/cudnn.h" OR NOT EXISTS "${CUDNN_LIBRARY}")
      list(APPEND pfc_cuda_missing "cuDNN (cudnn.h and libcudnn: set CUDNN_ROOT)")
    elseif(NOT CUDNN_VERSION VERSION_GREATER_EQUAL 9)
      list(APPEND pfc_cuda_missing
           "cuDNN 9 or later (found '${CUDNN_VERSION}' in ${CUDNN_INCLUDE_DIR}: set CUDNN_ROOT)")
    endif()
    if(NOT EXISTS "${NCCL_INCLUDE_DIR}/nccl.h" OR NOT EXISTS "${NCCL_LIBRARY}")
      list(APPEND pfc_cuda_missing "NCCL (nccl.h and libnccl: set NCCL_ROOT)")
    endif()
  endif()
  if(NOT pfc_cuda_missing)
    set(PFC_HAVE_CUDA ON)
  elseif(PFC_CUDA STREQUAL "ON")
    list(JOIN pfc_cuda_missing "; " pfc_cuda_missing)
    message(FATAL_ERROR "pfc: PFC_CUDA=ON but not found: ${pfc_cuda_missing}")
  else()
    list(JOIN pfc_cuda_missing "; " pfc_cuda_missing)
    message(STATUS "pfc: no CUDA backend; not found: ${pfc_cuda_missing}")
  endif()
endif()

if(PFC_HAVE_CUDA)
  pfc_buildable_cuda_codes(pfc_buildable)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    pfc_default_cuda_architectures(CMAKE_CUDA_ARCHITECTURES ${pfc_buildable})
  elseif(pfc_buildable)
    # Said here, before nvcc's own "Unsupported gpu architecture" deep in a compiler check.
    foreach(arch ${CMAKE_CUDA_ARCHITECTURES})
      string(REGEX REPLACE "-(real|virtual)$" "" number "${arch}")
      if(number MATCHES "^[0-9]+$" AND NOT number IN_LIST pfc_buildable)
        list(JOIN pfc_buildable ", " pfc_buildable)
        message(FATAL_ERROR "pfc: CMAKE_CUDA_ARCHITECTURES asks for ${arch}, which this nvcc "
                            "(${CMAKE_CUDA_COMPILER}) cannot build; it builds ${pfc_buildable}. "
                            "Volta (70, V100) needs a CUDA 12.x or older toolkit.")
      endif()
    endforeach()
  endif()
  enable_language(CUDA)
  # CMake 3.25 knows no C++20 flag for nvcc; the kernels (.cu) need only C++17.
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  add_library(pfc_cuda_deps INTERFACE)
  target_include_directories(pfc_cuda_deps INTERFACE ${CUDNN_INCLUDE_DIR} ${NCCL_INCLUDE_DIR})
  # dl: library_versions.cpp asks the loader which file each library came from.
  target_link_libraries(pfc_cuda_deps INTERFACE CUDA::cudart CUDA::cublas CUDA::cublasLt
                                                ${CUDNN_LIBRARY} ${NCCL_LIBRARY} ${CMAKE_DL_LIBS})
  # Read by tests/integration/cuda_architectures.sh.
  set(PFC_CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}" CACHE INTERNAL "GPU code built")
  set(PFC_CUDA_COMPILER "${CMAKE_CUDA_COMPILER}" CACHE INTERNAL "nvcc")
  message(STATUS "pfc: CUDA backend ON: CUDA ${CUDAToolkit_VERSION}, cuDNN ${CUDNN_VERSION} "
                 "(${CUDNN_LIBRARY}), NCCL ${NCCL_VERSION} (${NCCL_LIBRARY}); GPU code for "
                 "${CMAKE_CUDA_ARCHITECTURES}")
else()
  unset(PFC_CUDA_ARCHITECTURES CACHE)
  message(STATUS "pfc: CUDA backend OFF (CPU-only build)")
endif()
