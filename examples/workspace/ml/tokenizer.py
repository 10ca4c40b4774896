"""A tokenizer on numpy: no GPU code."""
