# The two commands of the README. Each sets the environment up from nothing (or checks in well
# under a second that it is up to date), then does its job.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
ENV := source scripts/env.sh
# GRADE_ROS_DISTRO (command line or environment; make passes both on to the scripts): the ROS 2
# distro whose PyPI wheels the environment holds, jazzy (default) or kilted, each in its own
# .venv-DISTRO + .ws-DISTRO (scripts/ros_distro.sh), e.g. `make demo GRADE_ROS_DISTRO=kilted`.
# No default here, so that a sourced system ROS 2 (its ROS_DISTRO) decides when there is one.
# A per-run DDS domain (1..100) so parallel runs on one machine never hear each other.
DOMAIN := $(shell echo $$(( ($$$$ % 100) + 1 )))

.PHONY: setup setup-render setup-filament setup-realism doctor demo scenes test test-fast test-ros test-docs lint bench docs clean

setup:
	@bash scripts/setup_env.sh

# Blender's bpy for `grade render` (own environment .venv-render; docs/render.md).
setup-render:
	@bash scripts/setup_render.sh

# Vulkan (loader + Mesa lavapipe) for `grade render --engine filament`, unpacked into .vulkan/
# without installing it system-wide (docs/render.md).
setup-filament:
	@bash scripts/setup_filament.sh

# MediaPipe 0.10.21 for `grade bench realism` (own environment .venv-realism; docs/people.md).
setup-realism:
	@bash scripts/setup_realism.sh

# What works on this machine and the make target for each optional part that does not
# (grade doctor; docs/install.md). demo and test print its summary first; a broken required part
# stops them.
DOCTOR := grade doctor --summary

doctor: setup
	@$(ENV) && grade doctor

demo: setup
	@$(ENV) && $(DOCTOR) && export ROS_DOMAIN_ID=$${ROS_DOMAIN_ID:-$(DOMAIN)} && bash scripts/demo.sh

# SceneReplica end to end: generate, select 20, the Panda's pick and place (scripts/scenes.sh).
scenes: setup
	@$(ENV) && bash scripts/scenes.sh

# Two test workers (pytest-xdist; one file stays on one worker, so module fixtures are built once):
# the suite is mostly single-threaded, so on 2 cores this about halves it. TEST_WORKERS=0: serial.
TEST_WORKERS ?= 2
PYTEST_XDIST = -n $(TEST_WORKERS) --dist loadfile

test: setup setup-render setup-filament setup-realism
	@$(ENV) && $(DOCTOR) && python -m pytest -m "not docs" $(PYTEST_XDIST) $(PYTEST_ARGS)

# The docs site's checks: its build (warnings as errors, links, images) and every tutorial's
# marked commands on small settings (pytest.ini's `docs` marker): CI's docs lane, after `make docs`.
test-docs: setup setup-render
	@$(ENV) && python -m pytest -m docs $(PYTEST_XDIST) $(PYTEST_ARGS)

# The ROS-facing tests only (nodes, launch files, lockstep, live delivery, live SLAM, the arm node:
# pytest.ini's `ros` marker; bags, type hashes, grade doctor: `distro`): CI's second lane, on the
# distro that is not the default (.ci/run). The colcon build of the system-ROS path (about 2 min)
# runs in the first lane only, on Jazzy, the distro of apt-installed labs.
test-ros: setup
	@$(ENV) && $(DOCTOR) && python -m pytest -m "(ros or distro) and not docs" --ignore=test/test_system_ros.py \
		$(PYTEST_XDIST) $(PYTEST_ARGS)

test-fast: setup setup-render setup-filament setup-realism
	@$(ENV) && python -m pytest -m "not slow and not docs" $(PYTEST_XDIST) $(PYTEST_ARGS)

lint: setup
	@$(ENV) && ruff check src test scripts && ruff format --check src test scripts && mypy

bench: setup setup-render setup-filament setup-realism
	@$(ENV) && export ROS_DOMAIN_ID=$${ROS_DOMAIN_ID:-$(DOMAIN)} && grade bench $(BENCH_ARGS)

# The documentation site into docs/_build/html (warnings are errors; scripts/build_docs.sh).
docs: setup
	@$(ENV) && bash scripts/build_docs.sh

clean:
	rm -rf .venv-jazzy .ws-jazzy .venv-kilted .ws-kilted .venv .ws .venv-render .venv-realism .vulkan
