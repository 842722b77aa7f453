# What `cmake --install` adds beside the pfc executable so that the installed tree runs on a
# machine that has neither this source tree nor every library of the build machine:
# the GPU test program, the golden reference files of tests/golden (arcface_torch in f64: the
# iresnet one, the parity one of the training semantics, and the seed's several-step one), and
# the Debian libraries that such machines lack or hold in another release - fmt, spdlog,
# libturbojpeg, libpng, libzip, OpenMP's libgomp, HDF5 with libsz and libaec, and ONNX with its
# protobuf
# (found through the executables' $ORIGIN/../lib rpath; a system copy earlier in
# LD_LIBRARY_PATH takes precedence, and a shipped library's own dependencies are found only
# through LD_LIBRARY_PATH).
if(TARGET pfc_gpu_tests)
  set_target_properties(pfc_gpu_tests PROPERTIES INSTALL_RPATH "$ORIGIN/../lib")
  install(TARGETS pfc_gpu_tests RUNTIME DESTINATION bin)
endif()

# Today's several-step file (arcface_torch_v2_dense_f64.h5, 10 MB) stays out: the installed tree
# must travel to a GPU machine within 64 MiB, and what it would check there, the sparse-gradient
# optimiser kernels and the dense update, the GPU twin tests compare with the CPU backend, which
# passes that file on every rank count.
foreach(golden iresnet_arcface_torch_f64.h5 arcface_torch_parity_f64.h5 arcface_torch_seed_f64.h5)
  install(FILES ${CMAKE_SOURCE_DIR}/tests/golden/${golden} DESTINATION share/pfc/golden)
endforeach()

# Installs the real file of a shared library under the soname the executables ask for
# (libturbojpeg.so.0 for .../libturbojpeg.so.0.2.0, libpng16.so.16 for the link libpng.so,
# libspdlog.so.1.10 for libspdlog.so.1.10.0): the library's own SONAME, read with objdump; where
# none can be read, the file name up to its first version number.
function(pfc_install_shared_library library)
  if(NOT EXISTS ${library})
    return()
  endif()
  file(REAL_PATH ${library} real_file)
  get_filename_component(real_name ${real_file} NAME)
  set(soname "")
  if(CMAKE_OBJDUMP)
    execute_process(COMMAND ${CMAKE_OBJDUMP} -p ${real_file} OUTPUT_VARIABLE headers
                    ERROR_QUIET RESULT_VARIABLE failed)
    if(NOT failed AND headers MATCHES "SONAME +([^\n ]+)")
      set(soname ${CMAKE_MATCH_1})
    endif()
  endif()
  if(NOT soname)
    string(REGEX REPLACE "(\\.so\\.[0-9]+).*$" "\\1" soname "${real_name}")
  endif()
  if(soname MATCHES "\\.so(\\.[0-9]+)+$")
    install(FILES ${real_file} DESTINATION lib RENAME ${soname})
  endif()
endfunction()

# oneDNN (40 MB) is not among them: a tree for such a machine is built without it
# (-DPFC_ONEDNN=OFF, tests/gpu/README.md), where the CPU backend serves only as the reference.
# The tree must also stay within the 64 MiB the GPU machine's call carries (tests/gpu/README.md:
# one GPU architecture, stripped).
foreach(target fmt::fmt spdlog::spdlog libjpeg-turbo::turbojpeg PNG::PNG onnx onnx_proto)
  if(TARGET ${target})
    get_target_property(location ${target} LOCATION)
    pfc_install_shared_library(${location})
  endif()
endforeach()
foreach(library ${LIBZIP_LIBRARY} ${OpenMP_CXX_LIBRARIES})
  pfc_install_shared_library(${library})
endforeach()
# HDF5 1.10 aborts the process at the first file it opens when the library it finds at run time
# is another release than the headers pfc was compiled with (H5check_version): a machine whose
# own serial HDF5 1.10 differs (the H200's Ubuntu) would kill every pfc command that writes
# HDF5. The installed tree carries the one pfc was built with, and its own dependencies, szip's
# libsz and the libaec behind it; tests/gpu/run_on_device.sh puts the tree's lib folder first.
get_filename_component(pfc_libsz_folder "${HDF5_C_LIBRARY_sz}" DIRECTORY)
find_library(PFC_LIBAEC NAMES aec HINTS ${pfc_libsz_folder})
foreach(library ${HDF5_C_LIBRARY_hdf5} ${HDF5_C_LIBRARY_sz} ${PFC_LIBAEC})
  pfc_install_shared_library(${library})
endforeach()
# FindProtobuf names the unversioned link (libprotobuf.so); the soname is its target's.
if(Protobuf_LIBRARY)
  file(REAL_PATH ${Protobuf_LIBRARY} protobuf_file)
  pfc_install_shared_library(${protobuf_file})
endif()
