# OpenMP (the CPU backend's threads, one knob: OMP_NUM_THREADS) and oneDNN (its convolutions).
#
# PFC_ONEDNN=AUTO uses oneDNN when it is found, ON makes a missing or unusable one a configure
# error, OFF builds the reference convolutions only. oneDNN is found from, first to last:
# DNNL_ROOT / ONEDNN_ROOT (CMake or environment variables), DNNLROOT (oneAPI's setvars.sh),
# EasyBuild's EBROOTONEDNN, CMAKE_PREFIX_PATH and the system (Debian's libdnnl-dev). Its headers
# and library are looked up directly rather than through dnnl-config.cmake, which on Debian
# insists on the OpenCL headers for a GPU runtime pfc does not use. It must be oneDNN 2.x (the
# API pfc is written against) built with the OpenMP runtime, so that its threads and pfc's are
# the same pool.
find_package(OpenMP REQUIRED COMPONENTS CXX)

set(PFC_HAVE_ONEDNN OFF)
set(PFC_ONEDNN_STATUS "off (PFC_ONEDNN=OFF): the CPU convolutions run on the reference loops")
if(NOT PFC_ONEDNN STREQUAL "OFF")
  set(roots ${DNNL_ROOT} ${ONEDNN_ROOT} $ENV{DNNL_ROOT} $ENV{ONEDNN_ROOT} $ENV{DNNLROOT}
            $ENV{EBROOTONEDNN})
  if(roots)
    find_path(DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp PATHS ${roots} PATH_SUFFIXES include
              NO_DEFAULT_PATH)
    find_library(DNNL_LIBRARY dnnl PATHS ${roots} PATH_SUFFIXES lib64 lib lib/x86_64-linux-gnu
                 NO_DEFAULT_PATH)
  endif()
  find_path(DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp)
  find_library(DNNL_LIBRARY dnnl)

  set(why "")
  if(NOT DNNL_INCLUDE_DIR OR NOT DNNL_LIBRARY)
    set(why "not found (install libdnnl-dev, or set DNNL_ROOT)")
  else()
    file(STRINGS ${DNNL_INCLUDE_DIR}/oneapi/dnnl/dnnl_version.h lines
         REGEX "^#define DNNL_VERSION_(MAJOR|MINOR|PATCH) ")
    string(REGEX REPLACE ".*_MAJOR +([0-9]+).*" "\\1" major "${lines}")
    string(REGEX REPLACE ".*_MINOR +([0-9]+).*" "\\1" minor "${lines}")
    string(REGEX REPLACE ".*_PATCH +([0-9]+).*" "\\1" patch "${lines}")
    set(PFC_ONEDNN_VERSION ${major}.${minor}.${patch})
    file(STRINGS ${DNNL_INCLUDE_DIR}/oneapi/dnnl/dnnl_config.h runtime
         REGEX "^#define DNNL_CPU_RUNTIME ")
    if(NOT major EQUAL 2)
      set(why "${PFC_ONEDNN_VERSION} at ${DNNL_LIBRARY}: pfc is written for oneDNN 2.x")
    elseif(NOT runtime MATCHES "DNNL_RUNTIME_OMP")
      set(why "${PFC_ONEDNN_VERSION} at ${DNNL_LIBRARY} is not built with the OpenMP runtime")
    endif()
  endif()

  if(why STREQUAL "")
    set(PFC_HAVE_ONEDNN ON)
    set(PFC_ONEDNN_STATUS "${PFC_ONEDNN_VERSION} (${DNNL_LIBRARY})")
  elseif(PFC_ONEDNN STREQUAL "ON")
    message(FATAL_ERROR "PFC_ONEDNN=ON but oneDNN is ${why}")
  else()
    set(PFC_ONEDNN_STATUS "${why}: the CPU convolutions run on the reference loops")
  endif()
endif()
message(STATUS "pfc: oneDNN ${PFC_ONEDNN_STATUS}; OpenMP ${OpenMP_CXX_VERSION}")
