# Helpers for the in-tree backend plugins.
#
#   kiln_plugin_option(NAME "what it needs")
#     declares KILN_PLUGIN_<NAME> = AUTO|ON|OFF (default AUTO).
#   kiln_plugin_enabled(NAME <found> "<reason when not found>" <out-var>)
#     AUTO: build when <found>, else say clearly why it is skipped;
#     ON: fail the configure step when not <found>; OFF: skip.
#   kiln_add_plugin(NAME SOURCES ...)
#     a MODULE library libkiln-<name>.so in lib/kiln/plugins, hidden symbols
#     except kiln_plugin_query, linked with the plugin SDK, installed.

set_property(GLOBAL PROPERTY KILN_PLUGIN_SUMMARY "")

function(kiln_plugin_option name help)
  string(TOUPPER ${name} upper)
  set(KILN_PLUGIN_${upper} AUTO CACHE STRING "Build the ${name} plugin: AUTO|ON|OFF (${help})")
  set_property(CACHE KILN_PLUGIN_${upper} PROPERTY STRINGS AUTO ON OFF)
endfunction()

function(kiln_plugin_enabled name found reason out)
  string(TOUPPER ${name} upper)
  set(mode ${KILN_PLUGIN_${upper}})
  set(result OFF)
  if(mode STREQUAL "OFF")
    set(line "${name}: OFF (KILN_PLUGIN_${upper}=OFF)")
  elseif(found)
    set(result ON)
    set(line "${name}: building")
  elseif(mode STREQUAL "ON")
    message(FATAL_ERROR "kiln: plugin ${name} requested (KILN_PLUGIN_${upper}=ON) but ${reason}")
  else()
    set(line "${name}: SKIPPED, ${reason} (set KILN_PLUGIN_${upper}=ON to make this an error)")
    message(STATUS "kiln: plugin ${line}")
  endif()
  set_property(GLOBAL APPEND PROPERTY KILN_PLUGIN_SUMMARY "${line}")
  set(${out} ${result} PARENT_SCOPE)
endfunction()

function(kiln_add_plugin name)
  cmake_parse_arguments(P "" "" "SOURCES;LIBRARIES;INCLUDES" ${ARGN})
  set(target kiln-plugin-${name})
  add_library(${target} MODULE ${P_SOURCES})
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME kiln-${name}
    PREFIX lib
    LIBRARY_OUTPUT_DIRECTORY ${KILN_PLUGIN_BUILD_DIR}
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_link_libraries(${target} PRIVATE kiln_plugin_sdk kiln_plugin_sdk_json ${P_LIBRARIES})
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${P_INCLUDES})
  # Fail at link time, not at dlopen time, on a missing symbol; and export
  # nothing from the static libraries linked in (the SDK, Boost.JSON,
  # glslang...): a plugin's only export is kiln_plugin_query.
  target_link_options(${target} PRIVATE ${KILN_MODULE_LINK_CHECK} -Wl,--exclude-libs,ALL)
  install(TARGETS ${target} LIBRARY DESTINATION ${KILN_PLUGIN_INSTALL_DIR})
  set_property(GLOBAL APPEND PROPERTY KILN_BUILT_PLUGINS ${name})
endfunction()

function(kiln_print_plugin_summary)
  get_property(lines GLOBAL PROPERTY KILN_PLUGIN_SUMMARY)
  message(STATUS "kiln plugins:")
  foreach(line IN LISTS lines)
    message(STATUS "  ${line}")
  endforeach()
endfunction()
