#!/usr/bin/env bash
# A tool's own environment at the checkout's root (bpy and MediaPipe want numpy < 2; grade
# pins 2.x), shared by setup_render.sh and setup_realism.sh:
#   setup_venv.sh NAME VENV REQUIREMENTS IMPORT MESSAGE [PIP_OPTION ...]
# Returns at once when the pinned set is already installed (a stamp of REQUIREMENTS and the
# calling script); otherwise creates VENV, installs REQUIREMENTS and checks `import IMPORT`.
set -euo pipefail
name="$1" venv_name="$2" requirements="$3" module="$4" message="$5"
shift 5
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
venv="$root/$venv_name"
python="${GRADE_PYTHON:-python3}"
caller="scripts/$name.sh"
want="$(cat "$requirements" "$caller" | sha256sum | cut -d' ' -f1)"
stamp="$venv/.grade-${name#setup_}-stamp"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
tag="${name//_/-}"
log() { printf '[%s] %s\n' "$tag" "$*"; }
[ -x "$venv/bin/python" ] || { log "creating $venv_name"; "$python" -m venv "$venv"; }
touch "$venv/COLCON_IGNORE"
log "$message"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@" -r "$requirements" 2>&1 \
  | grep -v "^WARNING: Location" || true
# From inside the venv folder: the checkout's own folders must not shadow the module.
(cd "$venv" && "$venv/bin/python" -s -c "import $module") >/dev/null 2>&1 \
  || { echo "[$tag] error: $module failed to install or import (see above)" >&2; exit 1; }
echo "$want" > "$stamp"
log "done"
