# polyhal_add_gpu_plugin(NAME <name> SOURCES <src>... INCLUDE_DIRS <dir>...)
#
# Builds a plugin on the layer that the CUDA and HIP backends share (this folder): what
# polyhal_add_plugin() builds, plus the layer's sources and headers. The vendor runtime is
# opened with dlopen at run time, so a plugin needs only the vendor's headers to build
# (INCLUDE_DIRS) and links nothing of the vendor's.
#
# Included by each GPU backend's CMakeLists.txt; include_guard keeps the function defined once.
include_guard(GLOBAL)

function(polyhal_add_gpu_plugin)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;INCLUDE_DIRS" ${ARGN})
  set(common_dir ${CMAKE_CURRENT_FUNCTION_LIST_DIR})
  polyhal_add_plugin(NAME ${ARG_NAME}
    SOURCES ${ARG_SOURCES}
    LIBRARIES polyhal::support)
  # Sources include the layer as "gpu_common/<file>.hpp".
  get_filename_component(backends_dir ${common_dir} DIRECTORY)
  target_include_directories(polyhal_${ARG_NAME} PRIVATE ${backends_dir} ${ARG_INCLUDE_DIRS})
endfunction()
