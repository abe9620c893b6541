#!/usr/bin/env bash
# Installs the agent CLIs the provider end-to-end tests drive, at pinned versions, into a
# project-local npm prefix (.ci/agents/, gitignored). The tests look there first, then on PATH.
# Idempotent: a CLI already installed at its pinned version is left alone.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
prefix="$here/agents"

# Bump these deliberately; the adapters are tested against exactly these versions.
packages=(
  "@anthropic-ai/claude-code@2.1.330"
  "opencode-ai@1.18.33"
  "@github/copilot@1.0.102"
  "@google/gemini-cli@0.61.0"
  "@openai/codex@0.171.0"
  # ACP agents (adapter="acp"); the Gemini CLI above is the third (`gemini --acp`).
  "@zed-industries/claude-code-acp@0.16.2"
  "@zed-industries/codex-acp@0.16.0"
)

if ! command -v npm >/dev/null 2>&1; then
  echo "install-agents: npm is not installed; install Node.js (>= 20) and npm first" >&2
  exit 1
fi

mkdir -p "$prefix"
if [ ! -f "$prefix/package.json" ]; then
  printf '{ "name": "atomic-ci-agents", "private": true }\n' >"$prefix/package.json"
fi

missing=()
for spec in "${packages[@]}"; do
  name="${spec%@*}"
  want="${spec##*@}"
  have="$(node -p "try { require('$prefix/node_modules/$name/package.json').version } catch { '' }" 2>/dev/null || true)"
  if [ "$have" != "$want" ]; then
    missing+=("$spec")
  fi
done

if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-agents: installing ${missing[*]}"
  # A throwaway npm cache: the tarballs (~400 MB) are not needed once unpacked, and CI's disk
  # is small.
  npm_cache="$(mktemp -d)"
  trap 'rm -rf "$npm_cache"' EXIT
  npm install --prefix "$prefix" --cache "$npm_cache" --no-audit --no-fund --save-exact \
    --loglevel=error "${packages[@]}"
fi

bin="$prefix/node_modules/.bin"
export DISABLE_AUTOUPDATER=1 OPENCODE_DISABLE_AUTOUPDATE=1 COPILOT_OFFLINE=true
printf 'claude-code %s\n' "$("$bin/claude" --version 2>&1 | head -n1)"
printf 'opencode    %s\n' "$("$bin/opencode" --version 2>&1 | head -n1)"
printf 'copilot     %s\n' "$("$bin/copilot" --version 2>&1 | head -n1)"
printf 'gemini      %s\n' "$("$bin/gemini" --version 2>&1 | head -n1)"
printf 'codex       %s\n' "$("$bin/codex" --version 2>&1 | head -n1)"
printf 'claude-code-acp %s\n' "$(node -p "require('$prefix/node_modules/@zed-industries/claude-code-acp/package.json').version")"
printf 'codex-acp   %s\n' "$(node -p "require('$prefix/node_modules/@zed-industries/codex-acp/package.json').version")"
