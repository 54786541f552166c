#!/usr/bin/env bash
# Proves a change keeps behaviour byte-identical: runs the default demo scenario (the indoor UAV
# launch file through `grade launch`, sim_node recording) once with the code of BASE_REV and once
# with the working tree, then compares bag message payloads, gt/ files (PNGs, trajectory.txt) and
# record.npz with scripts/compare_runs.py.
#
#   bash scripts/check_same_behaviour.sh [BASE_REV] [DURATION_S]     (defaults: origin/main or HEAD~1, 15)
#
# Runs inside the project environment (make setup first). Both runs use this tree's venv and
# colcon workspace; each tree's own sources come first on PYTHONPATH.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
base_rev="${1:-HEAD~1}"
duration="${2:-15}"
# shellcheck disable=SC1091
source scripts/env.sh
export ROS_DOMAIN_ID="${ROS_DOMAIN_ID:-$(( ($$ % 100) + 1 ))}"
work="$(mktemp -d /tmp/grade-behaviour.XXXXXX)"
cleanup() { git worktree remove --force "$work/base" >/dev/null 2>&1 || true; }
trap cleanup EXIT
git worktree add --detach "$work/base" "$base_rev" >/dev/null
run_demo() {  # tree, output
  local tree="$1" out="$2"
  PYTHONPATH="$tree/src:${PYTHONPATH:-}" python "$tree/scripts/grade" launch \
    "$tree/launch/indoor_uav.launch.yaml" scenario:="$tree/config/indoor_uav.yaml" \
    output_dir:="$out" duration_s:="$duration" >"$out.log" 2>&1 \
    || { cat "$out.log" >&2; echo "check_same_behaviour: the run in $tree failed" >&2; exit 1; }
}
echo "[behaviour] base $(git rev-parse --short "$base_rev"), ${duration} s of the indoor UAV demo, output in $work"
run_demo "$work/base" "$work/run_base"
run_demo "$root" "$work/run_new"
python scripts/compare_runs.py "$work/run_base" "$work/run_new"
