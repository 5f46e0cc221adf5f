# CUDA detection. Where the CUDA toolkit is installed (nvcc, CUPTI and NVTX 3
# headers), the recording client (libopprof) gains CUPTI activity recording
# and NVTX injection, and nn/cuda (the GPU runtime) is built with nvcc. Where
# it is not, all of that is skipped and the library reports "built without
# CUDA" at run time.
# CUDA libraries are never linked into libopprof: CUPTI and the driver are
# loaded with dlopen, so one build runs on machines with and without a GPU.
#
#   -DOPPROF_CUDA=AUTO (default) | ON (fail when missing) | OFF
set(OPPROF_CUDA AUTO CACHE STRING "Build the CUDA parts: AUTO, ON or OFF")
set(OPPROF_HAVE_CUDA OFF)
set(OPPROF_HAVE_NVCC OFF)

if(NOT OPPROF_CUDA STREQUAL "OFF")
  if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    find_path(OPPROF_CUPTI_INCLUDE cupti.h
              HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_TARGET_DIR}/extras/CUPTI/include NO_DEFAULT_PATH)
    find_path(OPPROF_NVTX_INCLUDE nvtx3/nvToolsExt.h HINTS ${CUDAToolkit_INCLUDE_DIRS} NO_DEFAULT_PATH)
    find_library(OPPROF_CUPTI_LIBRARY cupti
                 HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_TARGET_DIR}/extras/CUPTI/lib64 NO_DEFAULT_PATH)
  endif()
  if(CUDAToolkit_FOUND AND OPPROF_CUPTI_INCLUDE AND OPPROF_CUPTI_LIBRARY)
    set(OPPROF_HAVE_CUDA ON)
  elseif(OPPROF_CUDA STREQUAL "ON")
    message(FATAL_ERROR "opprof: OPPROF_CUDA=ON but the CUDA toolkit with CUPTI was not found")
  endif()
endif()

if(OPPROF_HAVE_CUDA)
  # The soname and the file of the CUPTI found here: dlopen tries the
  # soname first (the loader's path), then this file.
  get_filename_component(_cupti_real ${OPPROF_CUPTI_LIBRARY} REALPATH)
  get_filename_component(_cupti_name ${_cupti_real} NAME)
  string(REGEX REPLACE "^(libcupti\\.so\\.[0-9]+).*" "\\1" _cupti_soname ${_cupti_name})
  target_compile_definitions(opprof_obj PRIVATE OPPROF_HAVE_CUPTI OPPROF_CUPTI_SONAME="${_cupti_soname}"
                             OPPROF_CUPTI_PATH="${_cupti_real}")
  target_include_directories(opprof_obj SYSTEM PRIVATE ${OPPROF_CUPTI_INCLUDE} ${CUDAToolkit_INCLUDE_DIRS})
  if(OPPROF_NVTX_INCLUDE)
    target_compile_definitions(opprof_obj PRIVATE OPPROF_HAVE_NVTX)
    target_include_directories(opprof_obj SYSTEM PRIVATE ${OPPROF_NVTX_INCLUDE})
  endif()
  # nvcc for nn/cuda; an H200 is sm_90, PTX of 90 runs on newer ones.
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 80-real 90)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER AND NOT OPPROF_SANITIZE)
    enable_language(CUDA)
    set(OPPROF_HAVE_NVCC ON)
  endif()
  message(STATUS "opprof: CUDA ${CUDAToolkit_VERSION} found: CUPTI activity (${_cupti_soname}), "
                 "NVTX injection (${OPPROF_NVTX_INCLUDE}), nn CUDA runtime (nvcc: ${OPPROF_HAVE_NVCC})")
else()
  message(STATUS "opprof: CUDA not found (or OPPROF_CUDA=OFF): CUPTI activity, NVTX injection and the "
                 "nn CUDA runtime are skipped")
endif()
# dlopen lives in libc from glibc 2.34; older systems need libdl.
list(APPEND OPPROF_LINK_LIBS ${CMAKE_DL_LIBS})
# The GPU runtime (nvcc); sets OPPROF_HAVE_NN_CUDA. Not in sanitizer builds:
# nvcc takes no -fsanitize, and its tests need a GPU anyway.
set(OPPROF_HAVE_NN_CUDA OFF)
if(OPPROF_HAVE_NVCC AND NOT OPPROF_SANITIZE)
  add_subdirectory(${CMAKE_SOURCE_DIR}/nn/cuda ${CMAKE_BINARY_DIR}/nn_cuda)
endif()
