# polyhal_add_plugin(NAME <name> SOURCES <src>... [LIBRARIES <lib>...])
#
# Builds libpolyhal_<name>.so into the plugin folder with everything a plugin needs: hidden
# visibility, an export map that leaves only the entry symbol visible, RPATH $ORIGIN and no
# undefined symbols at link time.
set(POLYHAL_PLUGIN_EXPORT_MAP ${CMAKE_CURRENT_LIST_DIR}/plugin.map)

function(polyhal_add_plugin)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT ARG_NAME OR NOT ARG_SOURCES)
    message(FATAL_ERROR "polyhal_add_plugin needs NAME and SOURCES")
  endif()
  set(target polyhal_${ARG_NAME})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE polyhal::headers ${ARG_LIBRARIES})
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME polyhal_${ARG_NAME}
    PREFIX lib
    LIBRARY_OUTPUT_DIRECTORY ${POLYHAL_PLUGIN_OUTPUT_DIR}
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    BUILD_RPATH "\$ORIGIN"
    INSTALL_RPATH "\$ORIGIN"
    LINK_DEPENDS ${POLYHAL_PLUGIN_EXPORT_MAP})
  target_link_options(${target} PRIVATE
    -Wl,--version-script=${POLYHAL_PLUGIN_EXPORT_MAP}
    $<$<NOT:$<BOOL:${POLYHAL_SANITIZE}>>:-Wl,--no-undefined>)
  if(DEFINED POLYHAL_PLUGIN_INSTALL_DIR)
    install(TARGETS ${target} LIBRARY DESTINATION ${POLYHAL_PLUGIN_INSTALL_DIR})
  endif()
endfunction()
