#!/usr/bin/env bash
# `make setup-realism`: MediaPipe 0.10.21 for `grade bench realism`, in .venv-realism.
# Returns at once when the pinned set is already installed (a stamp of requirements/realism.txt).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
venv="$root/.venv-realism"
python="${GRADE_PYTHON:-python3}"
want="$(cat requirements/realism.txt scripts/setup_realism.sh | sha256sum | cut -d' ' -f1)"
stamp="$venv/.grade-realism-stamp"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
log() { printf '[setup-realism] %s\n' "$*"; }
[ -x "$venv/bin/python" ] || { log "creating .venv-realism"; "$python" -m venv "$venv"; }
touch "$venv/COLCON_IGNORE"
log "installing mediapipe 0.10.21 and its pinned set (about 100 MB download)"
# --no-deps: the file is the whole set (mediapipe declares jax and more that the solutions never
# import; see requirements/realism.txt).
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
  -r requirements/realism.txt 2>&1 | grep -v "^WARNING: Location" || true
(cd "$venv" && "$venv/bin/python" -s -c 'import mediapipe.python.solutions.pose') >/dev/null 2>&1 \
  || { echo "[setup-realism] error: mediapipe failed to install or import (see above)" >&2; exit 1; }
echo "$want" > "$stamp"
log "done"
