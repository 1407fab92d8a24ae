# Which optional backends are built, chosen explicitly at configure time.
#
# Each optional backend has a cache variable POLYHAL_BACKEND_<NAME> (CUDA, HIP, LEVEL_ZERO,
# OPENCL) with one of:
#   AUTO  built when what it needs is found; otherwise skipped, and the configure says why and
#         which package provides it (the default)
#   ON    required: the configure fails, naming the package, when what it needs is missing
#   OFF   not built, nothing looked up
# The cpu backend is always built. Tests, conformance runs, benchmarks and bindings follow what
# was built (`if(TARGET polyhal_<name>)`), never what was merely asked for.
#
# In a backend's CMakeLists.txt:
#   polyhal_backend_option(cuda)                 # declares POLYHAL_BACKEND_CUDA
#   if(NOT POLYHAL_BACKEND_CUDA_WANTED)          # OFF
#     return()
#   endif()
#   ... look for the vendor's headers ...
#   if(<not found>)
#     polyhal_backend_unavailable(cuda "cuda.h not found" "the CUDA toolkit")   # fails if ON
#     return()
#   endif()
#   ... polyhal_add_plugin(NAME cuda ...)
#   polyhal_backend_built(cuda)
include_guard(GLOBAL)

set(POLYHAL_BACKEND_CHOICES AUTO ON OFF)

function(polyhal_backend_variable name out)
  string(TOUPPER "POLYHAL_BACKEND_${name}" variable)
  set(${out} ${variable} PARENT_SCOPE)
endfunction()

# Declares POLYHAL_BACKEND_<NAME>, validates it, and sets POLYHAL_BACKEND_<NAME>_WANTED in the
# caller's scope (false for OFF).
macro(polyhal_backend_option name)
  polyhal_backend_variable(${name} _polyhal_variable)
  set(${_polyhal_variable} AUTO CACHE STRING
      "Build the ${name} backend: AUTO (when its headers are found), ON (required) or OFF")
  set_property(CACHE ${_polyhal_variable} PROPERTY STRINGS ${POLYHAL_BACKEND_CHOICES})
  string(TOUPPER "${${_polyhal_variable}}" _polyhal_choice)
  if(NOT _polyhal_choice IN_LIST POLYHAL_BACKEND_CHOICES)
    message(FATAL_ERROR "${_polyhal_variable} is '${${_polyhal_variable}}'; "
                        "use one of: ${POLYHAL_BACKEND_CHOICES}")
  endif()
  set_property(CACHE ${_polyhal_variable} PROPERTY VALUE ${_polyhal_choice})
  if(_polyhal_choice STREQUAL "OFF")
    set(${_polyhal_variable}_WANTED FALSE)
    set_property(GLOBAL APPEND PROPERTY POLYHAL_SKIPPED_BACKENDS
                 "${name}: ${_polyhal_variable}=OFF")
    message(STATUS "polyhal: ${name} backend: not built (${_polyhal_variable}=OFF)")
  else()
    set(${_polyhal_variable}_WANTED TRUE)
  endif()
  unset(_polyhal_choice)
  unset(_polyhal_variable)
endmacro()

# The backend cannot be built: `missing` says what was not found, `package` what provides it.
# Fails the configure when the backend is ON; with AUTO, says it is skipped and why.
function(polyhal_backend_unavailable name missing package)
  polyhal_backend_variable(${name} variable)
  string(TOUPPER "${${variable}}" choice)
  if(choice STREQUAL "ON")
    message(FATAL_ERROR "polyhal: the ${name} backend is required (${variable}=ON), but "
                        "${missing}. Install ${package}, or configure with -D${variable}=AUTO "
                        "(build it when found) or OFF.")
  endif()
  set_property(GLOBAL APPEND PROPERTY POLYHAL_SKIPPED_BACKENDS "${name}: ${missing}")
  message(STATUS "polyhal: ${name} backend: SKIPPED: ${missing}; install ${package} "
                 "(or set ${variable}=OFF to leave it out)")
endfunction()

function(polyhal_backend_built name)
  set_property(GLOBAL APPEND PROPERTY POLYHAL_BUILT_BACKENDS ${name})
  message(STATUS "polyhal: ${name} backend: built")
endfunction()

# After every backend folder: one line saying what was built and what was not.
function(polyhal_backend_summary)
  get_property(built GLOBAL PROPERTY POLYHAL_BUILT_BACKENDS)
  get_property(skipped GLOBAL PROPERTY POLYHAL_SKIPPED_BACKENDS)
  list(JOIN built ", " built_text)
  set(text "polyhal: backends built: ${built_text}")
  if(skipped)
    list(JOIN skipped "; " skipped_text)
    string(APPEND text "; not built: ${skipped_text}")
  endif()
  message(STATUS "${text}")
endfunction()
