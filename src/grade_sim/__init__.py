"""grade_sim: engine backends, worlds, actors, sensors, the simulator node and recording."""

from grade_common.lazy import lazy_exports

# What a library user needs, imported on first use: importing the package stays light.
__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "grade_sim.config.scenario": ("Scenario", "load_scenario", "scenario_from_mapping"),
        "grade_sim.scene": ("Scene", "build_scene"),
        "grade_sim.actors.group": ("ActorGroup",),
        "grade_sim.actors.people_group": ("People",),
        "grade_sim.actors.flying": ("FlyingObjects",),
        "grade_sim.actors.animal_group": ("Animals",),
        "grade_sim.sim.orchestrator": ("Simulator",),
        "grade_sim.sim.run": ("SimulatorSpec", "RunResult", "run_scenario"),
        "grade_sim.sensors.observer": ("SimObserver",),
        "grade_sim.sensors.streams.suite": ("SensorStreams",),
        "grade_sim.scenarios": ("default_scenario_path", "small_scenario"),
    },
)
