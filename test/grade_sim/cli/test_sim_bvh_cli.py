"""`grade bvh`: mapping report and a retargeted copy that reads back."""

from __future__ import annotations

from pathlib import Path

import pytest

from grade_cli.main import main
from grade_people.bvh import parse_bvh

# Hips, one leg and one arm (Mixamo-prefixed), T-pose, two frames.
T_POSE = """HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT LeftUpLeg
  {
    OFFSET 10 0 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT LeftLeg
    {
      OFFSET 0 -45 0
      CHANNELS 3 Zrotation Xrotation Yrotation
      JOINT LeftFoot
      {
        OFFSET 0 -45 0
        CHANNELS 3 Zrotation Xrotation Yrotation
        End Site
        {
          OFFSET 0 -5 12
        }
      }
    }
  }
  JOINT mixamorig:LeftArm
  {
    OFFSET 18 50 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 28 0 0
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.033333
0 95 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
5 95 0 0 0 0 0 0 0 0 0 0 0 0 0 -90 0 0
"""


def test_grade_bvh_reports_the_mapping_and_writes_a_new_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "tpose.bvh"
    src.write_text(T_POSE)
    out = tmp_path / "retargeted.bvh"
    assert main(["bvh", str(src), "--height", "1.6", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "2 frames" in text
    assert "shoulder_l  <- mixamorig:LeftArm" in text
    assert "chest       <- (follows its parent)" in text
    assert len(parse_bvh(out.read_text()).joints) == 21
    # A second run refuses to overwrite; a missing file is an error naming it.
    assert main(["bvh", str(src), "--out", str(out)]) == 1
    assert main(["bvh", str(tmp_path / "none.bvh")]) == 1
    assert "none.bvh" in capsys.readouterr().err
