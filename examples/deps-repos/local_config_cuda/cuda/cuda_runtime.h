// cudart stand-in
