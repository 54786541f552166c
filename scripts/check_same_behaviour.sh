#!/usr/bin/env bash
# Proves a change keeps behaviour byte-identical: runs each case once with the code of BASE_REV
# and once with the working tree, then compares bag message payloads, gt/ files (PNGs,
# trajectory.txt) and record.npz with scripts/compare_runs.py. The cases:
#   default      the indoor UAV launch file through `grade launch` (sim_node recording)
#   savanna      `grade run config/outdoor_savanna.yaml` (animals, terrain, vegetation)
#   multi_robot  `grade run config/multi_robot.yaml` (two UAVs and the ground robot)
#   replay       `grade replay` of BASE_REV's default run (each tree replays the same recording)
#
#   bash scripts/check_same_behaviour.sh [BASE_REV] [DURATION_S]     (defaults: HEAD~1, 15)
#
# Environment:
#   GRADE_BEHAVIOUR_CASES  the cases to run, space-separated (default: all four)
#   GRADE_BEHAVIOUR_REF    a folder that keeps BASE_REV's runs: made on the first call, reused on
#                          the next ones (it records the base commit and duration and refuses to
#                          be reused for others), so a series of changes runs the base only once
#
# Runs inside the project environment (make setup first). Both runs use this tree's venv and
# colcon workspace; each tree's own sources come first on PYTHONPATH. Exit code 0 when every
# case is identical, 1 otherwise.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
base_rev="${1:-HEAD~1}"
duration="${2:-15}"
cases="${GRADE_BEHAVIOUR_CASES:-default savanna multi_robot replay}"
# shellcheck disable=SC1091
source scripts/env.sh
export ROS_DOMAIN_ID="${ROS_DOMAIN_ID:-$(( ($$ % 100) + 1 ))}"
base_sha="$(git rev-parse "$base_rev")"
work="$(mktemp -d /tmp/grade-behaviour.XXXXXX)"
ref="${GRADE_BEHAVIOUR_REF:-$work/ref}"
cleanup() { git worktree remove --force "$work/base" >/dev/null 2>&1 || true; }
trap cleanup EXIT
stamp="base $base_sha duration $duration"
mkdir -p "$ref"
if [[ -f "$ref/STAMP" && "$(cat "$ref/STAMP")" != "$stamp" ]]; then
  echo "check_same_behaviour: $ref holds runs of '$(cat "$ref/STAMP")', not '$stamp'" >&2
  exit 2
fi
echo "$stamp" >"$ref/STAMP"

fail() { cat "$1.log" >&2; echo "check_same_behaviour: $2" >&2; exit 1; }
run_case() {  # case, tree, output
  local case="$1" tree="$2" out="$3"
  local grade=(env PYTHONPATH="$tree/src:${PYTHONPATH:-}" python "$tree/scripts/grade")
  case "$case" in
    default)
      "${grade[@]}" launch "$tree/launch/indoor_uav.launch.yaml" \
        scenario:="$tree/config/indoor_uav.yaml" output_dir:="$out" duration_s:="$duration" ;;
    savanna | multi_robot)
      local file=outdoor_savanna
      [[ "$case" == multi_robot ]] && file=multi_robot
      "${grade[@]}" run "$tree/config/$file.yaml" --out "$out" --set "duration_s=$duration" \
        --quiet ;;
    replay)
      "${grade[@]}" replay "$ref/default" --out "$out" --quiet ;;
    *)
      echo "check_same_behaviour: unknown case '$case' (default savanna multi_robot replay)" >&2
      exit 2 ;;
  esac >"$out.log" 2>&1 || fail "$out" "the $case run in $tree failed"
}

need_base=0
for c in $cases; do [[ -d "$ref/$c" ]] || need_base=1; done
# The replay case replays the base's default run: make it first when it is missing.
if [[ " $cases " == *" replay "* && " $cases " != *" default "* && ! -d "$ref/default" ]]; then
  cases="default $cases"
  need_base=1
fi
if (( need_base )); then
  git worktree add --detach "$work/base" "$base_sha" >/dev/null
fi
echo "[behaviour] base $(git rev-parse --short "$base_sha"), ${duration} s, cases: $cases;" \
  "base runs in $ref, new runs in $work"
status=0
for c in $cases; do
  if [[ ! -d "$ref/$c" ]]; then
    rm -rf "$ref/partial_$c" "$ref/partial_$c.log"
    run_case "$c" "$work/base" "$ref/partial_$c"
    mv "$ref/partial_$c.log" "$ref/$c.log"
    mv "$ref/partial_$c" "$ref/$c"  # only a finished run is reused
  fi
  run_case "$c" "$root" "$work/$c"
  echo "[behaviour] $c:"
  python scripts/compare_runs.py "$ref/$c" "$work/$c" || status=1
done
exit "$status"
