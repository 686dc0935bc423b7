# Installation (cmake --install BUILD --prefix P) and the Debian package (cpack -G DEB):
#   bin/orionc, bin/orion                   the compiler and the REPL
#   LIB/orion/liborn_*.a, include/orion/    the runtime generated programs link and include
#   LIB/pkgconfig/orion.pc                  pkg-config --cflags --libs orion
#   LIB/cmake/Orion/OrionConfig.cmake       find_package(Orion)
#   share/doc/orion/                        language.md, repl.md
#   share/man/man1/orionc.1, orion.1; man7/orion.7   the manual pages (docs/man/)
# LIB is lib/<multiarch triplet> on Debian (lib/x86_64-linux-gnu), else lib (OrnLayout).
# Nothing installed holds a path of the build or source tree, and every path between
# installed files is relative (cmake/OrnLayout.cmake): a prefix can be moved whole.

# The build tree in the installed shape, for the orionc and orion in tools/: the runtime's
# libraries are built into BUILD/lib/orion, its headers linked into BUILD/include/orion.
set_target_properties(${ORN_RT_LIBS} PROPERTIES
                      ARCHIVE_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/${ORN_RT_LIBDIR})
file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/${ORN_RT_INCDIR})
foreach(h ${ORN_RT_HEADERS})
  get_filename_component(name ${h} NAME)
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${h} ${PROJECT_BINARY_DIR}/${ORN_RT_INCDIR}/${name}
       SYMBOLIC COPY_ON_ERROR)
  list(APPEND headers ${PROJECT_SOURCE_DIR}/${h})
endforeach()

install(TARGETS orionc orion RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS ${ORN_RT_LIBS} ARCHIVE DESTINATION ${ORN_RT_LIBDIR})
install(FILES ${headers} DESTINATION ${ORN_RT_INCDIR})

# Manual pages, compressed as Debian installs them (man reads them either way).
set(pages orionc.1 orion.1 orion.7)
set(gz "")
foreach(p ${pages})
  set(out ${PROJECT_BINARY_DIR}/man/${p})
  add_custom_command(OUTPUT ${out}.gz
    COMMAND ${CMAKE_COMMAND} -E copy ${PROJECT_SOURCE_DIR}/docs/man/${p} ${out}
    COMMAND gzip -9nf ${out}
    DEPENDS ${PROJECT_SOURCE_DIR}/docs/man/${p} VERBATIM)
  string(REGEX REPLACE ".*\\." "" section ${p})
  install(FILES ${out}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section})
  list(APPEND gz ${out}.gz)
endforeach()
add_custom_target(orn_man ALL DEPENDS ${gz})

# The language reference and the REPL's page, which the manual pages point to.
install(FILES docs/language.md docs/repl.md DESTINATION ${CMAKE_INSTALL_DOCDIR})

# orion.pc and OrionConfig.cmake: the runtime's flags as orionc uses them (tools/), paths
# relative to the file's own folder. A sanitizer build's runtime needs the sanitizers' own
# runtime wherever it is linked.
set(ORN_PC_CFLAGS "")
set(ORN_USER_FLAGS "")
if(ORN_SANITIZE)
  set(ORN_USER_FLAGS -fsanitize=address,undefined)
  set(ORN_PC_CFLAGS " -fsanitize=address,undefined")
endif()
set(ORN_PC_LIBS "${ORN_PC_CFLAGS}")
foreach(l ${ORN_RT_LIBS})
  string(APPEND ORN_PC_LIBS " -l${l}")
endforeach()
list(JOIN ORN_LINK_LIST " " link)
string(APPEND ORN_PC_LIBS " ${link}")
file(RELATIVE_PATH ORN_PC_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
string(REGEX REPLACE "/$" "" ORN_PC_PREFIX "${ORN_PC_PREFIX}")
configure_file(cmake/orion.pc.in ${PROJECT_BINARY_DIR}/install/orion.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/install/orion.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

set(cmakedir ${CMAKE_INSTALL_LIBDIR}/cmake/Orion)
file(RELATIVE_PATH ORN_CMAKE_PREFIX /p/${cmakedir} /p)
string(REGEX REPLACE "/$" "" ORN_CMAKE_PREFIX "${ORN_CMAKE_PREFIX}")
configure_file(cmake/OrionConfig.cmake.in ${PROJECT_BINARY_DIR}/install/OrionConfig.cmake @ONLY)
include(CMakePackageConfigHelpers)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/install/OrionConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/install/OrionConfig.cmake
              ${PROJECT_BINARY_DIR}/install/OrionConfigVersion.cmake
        DESTINATION ${cmakedir})

# The Debian package: what installs above, under /usr, the executables stripped. Shared libraries orion loads come
# from dpkg-shlibdeps (libc6, libmpich12, libffi8, libopenblas0, libedit2); compiling a
# program also needs a C compiler, MPI's headers and libmpich.so, and the OpenBLAS the
# configuration links (its -dev package, asked of dpkg when it is there).
function(orn_deb_owner out file fallback)
  set(pkg ${fallback})
  find_program(DPKG_QUERY dpkg-query)
  if(DPKG_QUERY)
    execute_process(COMMAND ${DPKG_QUERY} -S ${file} OUTPUT_VARIABLE o ERROR_QUIET
                    RESULT_VARIABLE rc)
    if(rc EQUAL 0 AND o MATCHES "^([a-z0-9.+-]+)[:,]")
      set(pkg ${CMAKE_MATCH_1})
    endif()
  endif()
  set(${out} ${pkg} PARENT_SCOPE)
endfunction()
list(GET MPI_C_LIBRARIES 0 mpilib)
orn_deb_owner(mpidev ${mpilib} libmpich-dev)
orn_deb_owner(blasdev "${OPENBLAS_LINK_LIBRARIES}" libopenblas-dev)
set(CPACK_PACKAGE_NAME orion)
set(CPACK_PACKAGE_VENDOR "Orion")
set(CPACK_PACKAGE_CONTACT "Orion maintainers <maintainers@users.noreply.a-seed-453cc59e.example>"
    CACHE STRING "Maintainer of the Debian package")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "parallel for-loops compiled to MPI programs")
set(CPACK_PACKAGE_DESCRIPTION
"Orion compiles serial-looking training loops over distributed arrays into
parallel programs for a cluster: orionc analyses every array subscript of every
parallel_for loop, derives the dependences and picks a schedule that keeps
them. Programs run under MPI (MPICH) on a distributed shared-memory runtime.
This package holds the compiler orionc, the REPL orion, the runtime library and
its headers, a pkg-config file and a CMake package.")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "mpich, ${mpidev}, ${blasdev}, gcc | c-compiler, libc6-dev")
include(CPack)
