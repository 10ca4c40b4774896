def test_fp16(): pass
def test_fp32(): pass
def test_bf16(): pass
