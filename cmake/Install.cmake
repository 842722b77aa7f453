# What `cmake --install` adds beside the pfc executable so that the installed tree runs on a
# machine that has neither this checkout's ../shared nor every library of the build machine:
# the GPU test program, the golden reference file (arcface_torch in f64), and libturbojpeg
# (found through the executables' $ORIGIN/../lib rpath; a system copy earlier in
# LD_LIBRARY_PATH takes precedence).
if(TARGET pfc_gpu_tests)
  set_target_properties(pfc_gpu_tests PROPERTIES INSTALL_RPATH "$ORIGIN/../lib")
  install(TARGETS pfc_gpu_tests RUNTIME DESTINATION bin)
endif()

set(PFC_GOLDEN_FILE ${CMAKE_SOURCE_DIR}/../shared/golden/iresnet_arcface_torch_f64.h5)
if(EXISTS ${PFC_GOLDEN_FILE})
  install(FILES ${PFC_GOLDEN_FILE} DESTINATION share/pfc/golden)
endif()

if(TARGET libjpeg-turbo::turbojpeg)
  get_target_property(PFC_TURBOJPEG libjpeg-turbo::turbojpeg LOCATION)
  # The real file, installed under the soname the executables ask for (libturbojpeg.so.0).
  string(REGEX REPLACE "(\\.so\\.[0-9]+).*$" "\\1" PFC_TURBOJPEG_SONAME "${PFC_TURBOJPEG}")
  if(PFC_TURBOJPEG_SONAME MATCHES "\\.so\\.[0-9]+$" AND EXISTS ${PFC_TURBOJPEG})
    file(REAL_PATH ${PFC_TURBOJPEG} PFC_TURBOJPEG_FILE)
    get_filename_component(PFC_TURBOJPEG_SONAME ${PFC_TURBOJPEG_SONAME} NAME)
    install(FILES ${PFC_TURBOJPEG_FILE} DESTINATION lib RENAME ${PFC_TURBOJPEG_SONAME})
  endif()
endif()
