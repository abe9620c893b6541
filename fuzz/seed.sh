#!/usr/bin/env bash
# Seeds fuzz/corpus/<target> with every workflow the repository ships: examples, subgraphs
# and the check/graph fixtures. Run from anywhere; existing corpus entries are kept.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
for target in compile parse_kdl; do
    mkdir -p "$root/fuzz/corpus/$target"
    for file in "$root"/examples/*.kdl "$root"/examples/subgraphs/*.kdl \
        "$root"/tests/fixtures/check/*/*.kdl "$root"/tests/fixtures/graph/*.kdl; do
        [ -f "$file" ] || continue
        rel="${file#"$root"/}"
        cp "$file" "$root/fuzz/corpus/$target/seed-${rel//\//-}"
    done
done
ls "$root/fuzz/corpus/compile" | wc -l
