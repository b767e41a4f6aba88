# ctest TorchScript.SavedFromPythonRunsInCpp: writes the scripted module with Python
# (save_scripted.py, against the freshly built library), then loads and checks it from C++.
# cmake -D PYTHON=... -D SCRIPT=... -D LIBRARY=... -D RUNNER=... -D MODULE=... -P run_test.cmake
foreach(var PYTHON SCRIPT LIBRARY RUNNER MODULE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_test.cmake: -D ${var}=... is required")
  endif()
endforeach()

file(REMOVE ${MODULE})
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env SPARCON_LIBRARY=${LIBRARY} OMP_NUM_THREADS=1 ${PYTHON} ${SCRIPT} ${MODULE}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "save_scripted.py failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env OMP_NUM_THREADS=1 ${RUNNER} ${MODULE} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "sparcon_torchscript_runner failed (${rc})")
endif()
