// Two GEMM cases; the fixture's run uses --gtest_filter=Gemm.Fp16, as a developer's
// `bazel test //gpu:gemm_test --test_filter=Gemm.Fp16` runs it (README.md says how).
#include <gtest/gtest.h>

TEST(Gemm, Fp16) { EXPECT_EQ(2 * 2, 4); }
TEST(Gemm, Fp32) { EXPECT_EQ(3 * 3, 9); }
