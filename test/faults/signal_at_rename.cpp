// A stop signal that comes as an output file is put in place, for LD_PRELOAD: the first rename()
// whose target ends with GPUPLAN_SIGNAL_AT_RENAME (an output's name: gpuplan writes each output to a
// temporary file and renames it over the target, cli/io.cpp) raises SIGTERM in the process first, as
// a Slurm time limit or a second Ctrl-C landing then would. Every other call is libc's.
// exec_report_signal_test preloads it into exec.
#include <dlfcn.h>
#include <signal.h>

#include <cstdlib>
#include <cstring>

extern "C" int rename(const char* from, const char* to) {
  using Rename = int (*)(const char*, const char*);
  static const auto libc_rename = reinterpret_cast<Rename>(::dlsym(RTLD_NEXT, "rename"));
  static bool raised = false;
  const char* suffix = std::getenv("GPUPLAN_SIGNAL_AT_RENAME");
  const std::size_t length = std::strlen(to), wanted = suffix ? std::strlen(suffix) : 0;
  if (!raised && wanted > 0 && length >= wanted && std::strcmp(to + length - wanted, suffix) == 0) {
    raised = true;
    ::raise(SIGTERM);
  }
  return libc_rename(from, to);
}
