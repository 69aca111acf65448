# The install test, in three steps (ctest runs them as fixtures, in order):
#   STEP=install   cmake --install the build tree into WORK_DIR/prefix; the
#                  installed headers are exactly the allow-list and compile
#                  from the prefix alone
#   STEP=plugin    build examples/out-of-tree-plugin against the installed
#                  kiln, point a config at it, and check that the installed
#                  `kiln devices --json` lists it as loaded
#   STEP=host_app  build examples/host-app against the installed kiln and run
#                  it on the example plugin's device
#   STEP=conformance  the installed `kiln conformance --library` on the example
#                  plugin (no config names it): device info and buffers pass,
#                  its kernels are unsupported (it does not compile), exit 0
#   STEP=capi      build tests/capi/capi_test.c (C99, pedantic, -Werror) in a
#                  C-only project with find_package(kiln), run it
#   STEP=cpp       build examples/cpp (GELU written with the builder's
#                  operators) against the installed kiln and run it on c:0
#   STEP=python    the Python package's tests (python/tests) with the package
#                  cmake --install put under the prefix, which must find the
#                  installed libkiln by itself (no KILN_LIBRARY)
# Arguments: BUILD_DIR SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER C_COMPILER STEP
#            [PYTHON] (an interpreter to try before /usr/bin/python3)
cmake_minimum_required(VERSION 3.25)

set(prefix ${WORK_DIR}/prefix)
set(config ${WORK_DIR}/example-config.json)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " command "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${command}\n--- stdout\n${out}\n--- stderr\n${err}")
  endif()
  set(output "${out}" PARENT_SCOPE)
endfunction()

function(expect_equal what actual expected)
  if(NOT "${actual}" STREQUAL "${expected}")
    message(FATAL_ERROR "${what}: expected '${expected}', got '${actual}'")
  endif()
endfunction()

function(build_example name)
  run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/${name} -B ${WORK_DIR}/${name} -G ${GENERATOR}
      -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/${name})
endfunction()

if(STEP STREQUAL "install")
  file(REMOVE_RECURSE ${WORK_DIR})
  run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
  foreach(file bin/kiln lib/libkiln.so include/kiln/plugin.h include/kiln/kernel_ir.h include/kiln/runtime.hpp
               include/kiln/kiln.h lib/python3/dist-packages/kiln/__init__.py
               lib/python3/dist-packages/kiln/_installed.py
               share/kiln/config.example.json lib/cmake/kiln/kilnConfig.cmake lib/cmake/kiln/kilnTargets.cmake)
    if(NOT EXISTS ${prefix}/${file})
      message(FATAL_ERROR "not installed: ${prefix}/${file}")
    endif()
  endforeach()
  # Exactly the headers a host or a plugin author needs: an internal header
  # installed by mistake, or a public one left out, fails here.
  set(allowed
    compile_options.hpp kernel_ir.h kiln.h plugin.h result.hpp runtime.hpp version.hpp
    ir/builder.hpp ir/dtype.hpp ir/expr.hpp ir/hash.hpp ir/kernel.hpp ir/text.hpp ir/verify.hpp
    kernels/host_buffer.hpp kernels/host_bytes.hpp kernels/library.hpp kernels/run.hpp passes/bounds.hpp
    runtime/buffer.hpp runtime/config.hpp runtime/device.hpp runtime/device_info.hpp runtime/event.hpp
    runtime/launch.hpp runtime/plugin_record.hpp runtime/program.hpp runtime/report.hpp runtime/runtime.hpp
    tune/autotune_config.hpp tune/tune_kernels.hpp tune/tune_options.hpp tune/tuning_db.hpp)
  set(allowed_sdk  # for out-of-tree plugins (docs/plugin-guide.md)
    c_emitter.hpp capabilities.hpp deadline.hpp device_filter.hpp grid.hpp half.hpp handles.hpp host_cpu.hpp host_memory.hpp
    integer_ranges.hpp
    interpreter.hpp launch_args.hpp listing.hpp op_rules.hpp plugin_entry.hpp plugin_state.hpp plugin_support.hpp
    plugin_table.hpp single_device.hpp timing.hpp wire.hpp)
  foreach(header ${allowed_sdk})
    list(APPEND allowed sdk/${header})
  endforeach()
  file(GLOB_RECURSE installed RELATIVE ${prefix}/include/kiln ${prefix}/include/kiln/*)
  list(SORT installed)
  list(SORT allowed)
  if(NOT installed STREQUAL allowed)
    set(extra ${installed})
    list(REMOVE_ITEM extra ${allowed})
    set(missing ${allowed})
    list(REMOVE_ITEM missing ${installed})
    message(FATAL_ERROR "installed headers differ from the allow-list: not allowed: '${extra}'; missing: '${missing}'")
  endif()
  # The host headers compile from the installed tree alone, so none of them
  # includes a header that stays in the build tree. One translation unit for
  # all of them: one per header took a second each on the CI machine.
  set(all_headers "")
  foreach(header ${allowed})
    if(NOT header MATCHES "^sdk/")
      string(APPEND all_headers "#include <kiln/${header}>\n")
    endif()
  endforeach()
  file(WRITE ${WORK_DIR}/installed_headers.cpp "${all_headers}")
  run(${CXX_COMPILER} -std=c++20 -fsyntax-only -Wall -Wextra -Werror -I${prefix}/include ${WORK_DIR}/installed_headers.cpp)
  # The package must not drag the SDK or Boost into host applications.
  file(READ ${prefix}/lib/cmake/kiln/kilnTargets.cmake targets)
  string(REGEX MATCH "set_target_properties\\(kiln::kiln PROPERTIES[^)]*\\)" kiln_properties "${targets}")
  if(kiln_properties MATCHES "plugin_sdk|[Bb]oost")
    message(FATAL_ERROR "kiln::kiln exports build-only dependencies:\n${kiln_properties}")
  endif()
  # The example config documents every key: it must be a valid config.
  run(${prefix}/bin/kiln devices --json --config ${prefix}/share/kiln/config.example.json)
  message(STATUS "installed into ${prefix}")

elseif(STEP STREQUAL "plugin")
  build_example(out-of-tree-plugin)
  set(library ${WORK_DIR}/out-of-tree-plugin/libkiln-example.so)
  if(NOT EXISTS ${library} OR NOT EXISTS ${WORK_DIR}/out-of-tree-plugin/kiln-example.json)
    message(FATAL_ERROR "the example plugin or its manifest was not built")
  endif()
  # Built against the ABI alone: it must not need libkiln.
  find_program(READELF readelf)
  if(READELF)
    run(${READELF} -d ${library})
    if(output MATCHES "libkiln")
      message(FATAL_ERROR "the out-of-tree plugin links libkiln:\n${output}")
    endif()
  endif()
  # Only the example plugin; the in-tree ones are off so the check is about it alone.
  file(WRITE ${config} "{
  \"plugin_paths\": [\"out-of-tree-plugin\"],
  \"plugins\": {\"c\": {\"enabled\": false}, \"cblas\": {\"enabled\": false}, \"cuda\": {\"enabled\": false},
              \"opencl\": {\"enabled\": false}, \"vulkan\": {\"enabled\": false}}
}\n")
  run(${prefix}/bin/kiln devices --json --config ${config})
  set(report "${output}")
  string(JSON count LENGTH "${report}" plugins)
  math(EXPR last "${count} - 1")
  set(found "")
  foreach(i RANGE ${last})
    string(JSON name GET "${report}" plugins ${i} name)
    if(name STREQUAL "example")
      set(found ${i})
    endif()
  endforeach()
  if(found STREQUAL "")
    message(FATAL_ERROR "kiln devices does not list the example plugin:\n${report}")
  endif()
  string(JSON status GET "${report}" plugins ${found} status)
  string(JSON reason GET "${report}" plugins ${found} reason)
  expect_equal("status (reason: ${reason})" "${status}" "loaded")
  string(JSON lib GET "${report}" plugins ${found} library)
  expect_equal("library" "${lib}" "${library}")
  string(JSON version GET "${report}" plugins ${found} version)
  expect_equal("version" "${version}" "1.0.0")
  string(JSON id GET "${report}" plugins ${found} devices 0 id)
  expect_equal("device id" "${id}" "example:0")
  string(JSON kind GET "${report}" plugins ${found} devices 0 kind)
  expect_equal("device kind" "${kind}" "cpu")
  string(JSON can_compile GET "${report}" plugins ${found} can_compile)
  expect_equal("can_compile" "${can_compile}" "OFF")
  string(JSON config_source GET "${report}" config)
  expect_equal("config" "${config_source}" "${config}")
  message(STATUS "the installed kiln lists the out-of-tree plugin: ${id}")

elseif(STEP STREQUAL "host_app")
  build_example(host-app)
  run(${WORK_DIR}/host-app/kiln-host-app --config ${config} example:0)
  if(NOT output MATCHES "round trip ok: 65536 bytes on example:0")
    message(FATAL_ERROR "unexpected host app output:\n${output}")
  endif()
  message(STATUS "${output}")

elseif(STEP STREQUAL "conformance")
  set(library ${WORK_DIR}/out-of-tree-plugin/libkiln-example.so)
  run(${prefix}/bin/kiln conformance --library ${library} --json)
  set(report "${output}")
  string(JSON outcome GET "${report}" outcome)
  expect_equal("outcome" "${outcome}" "tested")
  string(JSON plugin GET "${report}" plugin)
  expect_equal("plugin" "${plugin}" "example")
  string(JSON passed GET "${report}" totals passed)
  string(JSON failed GET "${report}" totals failed)
  string(JSON unsupported GET "${report}" totals unsupported)
  expect_equal("failed cases" "${failed}" "0")
  if(NOT passed GREATER 0)
    message(FATAL_ERROR "no case passed on the example plugin:\n${report}")
  endif()
  string(JSON device_info ERROR_VARIABLE none GET "${report}" cases 1 name)
  expect_equal("second case" "${device_info}" "device info")
  string(JSON status GET "${report}" cases 1 status)
  expect_equal("device info" "${status}" "passed")
  message(STATUS "the installed kiln conformance on the example plugin: passed ${passed}, unsupported ${unsupported}")

elseif(STEP STREQUAL "capi")
  # A C host as a user writes one: a C-only project, the CMake package.
  set(project ${WORK_DIR}/capi-project)
  file(MAKE_DIRECTORY ${project})
  file(WRITE ${project}/CMakeLists.txt "cmake_minimum_required(VERSION 3.20)
project(kiln_capi_test LANGUAGES C)
find_package(kiln 0.1 REQUIRED)
find_package(Threads REQUIRED)
add_executable(kiln_capi_test ${SOURCE_DIR}/tests/capi/capi_test.c)
target_link_libraries(kiln_capi_test PRIVATE kiln::kiln m Threads::Threads)
set_target_properties(kiln_capi_test PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_compile_options(kiln_capi_test PRIVATE -Wall -Wextra -pedantic -Werror)
add_executable(kiln_gelu_c ${SOURCE_DIR}/examples/c/gelu.c)
target_link_libraries(kiln_gelu_c PRIVATE kiln::kiln m)
set_target_properties(kiln_gelu_c PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_compile_options(kiln_gelu_c PRIVATE -Wall -Wextra -pedantic -Werror)
")
  run(${CMAKE_COMMAND} -S ${project} -B ${WORK_DIR}/capi -G ${GENERATOR} -DCMAKE_C_COMPILER=${C_COMPILER}
      -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/capi)
  run(${WORK_DIR}/capi/kiln_capi_test ${WORK_DIR}/capi)
  if(NOT output MATCHES "all C API checks passed")
    message(FATAL_ERROR "unexpected C API test output:\n${output}")
  endif()
  message(STATUS "${output}")
  # The C column of docs/embedding.md.
  run(${WORK_DIR}/capi/kiln_gelu_c)
  message(STATUS "${output}")

elseif(STEP STREQUAL "cpp")
  # The C++ column of docs/embedding.md; it checks itself against the host formula.
  build_example(cpp)
  run(${WORK_DIR}/cpp/kiln-gelu-cpp c:0)
  if(NOT output MATCHES "gelu on c:0: max abs error")
    message(FATAL_ERROR "unexpected C++ GELU output:\n${output}")
  endif()
  message(STATUS "${output}")

elseif(STEP STREQUAL "python")
  # Debian's python3-numpy and python3-pytest live with /usr/bin/python3,
  # which need not be the python3 first on PATH.
  set(python "")
  foreach(candidate ${PYTHON} /usr/bin/python3 python3)
    execute_process(COMMAND ${candidate} -c "import numpy, pytest" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
    if(rc EQUAL 0)
      set(python ${candidate})
      break()
    endif()
  endforeach()
  if(python STREQUAL "")
    message("KILN_SKIP: no python3 with numpy and pytest (Debian: apt-get install python3-numpy python3-pytest; "
            "scripts/setup.sh installs them)")
    return()
  endif()
  set(package_dir ${prefix}/lib/python3/dist-packages)
  set(ENV{PYTHONPATH} ${package_dir})
  set(ENV{KILN_TEST_PACKAGE_DIR} ${package_dir}/kiln)
  set(ENV{KILN_TEST_WORK_DIR} ${WORK_DIR}/python)
  set(ENV{PYTHONDONTWRITEBYTECODE} 1)  # nothing written into the source tree
  unset(ENV{KILN_LIBRARY})
  file(MAKE_DIRECTORY ${WORK_DIR}/python)
  run(${python} -m pytest -q -p no:cacheprovider --rootdir=${WORK_DIR}/python ${SOURCE_DIR}/python/tests)
  message(STATUS "${output}")
  # The Python column of docs/embedding.md, on every device that compiles.
  run(${python} ${SOURCE_DIR}/examples/python/gelu.py 4096)
  message(STATUS "${output}")

else()
  message(FATAL_ERROR "STEP must be install, plugin, host_app, conformance, capi, cpp or python")
endif()
