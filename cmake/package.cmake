# What `cmake --install` puts down besides the binary, and the .deb CPack makes of it.
# The man page and the bash/zsh completions are written from the --help texts of the
# built gpuplan (cmake/gen_docs.sh), so they never drift from the options.
set(GPUPLAN_DOCS_DIR ${PROJECT_BINARY_DIR}/docs)
add_custom_command(
  OUTPUT ${GPUPLAN_DOCS_DIR}/gpuplan.1 ${GPUPLAN_DOCS_DIR}/gpuplan.bash ${GPUPLAN_DOCS_DIR}/_gpuplan
  COMMAND bash ${PROJECT_SOURCE_DIR}/cmake/gen_docs.sh $<TARGET_FILE:gpuplan> ${GPUPLAN_DOCS_DIR}
          ${PROJECT_VERSION}
  DEPENDS gpuplan ${PROJECT_SOURCE_DIR}/cmake/gen_docs.sh
  COMMENT "Writing the gpuplan man page and shell completions from --help")
add_custom_target(gpuplan_docs ALL DEPENDS ${GPUPLAN_DOCS_DIR}/gpuplan.1)
install(FILES ${GPUPLAN_DOCS_DIR}/gpuplan.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${GPUPLAN_DOCS_DIR}/gpuplan.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME gpuplan)
install(FILES ${GPUPLAN_DOCS_DIR}/_gpuplan DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gpuplan)
set(CPACK_PACKAGE_CONTACT "gpuplan maintainers <gpuplan@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Plans Bazel GPU tests onto a GPU fleet")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# Depends: from the shared libraries gpuplan links (dpkg-shlibdeps), none for a static build.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)
include(CPack)
