# The GPUPLAN_STATIC build (README "Install") needs no Debian shared library: the binary is
# not dynamic, runs with an empty environment and a loader path that leads nowhere, and runs
# chrooted into a folder holding nothing but itself (when run as root). Builds without
# GPUPLAN_STATIC skip this test; README "Install" has the command that makes one.
source test/integration/lib.sh
: "${GPUPLAN_BUILD_DIR:?CTest sets GPUPLAN_BUILD_DIR}"
if ! grep -q '^GPUPLAN_STATIC:BOOL=ON' "$GPUPLAN_BUILD_DIR/CMakeCache.txt"; then
  echo "SKIP: $GPUPLAN_BUILD_DIR is not a GPUPLAN_STATIC build" >&2
  exit 77
fi
if ! grep -q '^GPUPLAN_SIMDJSON_SOURCE:FILEPATH=.' "$GPUPLAN_BUILD_DIR/CMakeCache.txt"; then
  # Without simdjson's source only libc, libm and simdjson may be shared.
  others=$(ldd "$GPUPLAN" | awk '{print $1}' | grep -v -e '^linux-vdso' -e '^/lib64/ld-linux' \
             -e '^libc\.so' -e '^libm\.so' -e '^libsimdjson\.so' || true)
  [ -z "$others" ] || fail "the GPUPLAN_STATIC binary links shared: $others"
  echo "OK: only libc, libm and simdjson are shared (GPUPLAN_SIMDJSON_SOURCE unset)"
  exit 0
fi

requires file
file "$GPUPLAN" | grep -q 'statically linked' || fail "file does not call gpuplan statically linked: $(file "$GPUPLAN")"
ldd "$GPUPLAN" > "$SCRATCH/ldd" 2>&1 || true  # ldd exits 1 on a static binary
grep -q 'not a dynamic executable' "$SCRATCH/ldd" || fail "ldd finds shared libraries: $(cat "$SCRATCH/ldd")"
env -i LD_LIBRARY_PATH=/nonexistent "$GPUPLAN" --version | grep -q '^gpuplan ' || fail "gpuplan --version fails in an empty environment"
# plan (YAML fleet, XML query: yaml-cpp and expat) and verify (the plan's JSON: simdjson).
plan_and_verify() {  # runner... : runs gpuplan (as /gpuplan in the current folder's root) on the examples
  local status=0
  "$@" plan --fleet fleet.yaml query.xml -o plan.json 2>/dev/null || status=$?
  [ "$status" -eq 0 ] || [ "$status" -eq 3 ] || return 1
  "$@" verify plan.json --fleet fleet.yaml >/dev/null
}
mkdir -p "$SCRATCH/work"
cp examples/fleet.yaml examples/query.xml "$SCRATCH/work/"
(cd "$SCRATCH/work" && plan_and_verify env -i LD_LIBRARY_PATH=/nonexistent "$GPUPLAN") \
  || fail "gpuplan plan + verify fail in an empty environment"

if [ "$(id -u)" = 0 ] && command -v chroot >/dev/null; then
  jail=$SCRATCH/jail
  mkdir -p "$jail"
  cp "$GPUPLAN" "$jail/gpuplan"
  cp examples/fleet.yaml examples/query.xml "$jail/"
  chroot "$jail" /gpuplan --version | grep -q '^gpuplan ' || fail "gpuplan does not run chrooted with nothing but itself"
  plan_and_verify chroot "$jail" /gpuplan || fail "gpuplan plan + verify fail chrooted with nothing but itself"
  chroot "$jail" /gpuplan show /plan.json | grep -q . || fail "gpuplan show prints nothing chrooted"
  echo "OK: ran chrooted in a folder holding only the binary and its inputs"
fi
echo "OK: $GPUPLAN is static"
