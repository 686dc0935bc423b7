# run_orn.cmake: compile an Orion program with orionc (generated C at -Wall -Wextra -Werror),
# run it under mpiexec -n NP and compare what it prints with the expected text.
# Usage: cmake -DORIONC=... -DMPIEXEC=... -DNP=... -DSRC=prog.orn -DEXPECTED=prog.expected
#              -DWORK=scratch-dir -P run_orn.cmake
get_filename_component(name ${SRC} NAME_WE)
set(bin ${WORK}/${name}.np${NP})
set(ENV{ORN_CFLAGS} "-Wall -Wextra -Werror")
execute_process(COMMAND ${ORIONC} ${SRC} -o ${bin}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "orionc ${SRC} exited ${rc}:\n${out}")
endif()
execute_process(COMMAND ${MPIEXEC} -n ${NP} ${bin}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${bin} at -n ${NP} exited ${rc}:\n${out}${err}")
endif()
file(READ ${EXPECTED} want)
if(NOT out STREQUAL want)
  message(FATAL_ERROR "${bin} at -n ${NP}: output differs\n--- expected\n${want}--- got\n${out}")
endif()
