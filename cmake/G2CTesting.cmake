# Test registration. Course tests mirror the Python edition one for one and carry the module's
# labels ("07", the topic, "course", and "clean" for those that pass on the scaffold); they alone
# make a module's counts and grades. Framework tests (independent oracles: LibTorch's own
# operators, float64 gradient checks, bad input, persistence) are built in every build, student
# included, under the labels "framework" and "check" and the name prefix "<module>.framework.", so
# `ctest --preset student -L check -R adamw` shows a student where their code disagrees with
# LibTorch, while `ctest --preset student -L 07` keeps the lesson's counts.
#
# A test that cannot run here (no CUDA, no MPS) prints "G2C_SKIPPED: <why>" and returns; CTest
# reports it as skipped. Course tests tagged [accelerator] compare a student's code on CUDA or MPS
# with the CPU: they carry the extra label "accelerator" and are skipped on machines without one.

# Test files compile at -O1 (the runner below hands the option to every test that links it); the
# code they test keeps the build's -O2. A test file is mostly
# Catch2's assertions and the set-up around them, which -O2 spends seconds optimizing for no
# measurable gain when the tests run: test_attention.cpp compiles in 10 s instead of 14, and -O0
# or -Og save nothing more.
set(G2C_TEST_OPTIONS -O1)
# Their precompiled <torch/torch.h>, made under those options: GCC uses a precompiled header only
# under the options it was made with (the programs' g2c_pch is made at -O2).
if(TARGET g2c_pch)
  add_library(g2c_test_pch STATIC "${PROJECT_SOURCE_DIR}/g2c/core/pch.cpp")
  target_link_libraries(g2c_test_pch PRIVATE g2c::torch)
  target_compile_options(g2c_test_pch PRIVATE ${G2C_TEST_OPTIONS})
  target_precompile_headers(g2c_test_pch PRIVATE <torch/torch.h>)
endif()

add_library(g2c_catch_main STATIC "${PROJECT_SOURCE_DIR}/tests/support/catch_main.cpp")
target_compile_options(g2c_catch_main PUBLIC ${G2C_TEST_OPTIONS})
target_link_libraries(g2c_catch_main PUBLIC Catch2::Catch2)
target_include_directories(g2c_catch_main PUBLIC "${PROJECT_SOURCE_DIR}/tests/support")
# Catch2's own runner is not what a sanitizer build checks: compiled with ASan, UBSan and debug
# information it took 83 s of the sanitizer run's 100; without them, seconds. The tests and the
# code they test keep every sanitizer, and the runner links into sanitized executables as it is.
if(G2C_SANITIZE)
  target_compile_options(g2c_catch_main PRIVATE -fno-sanitize=all -g0)
endif()

set(G2C_SKIP_REGEX "G2C_SKIPPED")
# A test that hangs (a deadlock, a server waiting for a client) fails after this many seconds
# instead of holding ctest forever; the slowest check takes a few seconds.
set(G2C_TEST_TIMEOUT 600 CACHE STRING "Seconds before ctest stops one test and fails it")

# A test on LibTorch (the course library, or module 02's own g2c_tensors) reuses the tests'
# precompiled <torch/torch.h>: without it, module 02's test files took 26 s each to compile
# instead of 15.
function(_g2c_test_executable name sources libs)
  add_executable(${name} ${sources})
  target_link_libraries(${name} PRIVATE g2c_catch_main ${libs})
  if("g2c" IN_LIST libs OR "g2c_tensors" IN_LIST libs)
    target_precompile_headers(${name} REUSE_FROM g2c_test_pch)
  endif()
endfunction()

# catch_discover_tests flattens PROPERTIES into one list, so a multi-valued LABELS cannot pass
# through it. Instead the discovered tests are collected in a list variable, and a CTest include
# file, run after discovery, labels them.
function(_g2c_discover name spec prefix labels)
  string(MAKE_C_IDENTIFIER "${name}_${spec}" list_var)
  set(spec_args "")
  if(spec)
    set(spec_args TEST_SPEC "${spec}")
  endif()
  catch_discover_tests(${name} ${spec_args} TEST_PREFIX "${prefix}" TEST_LIST ${list_var}
    PROPERTIES SKIP_REGULAR_EXPRESSION "${G2C_SKIP_REGEX}" TIMEOUT "${G2C_TEST_TIMEOUT}")
  set(label_file "${CMAKE_CURRENT_BINARY_DIR}/${list_var}_labels.cmake")
  file(WRITE "${label_file}"
    "if(${list_var})\n  set_tests_properties(\${${list_var}} PROPERTIES LABELS \"${labels}\")\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${label_file}")
endfunction()

# g2c_course_test(<exe> MODULE 07 TOPIC attention SOURCES ... LIBS ...)
# A tag's discovery is registered only when a source uses the tag, so that a module without
# [accelerator] tests draws no "contains no tests" warning.
function(g2c_course_test name)
  cmake_parse_arguments(ARG "" "MODULE;TOPIC" "SOURCES;LIBS" ${ARGN})
  _g2c_test_executable(${name} "${ARG_SOURCES}" "${ARG_LIBS}")
  set(text "")
  foreach(source IN LISTS ARG_SOURCES)
    file(READ "${CMAKE_CURRENT_SOURCE_DIR}/${source}" source_text)
    string(APPEND text "${source_text}")
  endforeach()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${ARG_SOURCES})
  string(FIND "${text}" "[clean]" has_clean)
  string(FIND "${text}" "[accelerator]" has_accelerator)
  set(labels "${ARG_MODULE};${ARG_TOPIC};course")
  if(has_clean GREATER -1)
    _g2c_discover(${name} "[clean]" "${ARG_MODULE}." "${labels};clean")
  endif()
  _g2c_discover(${name} "~[clean]~[accelerator]" "${ARG_MODULE}." "${labels}")
  if(has_accelerator GREATER -1)
    _g2c_discover(${name} "[accelerator]" "${ARG_MODULE}." "${labels};accelerator")
  endif()
endfunction()

# g2c_framework_test(<exe> MODULE 07 TOPIC attention SOURCES ... LIBS ...)
# Built in every build. On the scaffold each check passes (it only uses provided code) or fails
# with the NotImplementedError of the TODO it reaches; scripts/test.sh holds them to that.
function(g2c_framework_test name)
  cmake_parse_arguments(ARG "" "MODULE;TOPIC" "SOURCES;LIBS" ${ARGN})
  _g2c_test_executable(${name} "${ARG_SOURCES}" "${ARG_LIBS}")
  _g2c_discover(${name} "" "${ARG_MODULE}.framework." "framework;check;${ARG_TOPIC}")
endfunction()
