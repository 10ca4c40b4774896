# Never run: gpuplan's tests only query this workspace.
