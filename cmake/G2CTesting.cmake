# Test registration. Course tests mirror the Python edition one for one and carry the module's
# labels; framework tests (independent oracles) carry the label "framework" instead, and are only
# built once the module's reference solutions are compiled, so that `ctest -L 07` shows a student
# exactly the lesson's counts.
#
# A test that cannot run here (no CUDA, no MPS) prints "G2C_SKIPPED: <why>" and returns; CTest
# reports it as skipped. Course tests tagged [accelerator] compare a student's code on CUDA or MPS
# with the CPU: they carry the extra label "accelerator" and are skipped on machines without one.

add_library(g2c_catch_main STATIC "${PROJECT_SOURCE_DIR}/tests/support/catch_main.cpp")
target_link_libraries(g2c_catch_main PUBLIC Catch2::Catch2)
target_include_directories(g2c_catch_main PUBLIC "${PROJECT_SOURCE_DIR}/tests/support")

set(G2C_SKIP_REGEX "G2C_SKIPPED")

function(_g2c_test_executable name sources libs)
  add_executable(${name} ${sources})
  target_link_libraries(${name} PRIVATE g2c_catch_main ${libs})
  if("g2c" IN_LIST libs)
    target_precompile_headers(${name} REUSE_FROM g2c_pch)
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
    PROPERTIES SKIP_REGULAR_EXPRESSION "${G2C_SKIP_REGEX}")
  set(label_file "${CMAKE_CURRENT_BINARY_DIR}/${list_var}_labels.cmake")
  file(WRITE "${label_file}"
    "if(${list_var})\n  set_tests_properties(\${${list_var}} PROPERTIES LABELS \"${labels}\")\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${label_file}")
endfunction()

# g2c_course_test(<exe> MODULE 07 TOPIC attention SOURCES ... LIBS ...)
function(g2c_course_test name)
  cmake_parse_arguments(ARG "" "MODULE;TOPIC" "SOURCES;LIBS" ${ARGN})
  _g2c_test_executable(${name} "${ARG_SOURCES}" "${ARG_LIBS}")
  _g2c_discover(${name} "[clean]" "${ARG_MODULE}." "${ARG_MODULE};${ARG_TOPIC};course;clean")
  _g2c_discover(${name} "~[clean]~[accelerator]" "${ARG_MODULE}." "${ARG_MODULE};${ARG_TOPIC};course")
  _g2c_discover(${name} "[accelerator]" "${ARG_MODULE}." "${ARG_MODULE};${ARG_TOPIC};course;accelerator")
endfunction()

# g2c_framework_test(<exe> MODULE 07 TOPIC attention SOURCES ... LIBS ...)
function(g2c_framework_test name)
  cmake_parse_arguments(ARG "" "MODULE;TOPIC" "SOURCES;LIBS" ${ARGN})
  g2c_module_solved("${ARG_MODULE}" solved)
  if(NOT solved)
    return()
  endif()
  _g2c_test_executable(${name} "${ARG_SOURCES}" "${ARG_LIBS}")
  _g2c_discover(${name} "" "${ARG_MODULE}.framework." "framework;${ARG_TOPIC}")
endfunction()
