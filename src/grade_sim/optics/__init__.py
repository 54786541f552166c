"""Camera models (lens) and the remap of pinhole renders into distorted cameras (rig).

Core: numpy and OpenCV only, no engine. On grade_sim's lowest layer, beside `config`, so that the
scenario check, the engines' model builders and the sensor streams can all use it.
"""
