"""Pure numpy/scipy evaluation core: trajectories, association, alignment, metrics, maps."""
