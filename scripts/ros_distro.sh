# Sourced by scripts/setup_env.sh and scripts/env.sh: which ROS 2 distro's environment
# (.venv-DISTRO, .ws-DISTRO) to build or enter. GRADE_ROS_DISTRO picks it; Jazzy (the LTS) is the
# default. ROS_DISTRO is left to a sourced system ROS 2, as in ROS itself.
# shellcheck shell=bash
GRADE_ROS_DISTROS="jazzy kilted"
GRADE_ROS_DISTRO_DEFAULT=jazzy

# Prints the chosen distro; fails, naming the allowed ones, on any other value.
grade_ros_distro() {
  local distro="${GRADE_ROS_DISTRO:-$GRADE_ROS_DISTRO_DEFAULT}"
  case " $GRADE_ROS_DISTROS " in
    *" $distro "*) printf '%s\n' "$distro" ;;
    *) echo "GRADE_ROS_DISTRO='$distro' is not a distro with PyPI wheels; use one of: $GRADE_ROS_DISTROS" >&2
       return 1 ;;
  esac
}
