"""Offline path-traced re-rendering of recorded runs (Blender Cycles, `grade render`)."""
