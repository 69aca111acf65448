# Sanitizer and fuzzing builds (scripts/sanitize.sh drives them; docs/testing.md).
#   KILN_SANITIZE=ON  every target built with AddressSanitizer and
#                     UndefinedBehaviorSanitizer; the first error aborts
#                     (-fno-sanitize-recover=all), so a finding fails its test.
#   KILN_FUZZ=ON      the libFuzzer targets (tests/fuzz/), clang only; the
#                     libraries get coverage instrumentation for them.
#   KILN_TSAN=ON      every target built with ThreadSanitizer (scripts/tsan.sh);
#                     it cannot be combined with AddressSanitizer.
option(KILN_SANITIZE "Build with ASan + UBSan, no recovery" OFF)
option(KILN_FUZZ "Build the libFuzzer targets (needs clang)" OFF)
option(KILN_TSAN "Build with ThreadSanitizer" OFF)

if(KILN_TSAN AND KILN_SANITIZE)
  message(FATAL_ERROR "KILN_TSAN and KILN_SANITIZE exclude each other: ThreadSanitizer and AddressSanitizer "
                      "cannot share a process; use two build folders")
endif()
# Plugins (MODULE libraries) are linked -Wl,--no-undefined, so that a symbol
# they lack fails at build time, not at dlopen.
set(KILN_MODULE_LINK_CHECK -Wl,--no-undefined)
if(KILN_TSAN)
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
  # clang 14's shared TSan runtime crashes at start (even an empty main), so
  # the runtime is linked statically into each executable, which exports it
  # to the plugins it loads: they are linked without --no-undefined.
  set(KILN_MODULE_LINK_CHECK)
endif()

if(KILN_FUZZ AND NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "KILN_FUZZ needs clang (-DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang)")
endif()

if(KILN_SANITIZE)
  set(KILN_SANITIZERS -fsanitize=address,undefined)
  add_compile_options(${KILN_SANITIZERS} -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(${KILN_SANITIZERS})
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    # clang links its sanitizer runtime statically into executables only, so
    # a plugin (a MODULE linked -Wl,--no-undefined) could not be linked and a
    # host without the runtime could not load it. The shared runtime serves
    # every module of the process; the RPATH finds it outside the linker's
    # default folders.
    add_link_options(-shared-libsan)
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libclang_rt.asan-x86_64.so
                    OUTPUT_VARIABLE KILN_ASAN_RUNTIME OUTPUT_STRIP_TRAILING_WHITESPACE)
    get_filename_component(KILN_ASAN_RUNTIME_DIR "${KILN_ASAN_RUNTIME}" DIRECTORY)
    add_link_options(-Wl,-rpath,${KILN_ASAN_RUNTIME_DIR})
  endif()
endif()

if(KILN_FUZZ)
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
