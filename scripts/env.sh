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
# DDS stays on this machine: grade's Fast DDS profile (shared memory + UDP on 127.0.0.1 only,
# no multicast) with ROS_AUTOMATIC_DISCOVERY_RANGE=SYSTEM_DEFAULT, or LOCALHOST for an RMW that
# ignores the profile (docs/transport.md). grade_common.transport owns the choice, so this shell,
# the tests and the processes grade starts (grade batch jobs) get the same variables.
if _grade_transport="$(python -m grade_common.transport)"; then
  eval "$_grade_transport"
fi
export MUJOCO_GL="${MUJOCO_GL:-egl}"
export PYOPENGL_PLATFORM="${PYOPENGL_PLATFORM:-$MUJOCO_GL}"
unset _grade_root _grade_had_u _grade_transport
