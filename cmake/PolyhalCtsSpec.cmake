# The Catch2 test spec of a conformance run: a filter minus the cases a backend's cts_skips.txt
# lists. CMake's registered runs (PolyhalConformance.cmake) and tools/gpu-acceptance.sh both build
# their specs here, so a skip name is escaped the same way wherever it is used.
#
# In a project: include() it and call polyhal_cts_spec().
# As a script: cmake [-DSKIP_LIST=<cts_skips.txt>] [-DFILTER=<Catch2 spec>] -P PolyhalCtsSpec.cmake
#   prints two lines on stdout: the number of skipped cases, then the spec (empty: every case).
include_guard(GLOBAL)

# polyhal_cts_spec(<spec variable> <skipped-count variable> [SKIP_LIST <file>] [FILTER <spec>])
#
# Each line of SKIP_LIST is "<exact test case name> # <reason>" (lines starting with '#' are
# comments); a line without a reason is a fatal error. Every skip is printed (VERBOSE) with its
# reason. Catch2 reads a comma as "or" and a space as "and": every exclusion is added to each
# alternative of FILTER, and commas inside test names are escaped (unescaped, a comma splits the
# spec into alternatives that no case matches, and Catch2 then runs nothing).
function(polyhal_cts_spec spec_variable skipped_variable)
  cmake_parse_arguments(ARG "" "SKIP_LIST;FILTER" "" ${ARGN})
  set(exclusions "")
  set(skipped 0)
  if(ARG_SKIP_LIST AND EXISTS "${ARG_SKIP_LIST}")
    file(STRINGS "${ARG_SKIP_LIST}" lines)
    foreach(line IN LISTS lines)
      if(line MATCHES "^[ \t]*(#|$)")
        continue()
      endif()
      if(NOT line MATCHES "^([^#]*[^# \t])[ \t]*#[ \t]*(.+)$")
        message(FATAL_ERROR "${ARG_SKIP_LIST}: '${line}' gives no reason (\"name # reason\")")
      endif()
      set(name "${CMAKE_MATCH_1}")
      set(reason "${CMAKE_MATCH_2}")
      string(REPLACE "," "\\," escaped "${name}")
      string(APPEND exclusions " ~\"${escaped}\"")
      message(VERBOSE "skips \"${name}\": ${reason}")
      math(EXPR skipped "${skipped} + 1")
    endforeach()
  endif()
  set(spec "")
  if(ARG_FILTER)
    # Split at the commas that are not escaped (an escaped one is held as a unit separator).
    string(ASCII 31 held)
    string(REPLACE "\\," "${held}" alternatives "${ARG_FILTER}")
    string(REPLACE "," ";" alternatives "${alternatives}")
    foreach(alternative IN LISTS alternatives)
      string(REPLACE "${held}" "\\," alternative "${alternative}")
      list(APPEND spec "${alternative}${exclusions}")
    endforeach()
    list(JOIN spec "," spec)
  else()
    string(STRIP "${exclusions}" spec)
  endif()
  set(${spec_variable} "${spec}" PARENT_SCOPE)
  set(${skipped_variable} ${skipped} PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  if(SKIP_LIST AND NOT EXISTS "${SKIP_LIST}")
    message(FATAL_ERROR "no skip list ${SKIP_LIST}")
  endif()
  polyhal_cts_spec(spec skipped SKIP_LIST "${SKIP_LIST}" FILTER "${FILTER}")
  # message() writes to stderr; the spec goes to stdout, verbatim.
  execute_process(COMMAND ${CMAKE_COMMAND} -E echo "${skipped}")
  execute_process(COMMAND ${CMAKE_COMMAND} -E echo "${spec}")
endif()
