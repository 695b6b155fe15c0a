# Small helpers shared by the folders: one library target per folder, one test executable per test
# folder, one executable per benchmark.

# coprove_library(NAME <name> [DEPS ...]): target coprove_<name>, alias coprove::<name>, sources
# globbed from src/, public headers in include/.
function(coprove_library)
  cmake_parse_arguments(ARG "" "NAME" "DEPS;PRIVATE_DEPS;SOURCES" ${ARGN})
  file(GLOB _srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/*.cpp ${CMAKE_CURRENT_SOURCE_DIR}/src/*.cu)
  if(NOT _srcs AND NOT ARG_SOURCES)
    message(FATAL_ERROR "coprove_library(${ARG_NAME}): no sources in ${CMAKE_CURRENT_SOURCE_DIR}/src")
  endif()
  add_library(coprove_${ARG_NAME} ${_srcs} ${ARG_SOURCES})
  add_library(coprove::${ARG_NAME} ALIAS coprove_${ARG_NAME})
  set_target_properties(coprove_${ARG_NAME} PROPERTIES EXPORT_NAME ${ARG_NAME} OUTPUT_NAME coprove_${ARG_NAME})
  target_include_directories(coprove_${ARG_NAME} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:include>)
  target_compile_features(coprove_${ARG_NAME} PUBLIC cxx_std_20)
  target_link_libraries(coprove_${ARG_NAME} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  set_property(GLOBAL APPEND PROPERTY COPROVE_EXPORTED_TARGETS coprove_${ARG_NAME})
endfunction()

# coprove_test(NAME <name> DEPS ... LABEL <label>): one Catch2 executable from every *_test.cpp of
# the current folder, its test cases registered with ctest.
function(coprove_test)
  cmake_parse_arguments(ARG "" "NAME;LABEL" "DEPS;SOURCES" ${ARGN})
  file(GLOB _srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cpp ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cu)
  if(NOT _srcs)
    return()
  endif()
  # Catch2's main is compiled once per build, not once per test executable, and without
  # optimisation: it is the runner, not code under test, and optimising its single header under
  # the sanitizers took minutes of every CI run.
  if(NOT TARGET coprove_catch_main)
    add_library(coprove_catch_main OBJECT ${PROJECT_SOURCE_DIR}/tests/catch_main.cpp)
    target_link_libraries(coprove_catch_main PRIVATE Catch2::Catch2)
    target_compile_options(coprove_catch_main PRIVATE -O0)
  endif()
  add_executable(${ARG_NAME} ${_srcs} ${ARG_SOURCES} $<TARGET_OBJECTS:coprove_catch_main>)
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} Catch2::Catch2)
  target_include_directories(${ARG_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  # One label per executable (a list would not survive catch_discover_tests' argument passing).
  catch_discover_tests(${ARG_NAME} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS ${ARG_LABEL})
endfunction()

# coprove_bench(<file>): an executable named after the file; benchmarks link every library built.
function(coprove_bench file)
  get_filename_component(_name ${file} NAME_WE)
  add_executable(${_name} ${file})
  target_link_libraries(${_name} PRIVATE ${COPROVE_BENCH_LIBS})
  if(COPROVE_HAVE_CUDA)
    target_compile_definitions(${_name} PRIVATE COPROVE_HAVE_CUDA=1)
  endif()
endfunction()
