# GPUPLAN_STATIC: a gpuplan that needs no Debian shared library (README "Install").
# Debian 12 ships static archives for yaml-cpp, expat and re2, none for fmt (used header-only
# here instead) and none for simdjson (libsimdjson-dev has the header and the .so only).
# With GPUPLAN_SIMDJSON_SOURCE (upstream's singleheader/simdjson.cpp at 3.0.1, the version
# of Debian's header) simdjson is compiled in and the binary is fully `-static`; without it
# simdjson stays shared and the rest (libstdc++, libgcc included) is linked statically.
find_library(GPUPLAN_YAML_CPP_A NAMES libyaml-cpp.a REQUIRED)
find_library(GPUPLAN_EXPAT_A NAMES libexpat.a REQUIRED)
# re2 (libre2-dev has its .a; Debian 12's re2 needs no abseil): pkg-config's imported target
# names the .so by its full path, which -static cannot link, so it is pointed at the archive.
find_library(GPUPLAN_RE2_A NAMES libre2.a REQUIRED)
set_target_properties(PkgConfig::RE2 PROPERTIES INTERFACE_LINK_LIBRARIES "${GPUPLAN_RE2_A};Threads::Threads")
target_link_libraries(gpuplan_deps INTERFACE nlohmann_json::nlohmann_json fmt::fmt-header-only
                      ${GPUPLAN_YAML_CPP_A} ${GPUPLAN_EXPAT_A} Threads::Threads)
if(GPUPLAN_SIMDJSON_SOURCE)
  add_library(gpuplan_simdjson STATIC ${GPUPLAN_SIMDJSON_SOURCE})
  target_link_libraries(gpuplan_deps INTERFACE gpuplan_simdjson)
  set_source_files_properties(${GPUPLAN_SIMDJSON_SOURCE} PROPERTIES COMPILE_OPTIONS "-w")
  target_link_options(gpuplan_deps INTERFACE -static)
  message(STATUS "gpuplan: fully static (simdjson from ${GPUPLAN_SIMDJSON_SOURCE})")
else()
  target_link_libraries(gpuplan_deps INTERFACE simdjson::simdjson)
  target_link_options(gpuplan_deps INTERFACE -static-libstdc++ -static-libgcc)
  message(WARNING "gpuplan: Debian has no libsimdjson.a; simdjson and libc stay shared. "
                  "Set GPUPLAN_SIMDJSON_SOURCE for a fully static binary (README \"Install\").")
endif()
