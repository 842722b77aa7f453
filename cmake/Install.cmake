# What `cmake --install` adds beside the pfc executable so that the installed tree runs on a
# machine that has neither this checkout's ../shared nor every library of the build machine:
# the GPU test program, the golden reference files (arcface_torch in f64: the iresnet one, the
# parity one of the training semantics, and the seed's and today's several-step ones), and the
# Debian libraries that such machines lack - libturbojpeg, libpng, and ONNX with its protobuf
# (found through the executables' $ORIGIN/../lib rpath; a system copy earlier in LD_LIBRARY_PATH
# takes precedence).
if(TARGET pfc_gpu_tests)
  set_target_properties(pfc_gpu_tests PROPERTIES INSTALL_RPATH "$ORIGIN/../lib")
  install(TARGETS pfc_gpu_tests RUNTIME DESTINATION bin)
endif()

foreach(golden iresnet_arcface_torch_f64.h5 arcface_torch_parity_f64.h5 arcface_torch_seed_f64.h5
               arcface_torch_v2_dense_f64.h5)
  set(PFC_GOLDEN_FILE ${CMAKE_SOURCE_DIR}/../shared/golden/${golden})
  if(EXISTS ${PFC_GOLDEN_FILE})
    install(FILES ${PFC_GOLDEN_FILE} DESTINATION share/pfc/golden)
  endif()
endforeach()

# Installs the real file of a shared library under the soname the executables ask for
# (libturbojpeg.so.0 for .../libturbojpeg.so.0.2.0).
function(pfc_install_shared_library library)
  string(REGEX REPLACE "(\\.so\\.[0-9]+).*$" "\\1" soname "${library}")
  if(soname MATCHES "\\.so\\.[0-9]+$" AND EXISTS ${library})
    file(REAL_PATH ${library} real_file)
    get_filename_component(soname ${soname} NAME)
    install(FILES ${real_file} DESTINATION lib RENAME ${soname})
  endif()
endfunction()

foreach(target libjpeg-turbo::turbojpeg PNG::PNG onnx onnx_proto)
  if(TARGET ${target})
    get_target_property(location ${target} LOCATION)
    pfc_install_shared_library(${location})
  endif()
endforeach()
# FindProtobuf names the unversioned link (libprotobuf.so); the soname is its target's.
if(Protobuf_LIBRARY)
  file(REAL_PATH ${Protobuf_LIBRARY} protobuf_file)
  pfc_install_shared_library(${protobuf_file})
endif()
