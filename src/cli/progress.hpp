#pragma once
// Progress on long work: one line on standard error, rewritten in place, naming the stage
// ("reading query.xml: 45% of 64 MB", "planning 139,000 units on 8,000 GPUs", "writing plan.json:
// 80 MB"). Shown only when standard error is a terminal, CI is unset, --quiet was not given,
// and the command has run about a second; cleared before anything else is printed.
#include <CLI/CLI.hpp>
#include <string>

namespace gpuplan::cli::progress {

/// Adds --quiet (no progress line) to a command that can run long.
void add_quiet_flag(CLI::App& command);

/// The stage now under way; starts the line's clock on the first call. `input_bytes`: the size
/// of the input being read, to show how far reading has got (0: not reading).
void stage(std::string text, long long input_bytes = 0);
/// Counts bytes written by the current stage.
void wrote(long long bytes);
/// Clears the line and stops; what is printed next starts on a clean line.
void finish();
/// The text of the last stage() ("reading query.xml"), "" before the first: safe to read when
/// memory has run out.
const char* current_stage();

}  // namespace gpuplan::cli::progress
