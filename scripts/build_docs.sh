#!/usr/bin/env bash
# `make docs`: installs the pinned documentation tools into the active environment (scripts/env.sh:
# .venv-DISTRO) once (requirements/docs.txt,
# stamped like scripts/setup_env.sh), then builds the site into docs/_build/html with every
# warning an error. The reference pages are generated from the code during the build
# (docs/_ext/grade_reference.py), so they cannot drift from it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
stamp="${VIRTUAL_ENV:?source scripts/env.sh first}/.grade-docs-stamp"
want="$(sha256sum requirements/docs.txt | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "[docs] installing requirements/docs.txt into $VIRTUAL_ENV"
  python -m pip install --quiet --disable-pip-version-check -r requirements/docs.txt 2>&1 \
    | { grep -v "^WARNING: Location" || true; } >&2
  echo "$want" > "$stamp"
fi
rm -rf docs/_build/html docs/_build/doctrees
python -m sphinx -W --keep-going -q -b html -d docs/_build/doctrees docs docs/_build/html

python scripts/check_site.py docs/_build/html
echo "[docs] built docs/_build/html/index.html"
