# polyhal_add_plugin(NAME <name> SOURCES <src>... [LIBRARIES <lib>...])
#
# Builds libpolyhal_<name>.so with everything a plugin needs: hidden visibility, an export map
# that leaves only the entry symbol visible, RPATH $ORIGIN and no undefined symbols at link time.
# Inside polyhal's tree it lands in the plugin folder next to libpolyhal.so; out of tree (through
# find_package(polyhal)) in POLYHAL_PLUGIN_OUTPUT_DIR if set, else the current binary folder, and
# `cmake --install` puts it in POLYHAL_PLUGIN_INSTALL_DIR if set, else lib/polyhal.
set(POLYHAL_PLUGIN_EXPORT_MAP ${CMAKE_CURRENT_LIST_DIR}/plugin.map)

function(polyhal_add_plugin)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT ARG_NAME OR NOT ARG_SOURCES)
    message(FATAL_ERROR "polyhal_add_plugin needs NAME and SOURCES")
  endif()
  set(target polyhal_${ARG_NAME})
  set(output_dir ${CMAKE_CURRENT_BINARY_DIR})
  if(DEFINED POLYHAL_PLUGIN_OUTPUT_DIR)
    set(output_dir ${POLYHAL_PLUGIN_OUTPUT_DIR})
  endif()
  set(install_dir lib/polyhal)
  if(DEFINED POLYHAL_PLUGIN_INSTALL_DIR)
    set(install_dir ${POLYHAL_PLUGIN_INSTALL_DIR})
  endif()
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE polyhal::headers ${ARG_LIBRARIES})
  target_compile_features(${target} PRIVATE cxx_std_17)
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME polyhal_${ARG_NAME}
    PREFIX lib
    LIBRARY_OUTPUT_DIRECTORY ${output_dir}
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    BUILD_RPATH "\$ORIGIN"
    INSTALL_RPATH "\$ORIGIN"
    LINK_DEPENDS ${POLYHAL_PLUGIN_EXPORT_MAP})
  target_link_options(${target} PRIVATE -Wl,--version-script=${POLYHAL_PLUGIN_EXPORT_MAP})
  # Sanitizer runtimes come with the executable, so a sanitized plugin has undefined symbols.
  if(NOT POLYHAL_SANITIZE)
    target_link_options(${target} PRIVATE -Wl,--no-undefined)
  endif()
  install(TARGETS ${target} LIBRARY DESTINATION ${install_dir})
endfunction()
