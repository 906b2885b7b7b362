# make deb: three Debian packages from the install components, by CPack's DEB generator.
#   libclosure0     the shared library (component libclosure)
#   libclosure-dev  headers, static library, pkg-config file, CMake package with the leak-check
#                   module closuretrace.cmake (component dev)
#   closuretrace    the command and its man pages (component closuretrace)
# Configured with CMAKE_INSTALL_PREFIX=/usr (the Makefile's deb target); each package carries its
# copyright file and changelog (packaging/), binaries are stripped, shlibs and the ldconfig
# trigger generated, Depends found by dpkg-shlibdeps.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME closuretrace)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "closuretrace maintainers <closuretrace@lists.example.org>")
set(CPACK_PACKAGE_VENDOR "closuretrace")
set(CPACK_PACKAGE_HOMEPAGE_URL "https://closuretrace.example.org")
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_STRIP_FILES ${CMAKE_INSTALL_BINDIR}/closuretrace
	${CMAKE_INSTALL_LIBDIR}/libclosure.so.${PROJECT_VERSION})
set(CPACK_COMPONENTS_ALL libclosure dev closuretrace)

set(CPACK_DEBIAN_LIBCLOSURE_PACKAGE_NAME libclosure0)
set(CPACK_DEBIAN_LIBCLOSURE_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON) # only the package with a shared library gets one
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
# ldconfig through the trigger, as Debian policy asks of a shared library package.
file(WRITE ${PROJECT_BINARY_DIR}/packaging/triggers "activate-noawait ldconfig\n")
set(CPACK_DEBIAN_LIBCLOSURE_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/packaging/triggers)
set(CPACK_COMPONENT_LIBCLOSURE_DESCRIPTION "kernel-style closures in userspace
libclosure is a userspace implementation of the Linux kernel's closure API
(reference count, continuation, parent) with a small workqueue and a USDT
probe on every operation.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libclosure-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_DEV_DEPENDS libclosure)
set(CPACK_DEBIAN_DEV_PACKAGE_SUGGESTS closuretrace) # what its leak-check module runs
# closure.h includes <sys/sdt.h> when the probes are compiled in (closure_config.h says so).
if(CLOSURE_PROBES)
	set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS systemtap-sdt-dev)
endif()
set(CPACK_COMPONENT_DEV_DESCRIPTION "kernel-style closures in userspace (development files)
Headers, static library, pkg-config file (closure) and CMake package
(find_package(closure)) for programs built on libclosure, with the CMake
module that runs a project's tests under closuretrace check
(include(closuretrace); skipped with a message without closuretrace).")

set(CPACK_DEBIAN_CLOSURETRACE_PACKAGE_NAME closuretrace)
set(CPACK_DEBIAN_CLOSURETRACE_PACKAGE_SECTION devel)
set(CPACK_COMPONENT_CLOSURETRACE_DESCRIPTION "trace and leak-check libclosure programs
closuretrace records every closure operation of a libclosure program with
BPF, draws the closure trees, reports lifetimes and leaks blamed on
file:line, and runs a program's tests as a leak check (closuretrace check).")

# Each package's /usr/share/doc/PACKAGE: the copyright file and the compressed changelog.
foreach(component libclosure dev closuretrace)
	string(TOUPPER ${component} upper)
	set(package ${CPACK_DEBIAN_${upper}_PACKAGE_NAME})
	set(doc ${CMAKE_INSTALL_DATAROOTDIR}/doc/${package})
	install(FILES ${PROJECT_SOURCE_DIR}/packaging/copyright DESTINATION ${doc}
		COMPONENT ${component} EXCLUDE_FROM_ALL)
	install(FILES ${PROJECT_BINARY_DIR}/packaging/changelog.Debian.gz DESTINATION ${doc}
		COMPONENT ${component} EXCLUDE_FROM_ALL)
endforeach()
add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/packaging/changelog.Debian.gz
	COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/packaging
	COMMAND gzip -9nc ${PROJECT_SOURCE_DIR}/packaging/changelog
		> ${PROJECT_BINARY_DIR}/packaging/changelog.Debian.gz
	DEPENDS ${PROJECT_SOURCE_DIR}/packaging/changelog VERBATIM)
add_custom_target(package_docs DEPENDS ${PROJECT_BINARY_DIR}/packaging/changelog.Debian.gz)
include(CPack)
