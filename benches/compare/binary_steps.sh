#!/usr/bin/env bash
# W1 (1,000 `set`s) and W3 (a 10,000-step loop) through the `atomic` binary, with the default
# SQLite store and with `--store memory`, each run in a fresh project; prints medians.
#   cargo build --release && benches/compare/binary_steps.sh [path/to/atomic] [runs]
set -euo pipefail
atomic=$(realpath "${1:-target/release/atomic}")
runs=${2:-7}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{
  echo 'workflow "w1" {'
  echo '    state { field "n" type="integer" default=0 }'
  for i in $(seq 0 999); do echo "    set \"n\" expr=\"state.n + 1\" id=\"inc$i\""; done
  echo '}'
} > "$work/w1.kdl"
cat > "$work/w3.kdl" <<'KDL'
workflow "w3" {
    state { field "n" type="integer" default=0 }
    loop "l" max=10000 until="state.n >= 10000" {
        set "n" expr="state.n + 1" id="inc"
    }
}
KDL
median() {
  local flow=$1; shift
  local times=()
  for _ in $(seq 1 "$runs"); do
    local project; project=$(mktemp -d "$work/p.XXXX")
    mkdir -p "$project/.atomic"
    local start end
    start=$(date +%s%N)
    (cd "$project" && "$atomic" run "$work/$flow" --quiet "$@" > /dev/null 2>&1)
    end=$(date +%s%N)
    times+=($(( (end - start) / 1000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk -v label="$flow $*" \
    '{a[NR]=$1} END {printf "%-28s median %7.1f ms (min %.1f, max %.1f, %d runs)\n", label, a[int((NR+1)/2)]/1000, a[1]/1000, a[NR]/1000, NR}'
}
median w3.kdl
median w3.kdl --store memory
median w1.kdl
median w1.kdl --store memory
