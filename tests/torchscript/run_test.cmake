# ctest TorchScript.SavedFromPythonRunsInCpp: writes the scripted module with Python
# (save_scripted.py, against the freshly built library), then loads and checks it from C++.
# With -D PACKAGE_DIR=... every nn.Module of the sparcon package is also scripted and saved
# there (save_scripted.py --package), and the runner checks each of them.
# cmake -D PYTHON=... -D SCRIPT=... -D LIBRARY=... -D RUNNER=... -D MODULE=... [-D PACKAGE_DIR=...] -P run_test.cmake
foreach(var PYTHON SCRIPT LIBRARY RUNNER MODULE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_test.cmake: -D ${var}=... is required")
  endif()
endforeach()

file(REMOVE ${MODULE})
set(package_args)
if(DEFINED PACKAGE_DIR)
  file(REMOVE_RECURSE ${PACKAGE_DIR})
  set(package_args --package ${PACKAGE_DIR})
endif()
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env SPARCON_LIBRARY=${LIBRARY} OMP_NUM_THREADS=1 ${PYTHON} ${SCRIPT} ${MODULE}
          ${package_args}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "save_scripted.py failed (${rc})")
endif()
set(package_modules)
if(DEFINED PACKAGE_DIR)
  file(GLOB package_modules ${PACKAGE_DIR}/*.pt)
  list(LENGTH package_modules count)
  if(count EQUAL 0)
    message(FATAL_ERROR "save_scripted.py --package wrote no module into ${PACKAGE_DIR}")
  endif()
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env OMP_NUM_THREADS=1 ${RUNNER} ${MODULE} ${package_modules}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "sparcon_torchscript_runner failed (${rc})")
endif()
