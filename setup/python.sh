#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Create or refresh the project virtualenv (.venv) from requirements.lock. Re-runs pip only
# when the lock changed since the last install, so it costs nothing on a warm tree.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${SSDLAB_VENV:-.venv}
PYTHON=${PYTHON:-python3}
lock_hash=$(sha256sum requirements.lock | cut -d' ' -f1)
stamp="$VENV/.ssdlab-lock"

if [ -x "$VENV/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$lock_hash" ]; then
    exit 0
fi
if ! [ -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV" || {
        echo "python.sh: error: '$PYTHON -m venv' failed; install python3-venv" >&2; exit 1; }
fi
echo "python.sh: installing requirements.lock into $VENV" >&2
if ! "$VENV/bin/python" -m pip install -q -r requirements.lock >&2; then
    echo "python.sh: error: pip could not install requirements.lock into $VENV" \
         "(is PyPI reachable? a pip index configured?)" >&2
    exit 1
fi
"$VENV/bin/python" -m pip check >&2
echo "$lock_hash" > "$stamp"
