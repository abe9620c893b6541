#!/usr/bin/env bash
# W7 (a for-each of 1,000 in-process agent steps, 8 at a time) and a chain of 50 agent calls
# through the claude-code adapter to a fake `claude` (a shell script answering in
# stream-json: the whole agent-CLI path — launch, child environment, process group, NDJSON,
# exit), through the `atomic` binary, durable; each binary given is run in turn, interleaved,
# each run in a fresh project; prints medians.
#   benches/compare/binary_agents.sh [runs] path/to/atomic [path/to/other-atomic …]
set -euo pipefail
runs=${1:-7}; shift
binaries=()
for binary in "${@:-target/release/atomic}"; do binaries+=("$(realpath "$binary")"); done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{
  echo 'workflow "w7" {'
  echo '    provider "echo" adapter="in-process"'
  echo '    state {'
  printf '        field "items" type="array" default="[%s]"\n' "$(seq -s, 0 999)"
  echo '        field "out" type="array" reduce="append" default="[]"'
  echo '    }'
  echo '    parallel "fan" for-each="state.items" as="item" max-concurrency=8 {'
  echo '        agent "body" provider="echo" {'
  echo '            prompt "{{ item }}"'
  echo '            output "out"'
  echo '        }'
  echo '    }'
  echo '}'
} > "$work/w7.kdl"
cat > "$work/fake-claude" <<'SH'
#!/bin/sh
head -n 1 > /dev/null
echo '{"type":"system","subtype":"init","session_id":"s-1","tools":[],"model":"m"}'
echo '{"type":"assistant","message":{"id":"m1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"done"}],"usage":{"input_tokens":3,"output_tokens":1}},"session_id":"s-1"}'
echo '{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"done","session_id":"s-1","usage":{"input_tokens":3,"output_tokens":1}}'
SH
chmod +x "$work/fake-claude"
{
  echo 'workflow "cli-agents" provider="claude" {'
  printf '    provider "claude" adapter="claude-code" {\n        option "bin" "%s"\n    }\n' "$work/fake-claude"
  for i in $(seq 0 49); do echo "    agent \"a$i\" prompt=\"step $i\""; done
  echo '}'
} > "$work/agents.kdl"

declare -A times
for _ in $(seq 1 "$runs"); do
  for flow in w7.kdl agents.kdl; do
    for binary in "${binaries[@]}"; do
      project=$(mktemp -d "$work/p.XXXX")
      mkdir -p "$project/.atomic"
      start=$(date +%s%N)
      if ! (cd "$project" && "$binary" run "$work/$flow" --quiet > "$project/out" 2>&1); then
        echo "$binary run $flow failed:" >&2; cat "$project/out" >&2; exit 1
      fi
      end=$(date +%s%N)
      times["$flow $binary"]+="$(( (end - start) / 1000 )) "
      rm -rf "$project"
    done
  done
done
for flow in w7.kdl agents.kdl; do
  for binary in "${binaries[@]}"; do
    printf '%s\n' ${times["$flow $binary"]} | sort -n | awk -v label="$flow $binary" \
      '{a[NR]=$1} END {printf "%-60s median %7.1f ms (min %.1f, max %.1f, %d runs)\n", label, a[int((NR+1)/2)]/1000, a[1]/1000, a[NR]/1000, NR}'
  done
done
