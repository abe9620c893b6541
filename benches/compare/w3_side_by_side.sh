#!/usr/bin/env bash
# W3 (a loop of 10,000 iterations: increment, then the loop's check) through `atomic run` and
# through LangGraph, durable (atomic's default SQLite store / LangGraph's SqliteSaver) and in
# memory, interleaved run by run so the machine's load hits all four alike. Prints, for each,
# the median whole-process wall time (`date`, around GNU time) and peak RSS (GNU time's %M), and for LangGraph the time
# inside `invoke` (its import alone takes most of a second).
#   cargo build --release
#   python3 -m venv /tmp/lg && /tmp/lg/bin/pip install langgraph==1.2.24 langgraph-checkpoint-sqlite==3.1.2
#   benches/compare/w3_side_by_side.sh [path/to/atomic] [runs] [path/to/python]
set -euo pipefail
atomic=$(realpath "${1:-target/release/atomic}")
runs=${2:-5}
python=${3:-/tmp/lg/bin/python}
iterations=10000
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/w3.kdl" <<KDL
workflow "w3" {
    state { field "n" type="integer" default=0 }
    loop "l" max=$iterations until="state.n >= $iterations" {
        set "n" expr="state.n + 1" id="inc"
    }
}
KDL
have_langgraph=1
if ! "$python" -c 'import langgraph.checkpoint.sqlite' 2>/dev/null; then
  echo "LangGraph not found at $python: only atomic is measured (install it as the header says)" >&2
  have_langgraph=0
fi
# One measurement: "<label> <ms> <KB> [<ms inside invoke>]".
measure() {
  local label=$1; shift
  local project; project=$(mktemp -d "$work/p.XXXX")
  mkdir -p "$project/.atomic"
  local start end
  start=$(date +%s%N)
  local kb; kb=$(cd "$project" && /usr/bin/time -f '%M' "$@" 2>&1 >"$project/stdout" | tail -1)
  end=$(date +%s%N)
  local wall=$(( (end - start) / 1000 ))
  local inside; inside=$(grep -o 'in [0-9.]* ms' "$project/stdout" | grep -o '[0-9.]*' || true)
  echo "$label $(awk -v us="$wall" 'BEGIN{printf "%.1f", us/1000}') $kb ${inside:-}"
}
results=$work/results
for _ in $(seq 1 "$runs"); do
  measure atomic-durable "$atomic" run "$work/w3.kdl" --quiet >>"$results"
  measure atomic-memory "$atomic" run "$work/w3.kdl" --quiet --store memory >>"$results"
  if [ "$have_langgraph" = 1 ]; then
    measure langgraph-sqlite "$python" "$here/langgraph_loop.py" "$iterations" >>"$results"
    measure langgraph-memory "$python" "$here/langgraph_loop.py" "$iterations" --memory >>"$results"
  fi
done
median() { sort -n | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]}'; }
for label in atomic-durable atomic-memory langgraph-sqlite langgraph-memory; do
  grep -q "^$label " "$results" || continue
  wall=$(grep "^$label " "$results" | awk '{print $2}' | median)
  kb=$(grep "^$label " "$results" | awk '{print $3}' | median)
  inside=$(grep "^$label " "$results" | awk 'NF > 3 {print $4}' | median)
  printf '%-17s whole process median %8.1f ms (%5.1f µs/iteration), peak RSS %5.1f MB' \
    "$label" "$wall" "$(awk -v w="$wall" -v n="$iterations" 'BEGIN{print w*1000/n}')" \
    "$(awk -v k="$kb" 'BEGIN{print k/1024}')"
  if [ -n "$inside" ]; then
    printf ', inside invoke %8.1f ms (%5.1f µs/iteration)' "$inside" \
      "$(awk -v w="$inside" -v n="$iterations" 'BEGIN{print w*1000/n}')"
  fi
  printf ' [%s runs]\n' "$runs"
done
