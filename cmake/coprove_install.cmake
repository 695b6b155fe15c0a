# Install and export, so that another CMake project can find_package(coprove) and link
# coprove::runtime, coprove::pinned, coprove::field, coprove::r1cs, coprove::groth16, coprove::engine,
# coprove::service (and coprove::cuda where built).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
get_property(_targets GLOBAL PROPERTY COPROVE_EXPORTED_TARGETS)
install(TARGETS ${_targets} EXPORT coproveTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(_dir runtime pinned prover/field prover/r1cs prover/groth16 prover/engine prover/service cuda)
  if(EXISTS ${PROJECT_SOURCE_DIR}/${_dir}/include AND (NOT _dir STREQUAL "cuda" OR COPROVE_HAVE_CUDA))
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/${_dir}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  endif()
endforeach()
install(EXPORT coproveTargets NAMESPACE coprove:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/coprove)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/coproveConfig.cmake.in
  ${PROJECT_BINARY_DIR}/coproveConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/coprove)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/coproveConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/coproveConfig.cmake ${PROJECT_BINARY_DIR}/coproveConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/coprove)
