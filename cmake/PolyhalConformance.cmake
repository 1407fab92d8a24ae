# The conformance suite's runs, registered by the backends that it tests.
include_guard(GLOBAL)
include(GNUInstallDirs)
include(${CMAKE_CURRENT_LIST_DIR}/PolyhalCtsSpec.cmake)

# The suite's kernel images: each backend's cts_kernels/ folder puts its own in the build tree's
# ${POLYHAL_CTS_KERNEL_BUILD_DIR}/<backend> and installs them into
# <prefix>/${POLYHAL_CTS_KERNEL_INSTALL_DIR}/<backend>, the two places polyhal-cts looks.
set(POLYHAL_CTS_KERNEL_BUILD_DIR ${PROJECT_BINARY_DIR}/kernels)
set(POLYHAL_CTS_KERNEL_INSTALL_DIR ${CMAKE_INSTALL_DATADIR}/polyhal/cts-kernels)
# A kernel folder whose opencl/ holds only the SPIR-V of the Level Zero backend (cts.opencl.intel.spirv).
set(POLYHAL_CTS_SPIRV_ONLY_DIR ${PROJECT_BINARY_DIR}/kernels-spirv-only)

# polyhal_add_cts_run(NAME <test name> BACKEND <POLYHAL_BACKEND value>
#                     [FILTER <Catch2 test spec>] [ENV <VAR=value>...] [IGNORE_SKIPS])
#
# Registers one CTest run of polyhal-cts against BACKEND; a backend's CMakeLists.txt registers its
# own (the CTS target is made later, under tests/; CTest resolves the name when it generates). If
# the backend's folder has a cts_skips.txt, the tests it lists are excluded (polyhal_cts_spec in
# PolyhalCtsSpec.cmake, which tools/gpu-acceptance.sh shares). IGNORE_SKIPS runs FILTER's cases
# even where the skip list names them: a case that leaves the device unusable runs alone, in a run of its own.
function(polyhal_add_cts_run)
  if(NOT POLYHAL_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "IGNORE_SKIPS" "NAME;BACKEND;FILTER" "ENV" ${ARGN})
  if(NOT ARG_NAME OR NOT ARG_BACKEND)
    message(FATAL_ERROR "polyhal_add_cts_run needs NAME and BACKEND")
  endif()
  set(skip_list ${PROJECT_SOURCE_DIR}/backends/${ARG_BACKEND}/cts_skips.txt)
  if(ARG_IGNORE_SKIPS OR NOT EXISTS ${skip_list})
    set(skip_list "")
  endif()
  polyhal_cts_spec(spec skipped SKIP_LIST "${skip_list}" FILTER "${ARG_FILTER}")
  if(skip_list)
    message(STATUS "${ARG_NAME} skips ${skipped} case(s) listed in ${skip_list} "
                   "(--log-level=VERBOSE names them)")
  endif()
  # --warn NoTests: a filter that matches nothing fails instead of passing empty.
  if(spec)
    add_test(NAME ${ARG_NAME} COMMAND polyhal-cts --warn NoTests "${spec}")
  else()
    add_test(NAME ${ARG_NAME} COMMAND polyhal-cts --warn NoTests)
  endif()
  set(environment POLYHAL_BACKEND=${ARG_BACKEND} ${ARG_ENV})
  set_tests_properties(${ARG_NAME} PROPERTIES
    ENVIRONMENT "${environment}"
    LABELS cts
    TIMEOUT 300)
endfunction()

# polyhal_add_cts_checked_run(NAME <test name> BACKEND <POLYHAL_BACKEND value> [ENV <VAR=value>...])
#
# The suite under POLYHAL_CHECK=races,leaks,api (docs/check.md): it fails on any finding. The
# cases below misuse polyhal on purpose, to test what it then does, and are left out:
set(POLYHAL_CTS_CHECKED_EXCLUSIONS
  # wait for an event never recorded (an api finding)
  "a never-recorded event imposes no wait"
  "an event recorded in a capture does not follow the graph's launches"
  # calls into the device from a host function (an api finding each)
  "a host function may not call polyhal into the device"
  # its child process exits with an exported block still allocated (a leak)
  "a handle cannot be opened once its exporter released the memory or exited")
# Not under the sanitizers: the suite already runs under them, and the findings do not depend on
# them (the race corpus, tests/check, runs the checks' own code under them).
function(polyhal_add_cts_checked_run)
  cmake_parse_arguments(ARG "" "NAME;BACKEND" "ENV" ${ARGN})
  if(POLYHAL_SANITIZE)
    return()
  endif()
  set(filter "")
  foreach(name IN LISTS POLYHAL_CTS_CHECKED_EXCLUSIONS)
    string(APPEND filter " ~\"${name}\"")
  endforeach()
  string(STRIP "${filter}" filter)
  polyhal_add_cts_run(NAME ${ARG_NAME} BACKEND ${ARG_BACKEND} FILTER "${filter}"
                      ENV "POLYHAL_CHECK=races,leaks,api" ${ARG_ENV})
  if(TEST ${ARG_NAME})
    set_tests_properties(${ARG_NAME} PROPERTIES FAIL_REGULAR_EXPRESSION "check \\(")
  endif()
endfunction()
