"""grade_sim: engine backends, worlds, actors, sensors, the simulator node and recording."""

from grade_common.lazy import lazy_exports

# What a library user needs, imported on first use (grade_common.lazy): importing the package
# stays light.
_EXPORTS = {
    "Scenario": "grade_sim.config.scenario",
    "load_scenario": "grade_sim.config.scenario",
    "scenario_from_mapping": "grade_sim.config.scenario",
    "Scene": "grade_sim.scene",
    "build_scene": "grade_sim.scene",
    "Simulator": "grade_sim.sim.orchestrator",
    "SimulatorSpec": "grade_sim.sim.run",
    "RunResult": "grade_sim.sim.run",
    "run_scenario": "grade_sim.sim.run",
    "SimObserver": "grade_sim.sensors.observer",
    "SensorStreams": "grade_sim.sensors.streams.suite",
    "default_scenario_path": "grade_sim.scenarios",
    "small_scenario": "grade_sim.scenarios",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
