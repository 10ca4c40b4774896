# Sourced by the integration tests that validate exports with published validators:
# npm_tools installs the packages pinned in test/integration/npm/package-lock.json into the
# build directory once (npm ci, under a lock, so parallel tests share one install) and sets
# NPM_TOOLS to the folder that holds node_modules.
npm_tools() {
  local lock=$SOURCE_DIR/test/integration/npm/package-lock.json
  NPM_TOOLS=${GPUPLAN_BUILD_DIR:-$SOURCE_DIR/build-asan}/npm-tools
  mkdir -p "$NPM_TOOLS"
  (
    flock 9
    if ! cmp -s "$lock" "$NPM_TOOLS/package-lock.json" || [ ! -d "$NPM_TOOLS/node_modules" ]; then
      cp "$SOURCE_DIR/test/integration/npm/package.json" "$lock" "$NPM_TOOLS/"
      npm ci --prefix "$NPM_TOOLS" --no-audit --no-fund --loglevel=error >&2 ||
        { rm -f "$NPM_TOOLS/package-lock.json"; exit 1; }
    fi
  ) 9> "$NPM_TOOLS.lock" || fail "npm ci of the pinned validators failed (needs the npm registry)"
}
