#!/usr/bin/env bash
# `make setup-render`: Blender's Python module (bpy) for `grade render`, in .venv-render.
# Returns at once when the pinned set is already installed (a stamp of requirements/render.txt).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
venv="$root/.venv-render"
python="${GRADE_PYTHON:-python3}"
want="$(cat requirements/render.txt scripts/setup_render.sh | sha256sum | cut -d' ' -f1)"
stamp="$venv/.grade-render-stamp"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
log() { printf '[setup-render] %s\n' "$*"; }
[ -x "$venv/bin/python" ] || { log "creating .venv-render"; "$python" -m venv "$venv"; }
touch "$venv/COLCON_IGNORE"
log "installing bpy (Blender as a Python module, ~375 MB download, ~0.9 GB installed)"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r requirements/render.txt 2>&1 \
  | grep -v "^WARNING: Location" || true
"$venv/bin/python" -s -c 'import bpy' >/dev/null 2>&1 \
  || { echo "[setup-render] error: bpy failed to install or import (see above)" >&2; exit 1; }
echo "$want" > "$stamp"
log "done"
