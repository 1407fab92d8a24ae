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
#   polyhal_find_backend_header(cuda cuda.h "the CUDA toolkit" HINTS /usr/local/cuda)
#   if(NOT POLYHAL_CUDA_INCLUDE_DIR)             # reported unavailable (fails if ON)
#     return()
#   endif()
#   polyhal_add_backend(NAME cuda ...)
# A backend whose headers are found by other means calls polyhal_backend_unavailable itself.
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

# polyhal_find_backend_header(<name> <header> <package> [HINTS <place>...])
# Finds the folder holding <header> (also below each place's include/) into the cache variable
# POLYHAL_<NAME>_INCLUDE_DIR; when it is not found, the backend is unavailable, and `package`
# says what provides it.
function(polyhal_find_backend_header name header package)
  cmake_parse_arguments(arg "" "" "HINTS" ${ARGN})
  string(TOUPPER "POLYHAL_${name}_INCLUDE_DIR" variable)
  find_path(${variable} ${header} HINTS ${arg_HINTS} PATH_SUFFIXES include
    DOC "Folder holding the ${name} backend's ${header}")
  if(NOT ${variable})
    polyhal_backend_unavailable(${name} "${header} was not found"
                                "${package} or set ${variable}")
  endif()
endfunction()

# polyhal_kernel_tool_missing(<name> <reason>...)
# A tool that builds a backend's conformance kernels is missing (the reason's parts, joined, say
# which): a backend that is required (ON) is tested in full, so the configure fails; otherwise
# the kernels are skipped, which the configure says. The caller returns afterwards.
function(polyhal_kernel_tool_missing name)
  string(JOIN "" reason ${ARGN})
  polyhal_backend_variable(${name} variable)
  if("${${variable}}" STREQUAL "ON")
    message(FATAL_ERROR "polyhal: ${variable}=ON, but ${reason}")
  endif()
  message(STATUS "polyhal: ${name} conformance kernels SKIPPED: ${reason}")
endfunction()

# polyhal_add_gpu_backend(<name> <vendor include dir> [<source>...])
# A backend made of the shared GPU layer (backends/gpu_common, included as "gpu_common/<file>.hpp")
# and its vendor's api.cpp, with the vendor's other sources. The vendor's library is opened at run
# time, so only its headers are needed to build the backend.
function(polyhal_add_gpu_backend name vendor_include_dir)
  polyhal_add_backend(NAME ${name}
    SOURCES api.cpp ${ARGN}
    INCLUDE_DIRS ${PROJECT_SOURCE_DIR}/backends ${vendor_include_dir}
    LIBRARIES polyhal::plugin_common)
endfunction()

# polyhal_add_backend(NAME <name> [SOURCES <src>...] [INCLUDE_DIRS <dir>...]
#                     [LIBRARIES <lib>...] [BUILTIN <entry function>])
#
# Builds the backend of the calling folder, the one way every backend is built:
# - its entry files that exist (platform, device, stream, event, memory, module, graph, plugin,
#   error, symbols .cpp; docs/style.md) and SOURCES (its engine/ files), compiled once into the
#   object library polyhal_<name>_objects, with the folder on the include path (sources include
#   "engine/<file>.hpp"); unit tests link that library;
# - libpolyhal_<name>.so from them (polyhal_add_plugin);
# - with BUILTIN, the same objects linked into libpolyhal.so as a built-in backend reached
#   through <entry function>, the plugin then adding the folder's entry.cpp, which exports the
#   standard entry symbol (the CPU backend);
# - with tests, the folder's cts_kernels/ (if any): the conformance suite's kernels in the
#   backend's image kinds, built or copied into ${PROJECT_BINARY_DIR}/kernels/<name>, where the
#   suite finds them in the build tree, and installed into share/polyhal/cts-kernels/<name>;
# and records the backend as built.
function(polyhal_add_backend)
  cmake_parse_arguments(ARG "" "NAME;BUILTIN" "SOURCES;INCLUDE_DIRS;LIBRARIES" ${ARGN})
  if(NOT ARG_NAME)
    message(FATAL_ERROR "polyhal_add_backend needs NAME")
  endif()
  set(sources)
  foreach(file platform device stream event memory module graph plugin error symbols)
    if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${file}.cpp)
      list(APPEND sources ${file}.cpp)
    endif()
  endforeach()
  set(objects polyhal_${ARG_NAME}_objects)
  add_library(${objects} OBJECT ${sources} ${ARG_SOURCES})
  set_target_properties(${objects} PROPERTIES
    POSITION_INDEPENDENT_CODE ON
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_include_directories(${objects} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR} ${ARG_INCLUDE_DIRS})
  target_link_libraries(${objects} PUBLIC polyhal::headers ${ARG_LIBRARIES})
  target_compile_features(${objects} PUBLIC cxx_std_17)
  set(plugin_sources $<TARGET_OBJECTS:${objects}>)
  if(ARG_BUILTIN)
    polyhal_add_builtin_backend(${ARG_NAME} ${ARG_BUILTIN} ${objects})
    list(APPEND plugin_sources ${CMAKE_CURRENT_SOURCE_DIR}/entry.cpp)
  endif()
  polyhal_add_plugin(NAME ${ARG_NAME} SOURCES ${plugin_sources} LIBRARIES ${ARG_LIBRARIES})
  target_include_directories(polyhal_${ARG_NAME} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  if(POLYHAL_BUILD_TESTS AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/cts_kernels/CMakeLists.txt)
    add_subdirectory(cts_kernels)
  endif()
  set_property(GLOBAL APPEND PROPERTY POLYHAL_BUILT_BACKENDS ${ARG_NAME})
  message(STATUS "polyhal: ${ARG_NAME} backend: built")
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
