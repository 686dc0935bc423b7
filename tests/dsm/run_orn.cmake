# run_orn.cmake: compile an Orion program with orionc (generated C at -Wall -Wextra -Werror),
# or run a compiled one under mpiexec -n NP and compare what it prints with the expected text.
# Usage: cmake -DORIONC=... -DSRC=prog.orn -DBIN=prog -P run_orn.cmake            (compile)
#        cmake -DMPIEXEC=... -DNP=... -DBIN=prog -DEXPECTED=prog.expected -P run_orn.cmake
# (tests/dsm/CMakeLists.txt compiles each program once, a fixture of its runs at -n 1 to 4)
if(DEFINED SRC)
  set(ENV{ORN_CFLAGS} "-Wall -Wextra -Werror")
  execute_process(COMMAND ${ORIONC} ${SRC} -o ${BIN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "orionc ${SRC} exited ${rc}:\n${out}")
  endif()
  return()
endif()
execute_process(COMMAND ${MPIEXEC} -n ${NP} ${BIN}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${BIN} at -n ${NP} exited ${rc}:\n${out}${err}")
endif()
file(READ ${EXPECTED} want)
if(NOT out STREQUAL want)
  message(FATAL_ERROR "${BIN} at -n ${NP}: output differs\n--- expected\n${want}--- got\n${out}")
endif()
