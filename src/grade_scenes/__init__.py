"""SceneReplica: reproducible tabletop scenes.

Objects in stable poses on a 1 m x 1 m table, reachability of the table grid by a fixed arm,
candidate scene generation, a balanced and diverse selection, reference images and an overlay
for replicating a scene in the real world, and pose metrics (ADD/ADD-S live in grade_eval).
"""

from grade_common.lazy import lazy_exports

# What a library user needs, imported on first use: importing the package stays light.
__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "grade_scenes.generate": ("generate_scenes", "GenerateConfig"),
        "grade_scenes.select": ("select_scenes", "SelectConfig", "Selection"),
    },
)
