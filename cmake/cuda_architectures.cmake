# Chooses CMAKE_CUDA_ARCHITECTURES before project() (which would otherwise fill in the
# compiler's default). An explicit value (a preset, -D...) wins. Unset, empty or "detect":
# the GPUs in this machine, read with nvidia-smi (9.0 -> 90a, so Hopper-only instructions
# are available; others as their number). No GPU found: sm_75 and sm_90a, with one line
# saying so. CMake's own `native` also works, but it fails outright without a GPU.
function(memlab_detect_cuda_architectures out_var)
  set(archs "")
  find_program(MEMLAB_NVIDIA_SMI nvidia-smi)
  if(MEMLAB_NVIDIA_SMI)
    execute_process(COMMAND ${MEMLAB_NVIDIA_SMI} --query-gpu=compute_cap --format=csv,noheader
                    OUTPUT_VARIABLE caps RESULT_VARIABLE rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(rc EQUAL 0)
      string(REPLACE "\n" ";" caps "${caps}")
      foreach(cap IN LISTS caps)
        string(STRIP "${cap}" cap)
        if(cap MATCHES "^([0-9]+)\\.([0-9])$")
          set(arch "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
          if(arch STREQUAL "90")
            set(arch "90a")
          endif()
          list(APPEND archs ${arch})
        endif()
      endforeach()
      list(REMOVE_DUPLICATES archs)
    endif()
  endif()
  if(archs STREQUAL "")
    message(STATUS "memlab: no GPU detected (nvidia-smi lists none); building for sm_75 and sm_90a "
                   "(choose with -DCMAKE_CUDA_ARCHITECTURES=..., or the portable preset)")
    set(archs "75;90a")
  else()
    message(STATUS "memlab: building for the GPU in this machine: ${archs}")
  endif()
  set(${out_var} "${archs}" PARENT_SCOPE)
endfunction()

if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "" OR
   CMAKE_CUDA_ARCHITECTURES STREQUAL "detect")
  memlab_detect_cuda_architectures(_memlab_archs)
  set(CMAKE_CUDA_ARCHITECTURES "${_memlab_archs}" CACHE STRING "CUDA architectures to build for" FORCE)
endif()
