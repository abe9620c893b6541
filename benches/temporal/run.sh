#!/usr/bin/env bash
# The Temporal benchmarks (issue 14): W1 (a chain of 1,000 agent steps), W3 (a loop of an
# agent step and a `set`, 1,000 rounds) and W5 (200 agent steps of 50 ms, 16 at once) run by
# `atomic worker` and, written by hand with Temporal's Python SDK (hand_written.py), on the
# same dev server, one after the other, in one run. Each agent step is an activity: atomic's
# `in-process` adapter (an echo, W5 after 50 ms), the Python activity returning its prompt.
# atomic runs a call to `in-process` (which only computes inside the worker) as a local
# activity, so each Python workflow runs twice: with activities (`w1`) and with local
# activities (`w1-local`, the same kind of step as atomic's).
#
#   bash benches/temporal/run.sh [ROUNDS]      (default 3 rounds; the best of each is kept)
#
# Needs the Rust toolchain and python3 (the pinned Temporal CLI and Python SDK are installed
# into .ci/temporal by .ci/install-temporal.sh). Builds atomic with `--release --features
# temporal`. Prints milliseconds per run and per step, and the ratios.
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"
rounds="${1:-3}"

bash .ci/install-temporal.sh --python-sdk
cargo build --release --features temporal --quiet
atomic="${CARGO_TARGET_DIR:-$root/target}/release/atomic"
temporal="$root/.ci/temporal/bin/temporal"
python="$root/.ci/temporal/venv/bin/python"

work="$(mktemp -d)"
pids=()
cleanup() {
    for pid in "${pids[@]+"${pids[@]}"}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

free_port() { "$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port="$(free_port)"
address="127.0.0.1:$port"
"$temporal" server start-dev --headless --ip 127.0.0.1 --port "$port" --ui-port "$(free_port)" \
    --db-filename "$work/temporal.db" --log-level error >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 1 300); do
    "$temporal" operator namespace describe --namespace default --address "$address" \
        >/dev/null 2>&1 && break
    sleep 0.2
done

# The workflows, as atomic runs them.
steps=""
for i in $(seq 1 1000); do
    steps+="    agent \"s$i\" provider=\"echo\" prompt=\"step $i\""$'\n'
done
cat >"$work/w1.kdl" <<KDL
workflow "w1" {
    provider "echo" adapter="in-process"
    limits max-steps=5000
$steps}
KDL
cat >"$work/w3.kdl" <<'KDL'
workflow "w3" {
    provider "echo" adapter="in-process"
    state {
        field "n" type="integer" default=0
    }
    limits max-steps=5000
    loop "rounds" max=1001 until="state.n >= 1000" {
        agent "work" provider="echo" prompt="round {{ state.n }}"
        set "n" expr="state.n + 1"
    }
}
KDL
items="$(seq -s, 0 199)"
cat >"$work/w5.kdl" <<KDL
workflow "w5" {
    provider "slow" adapter="in-process" latency="50ms"
    state {
        field "items" type="array" default="[$items]"
    }
    parallel "fan" for-each="state.items" as="it" max-concurrency=16 {
        agent "work" provider="slow" prompt="item {{ it }}"
    }
}
KDL

now_ms() { date +%s%3N; }
# atomic: start the run and follow it to its end (as a user does).
atomic_ms() {
    local flow="$1" queue="$2" start end
    start="$(now_ms)"
    (cd "$work" && "$atomic" run "$flow.kdl" --quiet --temporal "$address" --task-queue "$queue" >/dev/null 2>&1)
    end="$(now_ms)"
    echo $((end - start))
}
start_workers() {
    local queue="$1" count="$2"
    for _ in $(seq 1 "$count"); do
        (cd "$work" && exec "$atomic" worker --temporal "$address" --task-queue "$queue" >/dev/null 2>&1) &
        pids+=($!)
    done
    sleep 2
}

python_ms() {
    (cd "$root/benches/temporal" && "$python" hand_written.py "$address" "$@")
}
best() { sort -n | head -1; }
declare -A result
for case in w1 w3 w5; do
    start_workers "atomic-$case" 1
    result[atomic-$case]="$(for _ in $(seq 1 "$rounds"); do atomic_ms "$case" "atomic-$case"; done | best)"
    echo "atomic $case: ${result[atomic-$case]} ms"
    result[python-$case]="$(for _ in $(seq 1 "$rounds"); do python_ms "$case"; done | best)"
    echo "python $case: ${result[python-$case]} ms"
    result[python-$case-local]="$(for _ in $(seq 1 "$rounds"); do python_ms "$case-local"; done | best)"
    echo "python $case-local: ${result[python-$case-local]} ms"
    result[atomic-$case-local]="${result[atomic-$case]}"
done
start_workers "atomic-w5-two" 2
result[atomic-w5-two]="$(for _ in $(seq 1 "$rounds"); do atomic_ms w5 atomic-w5-two; done | best)"
echo "atomic w5, two workers: ${result[atomic-w5-two]} ms"
result[python-w5-two]="$(for _ in $(seq 1 "$rounds"); do python_ms w5 --workers 2; done | best)"
echo "python w5, two workers: ${result[python-w5-two]} ms"
result[python-w5-local-two]="$(for _ in $(seq 1 "$rounds"); do python_ms w5-local --workers 2; done | best)"
echo "python w5-local, two workers: ${result[python-w5-local-two]} ms"
result[atomic-w5-local-two]="${result[atomic-w5-two]}"

echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-16s %12s %12s %8s\n' case "atomic ms" "python ms" ratio
for case in w1 w3 w5 w5-two w1-local w3-local w5-local w5-local-two; do
    a="${result[atomic-$case]}"; p="${result[python-$case]}"
    printf '%-16s %12s %12s %8s\n' "$case" "$a" "$p" "$(awk -v a="$a" -v p="$p" 'BEGIN { printf "%.2f", a / p }')"
done
echo "(w1…w5-two: atomic's local activities against Python's activities; *-local: local against local)"
ideal() { awk -v a="$1" 'BEGIN { printf "%.2f", a / 650 }'; }
echo "per step: w1 $(awk -v a="${result[atomic-w1]}" 'BEGIN { printf "%.2f", a / 1000 }') ms (python $(awk -v p="${result[python-w1]}" 'BEGIN { printf "%.2f", p / 1000 }') ms, local $(awk -v p="${result[python-w1-local]}" 'BEGIN { printf "%.2f", p / 1000 }') ms)"
echo "w5 against the ideal 650 ms (13 waves of 50 ms), two workers: atomic $(ideal "${result[atomic-w5-two]}")x, python $(ideal "${result[python-w5-two]}")x with activities, $(ideal "${result[python-w5-local-two]}")x with local activities"
