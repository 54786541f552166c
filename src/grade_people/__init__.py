"""People: bodies, shapes, motion, retargeting and the crowd (docs/people.md, docs/crowd.md)."""

from grade_common.lazy import lazy_exports

# What a library user needs, imported on first use (grade_common.lazy): importing the package
# stays light.
_EXPORTS = {
    "PeopleConfig": "grade_people.config",
    "PersonBody": "grade_people.config",
    "PersonMotion": "grade_people.config",
    "CrowdMode": "grade_people.config",
    "Crowd": "grade_people.crowd",
    "PersonSpec": "grade_people.people",
    "PersonTimeline": "grade_people.people",
    "random_person": "grade_people.people",
    "pose": "grade_people.motion",
    "pose_inputs": "grade_people.motion",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
