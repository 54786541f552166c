"""grade_sim: engine backends, worlds, actors, sensors, the simulator node and recording."""
