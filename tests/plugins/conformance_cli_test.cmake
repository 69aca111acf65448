# One run of `kiln conformance` with what it must do (tests/plugins/CMakeLists.txt).
# Arguments:
#   KILN          the kiln executable
#   ARGS          its arguments after `conformance`, joined by @@
#   EXPECT_CODE   the exit code it must return
#   EXPECT_OUTPUT a regex stdout+stderr must match (optional)
#   JSON          ON: ARGS include --json; check totals.failed == 0 and
#                 totals.passed > 0 (with EXPECT_CODE 0)
#   COPY_AS       copy the file after --library to this path first and test
#                 the copy (any file name must do)
#   UNAVAILABLE_OK ON: exit code 2 with outcome "unavailable" (no driver or
#                 device here) is accepted and printed as "SKIPPED: ...",
#                 which the test's SKIP_REGULAR_EXPRESSION turns into a skip
cmake_minimum_required(VERSION 3.25)
string(REPLACE "@@" ";" ARGS "${ARGS}")

if(COPY_AS)
  list(FIND ARGS --library at)
  math(EXPR at "${at} + 1")
  list(GET ARGS ${at} original)
  get_filename_component(dir ${COPY_AS} DIRECTORY)
  file(MAKE_DIRECTORY ${dir})
  file(COPY_FILE ${original} ${COPY_AS})
  list(REMOVE_AT ARGS ${at})
  list(INSERT ARGS ${at} ${COPY_AS})
endif()

execute_process(COMMAND ${KILN} conformance ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REPLACE ";" " " command "${KILN} conformance ${ARGS}")
set(shown "${command}\n--- exit code ${rc}\n--- stdout\n${out}\n--- stderr\n${err}")

if(UNAVAILABLE_OK AND rc EQUAL 2 AND out MATCHES "\"outcome\":\"unavailable\"|nothing tested, unavailable")
  string(REGEX MATCH "nothing tested: [^\n]*" reason "${err}")
  message(STATUS "SKIPPED: the plugin is unavailable here (exit code 2, as documented): ${reason}")
  return()
endif()
if(NOT rc EQUAL EXPECT_CODE)
  message(FATAL_ERROR "expected exit code ${EXPECT_CODE}: ${shown}")
endif()
if(DEFINED EXPECT_OUTPUT AND NOT "${out}${err}" MATCHES "${EXPECT_OUTPUT}")
  message(FATAL_ERROR "output does not match '${EXPECT_OUTPUT}': ${shown}")
endif()
if(JSON)
  string(JSON passed GET "${out}" totals passed)
  string(JSON failed GET "${out}" totals failed)
  string(JSON unsupported GET "${out}" totals unsupported)
  string(JSON plugin GET "${out}" plugin)
  string(JSON cases LENGTH "${out}" cases)
  if(NOT failed EQUAL 0 OR NOT passed GREATER 0)
    message(FATAL_ERROR "expected passed > 0 and failed == 0, got passed ${passed}, failed ${failed}: ${shown}")
  endif()
  message(STATUS "${plugin}: ${cases} cases, passed ${passed}, failed ${failed}, unsupported ${unsupported}")
endif()
message(STATUS "${command}: exit code ${rc} as expected")
