#!/usr/bin/env bash
# `make scenes`: SceneReplica end to end from nothing: candidate scenes, the balanced diverse
# selection of 20, then the Panda's pick and place over all of them (README, docs/scenes.md).
# SCENES_OUT names the folder: a new one, or an earlier one to resume (each step writes its
# folder whole or not at all, so a finished step is skipped; the pick-and-place run resumes).
set -euo pipefail
out="${SCENES_OUT:-runs/scenes-$(date +%Y%m%d-%H%M%S)}"
seed="${SCENES_SEED:-0}"
echo "[scenes] seed ${seed}, output ${out}"
mkdir -p "${out}"
[ -d "${out}/candidates" ] || grade scenes generate --out "${out}/candidates" --seed "${seed}"
[ -d "${out}/selected" ] || grade scenes select "${out}/candidates" --out "${out}/selected"
grade scenes run "${out}/selected" --out "${out}/run"
echo "[scenes] done: ${out}/run (results.md, a folder per scene)"
