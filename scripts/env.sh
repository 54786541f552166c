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
# no multicast). With the profile the discovery range must be SYSTEM_DEFAULT: LOCALHOST makes
# rmw_fastrtps_cpp add a UDP transport that binds every interface (docs/transport.md). Another
# RMW (e.g. RMW_IMPLEMENTATION=rmw_cyclonedds_cpp) ignores the profile: keep LOCALHOST for it.
case "${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}" in
  rmw_fastrtps_cpp|rmw_fastrtps_dynamic_cpp)
    export FASTDDS_DEFAULT_PROFILES_FILE="$_grade_root/config/fastdds/localhost.xml"
    export ROS_AUTOMATIC_DISCOVERY_RANGE=SYSTEM_DEFAULT;;
  *) export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST;;
esac
export MUJOCO_GL="${MUJOCO_GL:-egl}"
export PYOPENGL_PLATFORM="${PYOPENGL_PLATFORM:-$MUJOCO_GL}"
unset _grade_root _grade_had_u
