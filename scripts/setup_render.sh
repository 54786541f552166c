#!/usr/bin/env bash
# `make setup-render`: Blender's Python module (bpy) for `grade render`, in .venv-render.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/setup_venv.sh" setup_render .venv-render \
  requirements/render.txt bpy \
  "installing bpy (Blender as a Python module, ~375 MB download, ~0.9 GB installed)"
