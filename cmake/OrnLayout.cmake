# Where the runtime of generated programs lies: its static libraries in lib/orion, the
# headers generated C includes in include/orion (GNUInstallDirs' LIBDIR and INCLUDEDIR).
# orionc and orion find both relative to their own executable (tools/cc_driver.c), so an
# installation can be moved as a whole. The build tree has the same shape: orionc in tools/,
# the libraries in BUILD/lib/orion, links to the headers in BUILD/include/orion
# (cmake/OrnInstall.cmake); the one orionc binary works in both places.
# On a multiarch system (Debian) LIBDIR is lib/<triplet> for every prefix, not only /usr:
# the runtime and orion.pc are specific to the architecture, and the Debian package puts
# them where Debian expects them (the loader and pkg-config search /usr/local alike).
if(NOT DEFINED CMAKE_INSTALL_LIBDIR AND CMAKE_LIBRARY_ARCHITECTURE)
  set(CMAKE_INSTALL_LIBDIR lib/${CMAKE_LIBRARY_ARCHITECTURE}
      CACHE PATH "Object code libraries (LIBDIR)")
endif()
include(GNUInstallDirs)
foreach(d BINDIR LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${d}}")
    message(FATAL_ERROR "CMAKE_INSTALL_${d} must be relative to the prefix (an installed "
                        "orionc finds its runtime relative to itself)")
  endif()
endforeach()
set(ORN_RT_LIBDIR ${CMAKE_INSTALL_LIBDIR}/orion)
set(ORN_RT_INCDIR ${CMAKE_INSTALL_INCLUDEDIR}/orion)
file(RELATIVE_PATH ORN_REL_LIBDIR /p/${CMAKE_INSTALL_BINDIR} /p/${ORN_RT_LIBDIR})
file(RELATIVE_PATH ORN_REL_INCDIR /p/${CMAKE_INSTALL_BINDIR} /p/${ORN_RT_INCDIR})
file(RELATIVE_PATH rel ${CMAKE_BINARY_DIR}/tools ${CMAKE_BINARY_DIR}/${ORN_RT_LIBDIR})
if(NOT rel STREQUAL ORN_REL_LIBDIR)
  message(FATAL_ERROR "CMAKE_INSTALL_BINDIR must be one folder deep (as 'bin'): orionc "
                      "finds its runtime at the same relative path from tools/ in the build tree")
endif()
# The headers of the runtime that generated C includes (orn_std.h and what it includes; the
# GPU ones for --gpu), and its static libraries in link order.
set(ORN_RT_HEADERS stdlib/orn_std.h runtime/rt.h runtime/plan.h dsm/dsm.h runtime/orn_rng.h
    runtime/orn_box.h runtime/orn_std_scalar.h runtime/gpu/rt_gpu.h runtime/gpu/orn_gpu.h
    runtime/gpu/orn_gpu_dev.cuh)
set(ORN_RT_LIBS orn_std orn_rt orn_plan orn_dsm orn_support)
# Debug information and __FILE__ name files relative to the source and build trees (as
# Debian's builds do), so that nothing installed holds a path of either and the prefix can
# move. gdb finds the sources when started in the source tree's root (or `directory SRC`).
add_compile_options(-ffile-prefix-map=${PROJECT_SOURCE_DIR}=.
                    -ffile-prefix-map=${PROJECT_BINARY_DIR}=.)
