#!/usr/bin/env bash
# Writes the man page gpuplan.1 and the completions gpuplan.bash (bash) and _gpuplan (zsh)
# into OUTDIR from the --help texts of a built gpuplan, walking every subcommand.
#   gen_docs.sh GPUPLAN OUTDIR VERSION
set -euo pipefail
bin=$1 out=$2 version=$3
mkdir -p "$out"
export ASAN_OPTIONS=detect_leaks=0

declare -A cache
helptext() {  # subcommand words... -> that command's --help, usage naming plain `gpuplan`
  local key="_$*"
  [[ -v cache[$key] ]] || cache[$key]=$("$bin" "$@" --help | sed "1,/^Usage:/s|^Usage: [^ ]*|Usage: gpuplan|")
  printf '%s\n' "${cache[$key]}"
}
section() {  # heading -> the first column of that section's lines (CLI11's layout)
  awk -v h="$1" '$0 == h {s = 1; next} /^[^ ]/ {s = 0} s && /^  [^ ]/ {print $1}'
}
subcommands() { helptext "$@" | section "Subcommands:"; }
options() { helptext "$@" | section "Options:" | tr ',' '\n' | grep '^-' || true; }

# Every command path: "", " plan", " export", " export slurm", ...
paths=("")
for ((i = 0; i < ${#paths[@]}; i++)); do
  read -ra words <<<"${paths[i]}"
  helptext "${words[@]}" >/dev/null
  for sub in $(subcommands "${words[@]}"); do paths+=("${paths[i]} $sub"); done
done

roff() { sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"; }
{
  echo ".TH GPUPLAN 1 \"\" \"gpuplan $version\" \"User Commands\""
  echo ".SH NAME"
  echo "gpuplan \\- $(helptext | head -1 | sed 's/^gpuplan: //' | roff)"
  echo ".SH SYNOPSIS"
  echo ".B gpuplan"
  echo "[OPTIONS] SUBCOMMAND [OPTIONS]"
  echo ".SH DESCRIPTION"
  echo "Each section below is the --help text of one command."
  for p in "${paths[@]}"; do
    read -ra words <<<"$p"
    echo ".SH \"GPUPLAN${p^^}\""
    echo ".nf"
    helptext "${words[@]}" | roff
    echo ".fi"
  done
  echo ".SH SEE ALSO"
  echo "The README of gpuplan: the plan format, the fleet file, the rules file and the exit codes."
} >"$out/gpuplan.1"

# bash: the words after `gpuplan` select a command path; offer its subcommands and options.
{
  echo "# bash completion for gpuplan, written from its --help texts (cmake/gen_docs.sh)"
  echo "_gpuplan() {"
  echo "  local cur=\${COMP_WORDS[COMP_CWORD]} path= i words"
  echo "  for ((i = 1; i < COMP_CWORD; i++)); do"
  echo "    case \"\$path \${COMP_WORDS[i]}\" in"
  for p in "${paths[@]:1}"; do echo "      \"$p\") path=\"$p\" ;;"; done
  echo "    esac"
  echo "  done"
  echo "  case \"\$path\" in"
  for p in "${paths[@]}"; do
    read -ra words <<<"$p"
    echo "    \"$p\") words=\"$(echo $(subcommands "${words[@]}") $(options "${words[@]}"))\" ;;"
  done
  echo "  esac"
  echo "  COMPREPLY=(\$(compgen -W \"\$words\" -- \"\$cur\"))"
  echo "  [[ \$cur == -* || \${#COMPREPLY[@]} -gt 0 ]] || COMPREPLY=(\$(compgen -f -- \"\$cur\"))"
  echo "}"
  echo "complete -o filenames -F _gpuplan gpuplan"
} >"$out/gpuplan.bash"

# zsh: the same walk, offering subcommands, options and files.
{
  echo "#compdef gpuplan"
  echo "# zsh completion for gpuplan, written from its --help texts (cmake/gen_docs.sh)"
  echo "local cmdpath= i"
  echo "local -a subs opts"
  echo "for ((i = 2; i < CURRENT; i++)); do"
  echo "  case \"\$cmdpath \${words[i]}\" in"
  for p in "${paths[@]:1}"; do echo "    \"$p\") cmdpath=\"$p\" ;;"; done
  echo "  esac"
  echo "done"
  echo "case \"\$cmdpath\" in"
  for p in "${paths[@]}"; do
    read -ra words <<<"$p"
    echo "  \"$p\") subs=($(echo $(subcommands "${words[@]}"))) opts=($(echo $(options "${words[@]}"))) ;;"
  done
  echo "esac"
  echo "if [[ \$PREFIX == -* ]]; then compadd -- \$opts; elif (( \$#subs )); then compadd -- \$subs; else _files; fi"
} >"$out/_gpuplan"
