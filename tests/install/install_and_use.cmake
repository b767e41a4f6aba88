# Installs the built sparcon into a fresh prefix, then configures, builds and runs a consumer
# project that finds it with find_package(sparcon). Run by ctest with -D BUILD_DIR=... and
# -D SOURCE_DIR=... (the consumer sources: consumer/ for the core, torch_consumer/ for the
# torch component) -D WORK_DIR=... (scratch) -D PROGRAM=... (the consumer's executable).
file(REMOVE_RECURSE "${WORK_DIR}")
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}")
  endif()
endfunction()
run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix")
run(${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}/build" -G Ninja
    "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix" -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run("${WORK_DIR}/build/${PROGRAM}")
message(STATUS "find_package(sparcon) from an installed copy: ${PROGRAM} ok")
