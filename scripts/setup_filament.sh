#!/usr/bin/env bash
# Vulkan for `grade render --engine filament` (MuJoCo's Filament renderer runs headless only
# through Vulkan; on a machine without a GPU driver, Mesa's lavapipe renders on the CPU).
#
# The Debian packages libvulkan1 and mesa-vulkan-drivers are unpacked into .vulkan/ in the
# checkout, not installed: `apt-get install` of them also upgrades the system's Mesa OpenGL
# libraries (libgl1-mesa-dri, libegl-mesa0, ...), which every other renderer on the machine
# uses. grade_render.filament_env points the Filament worker process at .vulkan/ (loader via
# LD_LIBRARY_PATH, lavapipe via VK_ICD_FILENAMES); nothing else sees it. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix="$PWD/.vulkan"
lib="$prefix/usr/lib/x86_64-linux-gnu"
icd="$prefix/lvp_icd.json"
if [ -f "$icd" ] && [ -f "$lib/libvulkan.so.1" ] && [ -f "$lib/libvulkan_lvp.so" ]; then
  echo "[setup-filament] Vulkan (lavapipe) already in .vulkan/"
  exit 0
fi
command -v apt-get >/dev/null 2>&1 && command -v dpkg >/dev/null 2>&1 \
  || { echo "[setup-filament] error: needs apt-get and dpkg (Debian/Ubuntu); install libvulkan1 and mesa-vulkan-drivers yourself" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "[setup-filament] unpacking libvulkan1 + mesa-vulkan-drivers into .vulkan/ (no system change)"
( cd "$tmp" && { apt-get download libvulkan1 mesa-vulkan-drivers >/dev/null 2>&1 \
    || { apt-get update -q >/dev/null 2>&1 && apt-get download libvulkan1 mesa-vulkan-drivers >/dev/null 2>&1; }; } ) \
  || { echo "[setup-filament] error: apt-get download libvulkan1 mesa-vulkan-drivers failed" >&2; exit 1; }
rm -rf "$prefix.partial"
mkdir -p "$prefix.partial"
for deb in "$tmp"/*.deb; do dpkg -x "$deb" "$prefix.partial"; done
printf '{"file_format_version": "1.0.0", "ICD": {"api_version": "1.1.0", "library_path": "%s"}}\n' \
  "$lib/libvulkan_lvp.so" > "$prefix.partial/lvp_icd.json"
rm -rf "$prefix"
mv "$prefix.partial" "$prefix"
echo "[setup-filament] done: $(ls "$tmp"/*.deb | xargs -n1 basename | tr '\n' ' ')"
