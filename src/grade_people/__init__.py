"""People: bodies, shapes, motion, retargeting and the crowd (docs/people.md, docs/crowd.md)."""
