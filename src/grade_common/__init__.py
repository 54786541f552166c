"""grade's ground floor: the run-directory and TUM formats, errors, array types, rotations,
atomic output, signal handling, image conversion and the config validator.

Imports only numpy, scipy, yaml and OpenCV; every other grade package may import it, it imports
none of them (docs/architecture.md).
"""
