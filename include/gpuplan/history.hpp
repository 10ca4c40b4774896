#pragma once
// Learning durations and GPU memory from past runs (SPEC section 3).
// The readers and the estimator are written by the history work; `gpuplan plan --history`
// reaches them through src/cli/history_input.hpp.
