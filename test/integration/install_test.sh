# Installing as a user or a package manager would: `cmake --install` puts down the binary, a
# man page and bash/zsh completions written from the --help texts (every command is in the
# man page, completion offers the real subcommands and options), and CPack's .deb carries
# the same files with Depends taken from the shared libraries the binary links.
source test/integration/lib.sh
requires cpack dpkg-deb dpkg-shlibdeps
: "${GPUPLAN_BUILD_DIR:?CTest sets GPUPLAN_BUILD_DIR}"
export ASAN_OPTIONS=detect_leaks=0

root=$SCRATCH/root
cmake --install "$GPUPLAN_BUILD_DIR" --prefix "$root/usr" >/dev/null
bin=$root/usr/bin/gpuplan
man=$root/usr/share/man/man1/gpuplan.1
bashc=$root/usr/share/bash-completion/completions/gpuplan
zshc=$root/usr/share/zsh/vendor-completions/_gpuplan
for f in "$bin" "$man" "$bashc" "$zshc"; do [ -f "$f" ] || fail "cmake --install did not put down ${f#"$root"}"; done
"$bin" --version | grep -q "^gpuplan " || fail "the installed gpuplan does not print its version"

# The man page: one section per command, each with that command's options.
subs=$("$bin" --help | awk '/^Subcommands:/ {s = 1; next} /^[^ ]/ {s = 0} s && /^  [^ ]/ {print $1}')
[ "$(echo "$subs" | wc -w)" -ge 10 ] || fail "gpuplan --help lists too few subcommands: $subs"
for sub in $subs; do
  grep -q "^\.SH \"GPUPLAN ${sub^^}\"" "$man" || fail "the man page has no section for gpuplan $sub"
done
grep -q -- "--fleet" "$man" || fail "the man page lacks plan's --fleet"
if command -v man >/dev/null; then
  MANWIDTH=100 man -l "$man" 2>"$SCRATCH/man.err" | grep -q "Usage: gpuplan plan" || fail "man -l does not render the plan section"
  [ ! -s "$SCRATCH/man.err" ] || fail "man -l warns: $(cat "$SCRATCH/man.err")"
elif [ -n "${CI:-}" ]; then
  fail "man is missing (scripts/setup installs man-db)"
fi

# bash completion: subcommands, nested subcommands, options of the command typed so far.
complete_words() {  # words... (the last one is being completed)
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _gpuplan; echo "${COMPREPLY[*]}"' \
    _ "$bashc" gpuplan "$@"
}
[ "$(complete_words pl)" = plan ] || fail "bash completion of 'gpuplan pl' gave '$(complete_words pl)'"
[ "$(complete_words plan --fl)" = --fleet ] || fail "bash completion of 'gpuplan plan --fl' is not --fleet"
[ "$(complete_words export sl)" = slurm ] || fail "bash completion of 'gpuplan export sl' is not slurm"
complete_words export slurm -- | grep -qw -- --partition || fail "bash completion misses export slurm --partition"
complete_words show -- | grep -qw -- --policy && fail "bash completion offers plan's --policy to show"
if command -v zsh >/dev/null; then
  zsh -n "$zshc" || fail "the zsh completion does not parse"
elif [ -n "${CI:-}" ]; then
  fail "zsh is missing (scripts/setup installs it)"
fi

# The .deb: the installed files, and Depends from dpkg-shlibdeps (libfmt, yaml-cpp, simdjson
# for the shared build; nothing of those for a static one).
cpack --config "$GPUPLAN_BUILD_DIR/CPackConfig.cmake" -B "$SCRATCH/pkg" >"$SCRATCH/cpack.log" 2>&1 \
  || fail "cpack failed: $(tail -5 "$SCRATCH/cpack.log")"
deb=$(ls "$SCRATCH"/pkg/gpuplan_*.deb)
dpkg-deb -c "$deb" >"$SCRATCH/contents"
for f in ./usr/bin/gpuplan ./usr/share/man/man1/gpuplan.1 ./usr/share/bash-completion/completions/gpuplan \
         ./usr/share/zsh/vendor-completions/_gpuplan; do
  grep -q " $f\$" "$SCRATCH/contents" || fail "the .deb lacks $f"
done
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
if ldd "$bin" >/dev/null 2>&1; then
  for lib in $(ldd "$bin" | awk '/libfmt|libyaml-cpp|libsimdjson/ {print $1}'); do
    package=$(dpkg -S "*/$lib" | cut -d: -f1 | head -1)  # by name: /lib and /usr/lib are one (usrmerge)
    grep -qw "$package" <<<"$depends" || fail "the .deb's Depends lack $package (for $lib)"
  done
  grep -qw libc6 <<<"$depends" || fail "the .deb's Depends lack libc6"
fi
echo "OK: install tree and $(basename "$deb")"
