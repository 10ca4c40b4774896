// Stands in for an IREE check module source: the workspace is only queried.
