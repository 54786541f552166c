# Sourced (not run) to enter the project environment: venv, colcon workspace, localhost-only DDS.
# shellcheck shell=bash
_grade_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck disable=SC1091
source "$_grade_root/.venv/bin/activate"
# colcon's setup scripts read unset variables; tolerate callers running under `set -u`.
_grade_had_u=0; case $- in *u*) _grade_had_u=1; set +u;; esac
# shellcheck disable=SC1091
source "$_grade_root/.ws/install/setup.bash"
[ "$_grade_had_u" = 1 ] && set -u
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
export MUJOCO_GL="${MUJOCO_GL:-egl}"
export PYOPENGL_PLATFORM="${PYOPENGL_PLATFORM:-$MUJOCO_GL}"
unset _grade_root _grade_had_u
