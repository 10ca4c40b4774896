// Never built: gpuplan's tests only query this workspace.
