import sys
sys.path.insert(0, "tools")
from tools import gpu_check
gpu_check.main()
