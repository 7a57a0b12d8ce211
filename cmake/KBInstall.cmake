# `cmake --install build --prefix P`: the tools (kb-opt, kb-run, and kb-tune
# or any other tool target named here when it is built), the headers (the
# source tree's and the generated .h.inc and Version.h), kb's static
# libraries with an export set, and KBConfig.cmake, KBConfigVersion.cmake
# and KBTargets.cmake under lib/cmake/kb, so that find_package(KB) works.
# scripts/test-install.sh checks it with test/install/consumer/.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

foreach(tool kb-opt kb-run kb-tune)
  if(TARGET ${tool})
    install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()

set(KB_EXPORTED_LIBS KBRuntime)
foreach(lib KBDialect KBTransforms KBToGPU KBTarget)
  if(TARGET ${lib})
    list(APPEND KB_EXPORTED_LIBS ${lib})
  endif()
endforeach()
install(TARGETS ${KB_EXPORTED_LIBS} EXPORT KBTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/kb
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/kb
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.h.inc"
  PATTERN "CMakeFiles" EXCLUDE)

set(KB_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/kb)
install(EXPORT KBTargets NAMESPACE KB:: DESTINATION ${KB_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/KBConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/KBConfig.cmake
  INSTALL_DESTINATION ${KB_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_BINDIR)
# 0.x: a minor version may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/KBConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/KBConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/KBConfigVersion.cmake
  DESTINATION ${KB_CMAKE_DIR})
