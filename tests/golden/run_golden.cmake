# Runs one golden case (see CMakeLists.txt here). Called by CTest as
#   cmake -DORIONC=... -DCASE_DIR=... -DNAME=... -DPHASE=... -DWORK_DIR=... -P run_golden.cmake
# orionc runs in the directory of its input with a relative file name, so the file names
# in diagnostics are the same on every machine.
cmake_minimum_required(VERSION 3.20)
file(MAKE_DIRECTORY "${WORK_DIR}")

if(EXISTS "${CASE_DIR}/${NAME}.gen.cmake")
  set(run_dir "${WORK_DIR}")
  set(OUT "${WORK_DIR}/${NAME}.orn")
  include("${CASE_DIR}/${NAME}.gen.cmake")
else()
  set(run_dir "${CASE_DIR}")
endif()

# <name>.args, if present, is the whole command line after "orionc" (its first line, split
# as a shell would), with $FILE standing for the input's name.
if(EXISTS "${CASE_DIR}/${NAME}.args")
  file(STRINGS "${CASE_DIR}/${NAME}.args" line LIMIT_COUNT 1)
  string(REPLACE "$FILE" "${NAME}.orn" line "${line}")
  separate_arguments(args UNIX_COMMAND "${line}")
elseif(PHASE STREQUAL "ast")
  set(args --emit=ast "${NAME}.orn")
elseif(PHASE STREQUAL "explain")
  set(args --explain "${NAME}.orn")
elseif(PHASE STREQUAL "explain_json")
  set(args --explain=json "${NAME}.orn")
else()
  set(args --check "${NAME}.orn")
endif()

execute_process(COMMAND "${ORIONC}" ${args}
                WORKING_DIRECTORY "${run_dir}"
                OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
set(actual "exit: ${rc}\n${out}")
set(expected_file "${CASE_DIR}/${NAME}.expected")

if("$ENV{ORN_GOLDEN_UPDATE}")
  file(WRITE "${expected_file}" "${actual}")
  message(STATUS "updated ${expected_file}")
  return()
endif()
if(NOT EXISTS "${expected_file}")
  message(FATAL_ERROR "${expected_file} is missing; create it with ORN_GOLDEN_UPDATE=1 "
                      "ctest -R golden and review it. Output was:\n${actual}")
endif()
file(READ "${expected_file}" expected)
if(NOT actual STREQUAL expected)
  set(actual_file "${WORK_DIR}/${NAME}.actual")
  file(WRITE "${actual_file}" "${actual}")
  find_program(DIFF diff)
  if(DIFF)
    execute_process(COMMAND "${DIFF}" -u "${expected_file}" "${actual_file}")
  else()
    message("expected:\n${expected}\nactual:\n${actual}")
  endif()
  message(FATAL_ERROR "golden mismatch for ${PHASE}/${NAME} (actual output in ${actual_file}; "
                      "ORN_GOLDEN_UPDATE=1 ctest -R golden rewrites expectations)")
endif()
