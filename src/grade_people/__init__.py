"""People: bodies, shapes, motion, retargeting and the crowd (docs/people.md, docs/crowd.md)."""

from grade_common.lazy import lazy_exports

# What a library user needs, imported on first use: importing the package stays light.
__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "grade_people.config": ("PeopleConfig", "PersonBody", "PersonMotion", "CrowdMode"),
        "grade_people.crowd": ("Crowd",),
        "grade_people.people": ("PersonSpec", "PersonTimeline", "random_person"),
        "grade_people.motion": ("pose", "pose_inputs"),
    },
)
