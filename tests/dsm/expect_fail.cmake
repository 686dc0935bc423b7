# Run an MPI job that must fail: non-zero exit (not a hang: the job has TIMEOUT seconds)
# and output matching REGEX.
#   cmake -DMPIEXEC=... -DNP=... -DPROG=... -DMODE=... -DREGEX=... -P expect_fail.cmake
set(ENV{ORN_TIMEOUT} 1)
execute_process(COMMAND ${MPIEXEC} -n ${NP} ${PROG} ${MODE}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
message("exit: ${rc}\n${out}${err}")
if("${rc}" STREQUAL "0")
  message(FATAL_ERROR "the job succeeded; it should have failed")
endif()
if(NOT "${rc}" MATCHES "^[0-9]+$")
  message(FATAL_ERROR "the job did not end by itself: ${rc}")
endif()
if(NOT "${out}${err}" MATCHES "${REGEX}")
  message(FATAL_ERROR "output does not match: ${REGEX}")
endif()
