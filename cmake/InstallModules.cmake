# The Lmod modulefile, installed where it finds the rest of the tree from its own location
# (<prefix>/share/pfc/modules/pfc.lua -> <prefix>/bin, <prefix>/lib, <prefix>/share/pfc/jobs).
install(FILES ${CMAKE_SOURCE_DIR}/modules/pfc.lua DESTINATION share/pfc/modules)
