#include <gtest/gtest.h>
// A GPU test switched off until its kernel is fixed: googletest reports DISABLED_ tests as not run.
TEST(GemmTest, DISABLED_Fp16) {}
TEST(GemmTest, DISABLED_Bf16) {}
