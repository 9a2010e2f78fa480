# Locates LibTorch and defines the target g2c::torch.
#
# Two ways in, tried in this order:
#  1. "wheel" mode: the torch package of a Python environment (by default the project's .venv,
#     made by scripts/setup.sh; or G2C_TORCH_ROOT pointing at a site-packages/torch folder).
#     Headers and libraries are used directly, so configuring needs no CUDA toolkit even when the
#     wheel was built with CUDA. CUDA support is linked in when the wheel has it and this machine
#     has an NVIDIA driver (G2C_CUDA=AUTO), or when asked for (G2C_CUDA=ON).
#  2. "package" mode: find_package(Torch) for a LibTorch the user brings (the official zip,
#     conda, Homebrew, macOS with MPS), found through Torch_DIR or CMAKE_PREFIX_PATH.
#     A CUDA-enabled LibTorch wants the CUDA toolkit at configure time in this mode.

set(G2C_TORCH_ROOT "" CACHE PATH "Folder of a torch Python package (site-packages/torch) to use as LibTorch")
set(G2C_CUDA "AUTO" CACHE STRING "Link LibTorch's CUDA backend in wheel mode: AUTO, ON or OFF")
set_property(CACHE G2C_CUDA PROPERTY STRINGS AUTO ON OFF)

function(_g2c_find_wheel_torch out)
  if(G2C_TORCH_ROOT)
    set(${out} "${G2C_TORCH_ROOT}" PARENT_SCOPE)
    return()
  endif()
  if(DEFINED Torch_DIR OR DEFINED ENV{Torch_DIR})
    set(${out} "" PARENT_SCOPE) # the user asked for a LibTorch of their own
    return()
  endif()
  file(GLOB candidates "${PROJECT_SOURCE_DIR}/.venv/lib/python3*/site-packages/torch")
  if(candidates)
    list(GET candidates 0 first)
    get_filename_component(first "${first}" REALPATH)
    set(${out} "${first}" PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

function(_g2c_machine_has_nvidia_driver out)
  find_library(_g2c_libcuda NAMES cuda libcuda.so.1
    PATHS /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/nvidia/lib64 /usr/lib/wsl/lib NO_CACHE)
  if(_g2c_libcuda OR EXISTS "/proc/driver/nvidia/version")
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

_g2c_find_wheel_torch(_g2c_torch_root)

if(_g2c_torch_root)
  set(_lib "${_g2c_torch_root}/lib")
  foreach(required include/torch/csrc/api/include/torch/torch.h lib/libc10.so lib/libtorch_cpu.so)
    if(NOT EXISTS "${_g2c_torch_root}/${required}")
      message(FATAL_ERROR
        "g2c: ${_g2c_torch_root} does not look like a torch package (missing ${required}).\n"
        "Run scripts/setup.sh to create the project environment, or pass -DTorch_DIR=<libtorch>/share/cmake/Torch.")
    endif()
  endforeach()

  set(_use_cuda FALSE)
  if(EXISTS "${_lib}/libtorch_cuda.so")
    if(G2C_CUDA STREQUAL "ON")
      set(_use_cuda TRUE)
    elseif(G2C_CUDA STREQUAL "AUTO")
      _g2c_machine_has_nvidia_driver(_use_cuda)
    endif()
  elseif(G2C_CUDA STREQUAL "ON")
    message(FATAL_ERROR "g2c: G2C_CUDA=ON but ${_lib} has no libtorch_cuda.so (a CPU-only torch).")
  endif()

  add_library(g2c_torch INTERFACE)
  target_include_directories(g2c_torch SYSTEM INTERFACE
    "${_g2c_torch_root}/include" "${_g2c_torch_root}/include/torch/csrc/api/include")
  target_compile_features(g2c_torch INTERFACE cxx_std_20)
  if(_use_cuda)
    # The CUDA backend registers itself from static initialisers: keep the libraries even though
    # nothing references them by name.
    target_link_libraries(g2c_torch INTERFACE
      "-Wl,--no-as-needed" "${_lib}/libtorch_cuda.so" "${_lib}/libc10_cuda.so" "-Wl,--as-needed")
    target_compile_definitions(g2c_torch INTERFACE G2C_WITH_CUDA=1)
  endif()
  target_link_libraries(g2c_torch INTERFACE "${_lib}/libtorch_cpu.so" "${_lib}/libc10.so")
  # The wheel's libraries find their CUDA runtime siblings through their own $ORIGIN rpath.
  target_link_options(g2c_torch INTERFACE "-Wl,-rpath,${_lib}")
  add_library(g2c::torch ALIAS g2c_torch)
  set(G2C_TORCH_DESCRIPTION "wheel at ${_g2c_torch_root} (CUDA backend: ${_use_cuda})")
else()
  find_package(Torch QUIET)
  if(NOT Torch_FOUND)
    message(FATAL_ERROR
      "g2c: LibTorch not found.\n"
      "  * Run scripts/setup.sh: it installs the pinned torch wheel into .venv and configures the builds.\n"
      "  * Or bring your own LibTorch: -DTorch_DIR=/path/to/libtorch/share/cmake/Torch\n"
      "    (a CUDA-enabled LibTorch needs the CUDA toolkit at configure time in that case;\n"
      "     without one, use the CPU LibTorch or the project's wheel environment).")
  endif()
  add_library(g2c_torch INTERFACE)
  target_link_libraries(g2c_torch INTERFACE ${TORCH_LIBRARIES})
  target_include_directories(g2c_torch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
  target_compile_features(g2c_torch INTERFACE cxx_std_20)
  add_library(g2c::torch ALIAS g2c_torch)
  set(G2C_TORCH_DESCRIPTION "LibTorch package at ${Torch_DIR}")
endif()
message(STATUS "g2c: LibTorch from ${G2C_TORCH_DESCRIPTION}")

# fmt for every LibTorch target: the headers LibTorch's include folder brings (they shadow the
# system's), compiled, not header-only, with their implementation built once (g2c/core/fmt_impl.cpp
# says why).
add_library(g2c_fmt STATIC "${PROJECT_SOURCE_DIR}/g2c/core/fmt_impl.cpp")
get_target_property(_g2c_torch_includes g2c_torch INTERFACE_INCLUDE_DIRECTORIES)
target_include_directories(g2c_fmt SYSTEM PRIVATE ${_g2c_torch_includes})
target_link_libraries(g2c_torch INTERFACE g2c_fmt)
