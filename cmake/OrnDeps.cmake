# Find every dependency; a missing one stops the configure step with a message that names
# the Debian package to install (scripts/install-deps.sh installs them all).
function(orn_missing what pkg)
  message(FATAL_ERROR
    "Orion needs ${what}, which was not found.\n"
    "Install it with:  sudo apt-get install ${pkg}\n"
    "or install everything at once with:  sudo scripts/install-deps.sh")
endfunction()

find_program(RE2C_EXECUTABLE re2c)
if(NOT RE2C_EXECUTABLE)
  orn_missing("re2c (lexer generator)" "re2c")
endif()

find_package(BISON 3.5 QUIET)
if(NOT BISON_FOUND)
  orn_missing("bison >= 3.5 (parser generator)" "bison")
endif()

find_package(Threads REQUIRED)
find_package(MPI QUIET COMPONENTS C)
if(NOT MPI_C_FOUND)
  orn_missing("MPI (MPICH) with its C compiler wrapper" "mpich libmpich-dev")
endif()
find_program(MPIEXEC_EXECUTABLE NAMES mpiexec mpiexec.hydra mpirun)
if(NOT MPIEXEC_EXECUTABLE)
  orn_missing("mpiexec (MPICH's launcher)" "mpich")
endif()

find_package(PkgConfig QUIET)
if(NOT PKG_CONFIG_FOUND)
  orn_missing("pkg-config" "pkg-config")
endif()
pkg_check_modules(FFI QUIET IMPORTED_TARGET libffi)
if(NOT FFI_FOUND)
  orn_missing("libffi" "libffi-dev")
endif()
pkg_check_modules(OPENBLAS QUIET IMPORTED_TARGET openblas)
if(NOT OPENBLAS_FOUND)
  orn_missing("OpenBLAS" "libopenblas-dev")
endif()
pkg_check_modules(EDIT QUIET IMPORTED_TARGET libedit)
if(NOT EDIT_FOUND)
  orn_missing("libedit (line editing for the REPL)" "libedit-dev")
endif()

# CUDA is optional: used when nvcc is present, never required.
find_program(NVCC_EXECUTABLE nvcc HINTS /usr/local/cuda/bin)
if(NVCC_EXECUTABLE)
  message(STATUS "Orion: nvcc found (${NVCC_EXECUTABLE}); --gpu builds are available")
else()
  message(STATUS "Orion: nvcc not found; --gpu builds are disabled")
endif()
