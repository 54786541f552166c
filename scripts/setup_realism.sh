#!/usr/bin/env bash
# `make setup-realism`: MediaPipe 0.10.21 for `grade bench realism`, in .venv-realism (about
# 100 MB download, 0.4 GB installed). --no-deps: requirements/realism.txt is the whole set
# (mediapipe declares jax and more that its legacy solutions never import).
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/setup_venv.sh" setup_realism .venv-realism \
  requirements/realism.txt mediapipe.python.solutions.pose \
  "installing mediapipe 0.10.21 and its pinned set (about 100 MB download)" --no-deps
