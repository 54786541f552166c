"""Isaac Sim's semantic labels on USD prims: the one convention grade writes and reads.

Isaac Sim 4.x (4.0-4.5, the `Semantics` schema of `omni.isaac.core.utils.semantics`, which
GRADE's own tools use) labels a prim with one instance of the multiple-apply API schema
`SemanticsAPI`: the attributes `semantic:<instance>:params:semanticType` (token, "class") and
`semantic:<instance>:params:semanticData` (string, the label), with the schema named in the
prim's `apiSchemas` as `SemanticsAPI:<instance>`. `add_update_semantics(prim, label)` uses the
instance name `Semantics`; grade adds a second instance, `Semantics_instance`, whose type is
"instance" and whose data is the simulator's instance id. Isaac Sim 5 moved to
`UsdSemantics.LabelsAPI` (`semantics:labels:<taxonomy>`); a reader here also accepts that.
"""

from __future__ import annotations

from typing import Any

SCHEMA = "SemanticsAPI"
CLASS_INSTANCE = "Semantics"
INSTANCE_INSTANCE = "Semantics_instance"
CLASS_TYPE = "class"
INSTANCE_TYPE = "instance"
# Isaac Sim 5's UsdSemantics labels: `semantics:labels:<taxonomy>` (token[]), taxonomy "class".
LABELS_CLASS_ATTR = "semantics:labels:class"
# An instance's attributes are `semantic:<instance>` followed by one of the two suffixes; the
# writer and both readers build and take apart the names with these, never with literals.
_PREFIX = "semantic:"
_TYPE_SUFFIX = ":params:semanticType"
_DATA_SUFFIX = ":params:semanticData"


def _attr(instance: str, suffix: str) -> str:
    return _PREFIX + instance + suffix


def apply_semantics(prim: Any, label: str, instance_id: int) -> None:
    """Label a USD prim with its class and instance id in Isaac Sim 4.x's convention."""
    from pxr import Sdf

    for instance, kind, data in (
        (CLASS_INSTANCE, CLASS_TYPE, label),
        (INSTANCE_INSTANCE, INSTANCE_TYPE, str(instance_id)),
    ):
        prim.AddAppliedSchema(f"{SCHEMA}:{instance}")
        for suffix, value_type, value in (
            (_TYPE_SUFFIX, Sdf.ValueTypeNames.Token, kind),
            (_DATA_SUFFIX, Sdf.ValueTypeNames.String, data),
        ):
            prim.CreateAttribute(_attr(instance, suffix), value_type, custom=False).Set(value)


def semantic_class(prim: Any) -> str | None:
    """The class label of a prim (Isaac Sim 4.x semantics, else Isaac Sim 5 labels), or None."""
    for attr in prim.GetAttributes():
        name = attr.GetName()
        if not (name.startswith(_PREFIX) and name.endswith(_TYPE_SUFFIX)):
            continue
        if attr.Get() != CLASS_TYPE:
            continue
        instance = name[len(_PREFIX) : -len(_TYPE_SUFFIX)]
        data = prim.GetAttribute(_attr(instance, _DATA_SUFFIX)).Get()
        if data:
            return str(data)
    labels = prim.GetAttribute(LABELS_CLASS_ATTR)
    if labels and labels.Get():
        return str(labels.Get()[0])
    return None


def semantic_instance(prim: Any) -> int | None:
    """The instance id grade wrote on a prim (`Semantics_instance`), or None."""
    attr = prim.GetAttribute(_attr(INSTANCE_INSTANCE, _DATA_SUFFIX))
    value = attr.Get() if attr else None
    return int(value) if value is not None and str(value).isdigit() else None
