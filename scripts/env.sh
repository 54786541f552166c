# Sourced (not run) to enter the project environment: venv, colcon workspace, localhost-only DDS.
# The ROS 2 distro's environment is .venv-DISTRO + .ws-DISTRO: GRADE_ROS_DISTRO (jazzy, the
# default, or kilted), or the ROS_DISTRO of a sourced system ROS 2 (scripts/setup_env.sh).
# shellcheck shell=bash
_grade_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/ros_distro.sh
source "$_grade_root/scripts/ros_distro.sh"
if [ -n "${ROS_DISTRO:-}" ] && [ -z "${GRADE_ROS_DISTRO:-}" ] && [ -d "$_grade_root/.venv-$ROS_DISTRO" ]; then
  _grade_distro="$ROS_DISTRO"
else
  _grade_distro="$(grade_ros_distro)" || return 1
fi
if [ ! -x "$_grade_root/.venv-$_grade_distro/bin/python" ]; then
  echo "scripts/env.sh: no environment for ROS 2 $_grade_distro yet: run 'make setup GRADE_ROS_DISTRO=$_grade_distro'" >&2
  return 1
fi
export GRADE_ROS_DISTRO="$_grade_distro"
# shellcheck disable=SC1091
source "$_grade_root/.venv-$_grade_distro/bin/activate"
# colcon's setup scripts read unset variables; tolerate callers running under `set -u`.
_grade_had_u=0; case $- in *u*) _grade_had_u=1; set +u;; esac
# shellcheck disable=SC1091
source "$_grade_root/.ws-$_grade_distro/install/setup.bash"
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
unset _grade_root _grade_had_u _grade_transport _grade_distro
