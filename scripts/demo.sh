#!/usr/bin/env bash
# `make demo`: the indoor UAV scenario through its launch file, then the run's report.
# Runs inside the project environment (scripts/env.sh), with this run's own ROS_DOMAIN_ID.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${DEMO_OUT:-runs/demo-$(date +%Y%m%d-%H%M%S)}"
duration="${DEMO_DURATION_S:-15}"
echo "[demo] indoor UAV scenario, ${duration} s simulated, ROS_DOMAIN_ID=${ROS_DOMAIN_ID}, output ${out}"
grade launch launch/indoor_uav.launch.yaml output_dir:="${out}" duration_s:="${duration}"
grade report "${out}"
echo "[demo] done: ${out} (bag/, gt/, record.npz, summary.json, contact_sheet_*.png, trajectory.png)"
