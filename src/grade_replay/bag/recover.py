"""`grade bag recover BAG --out NEW`: a readable bag from a recording that was killed.

The source (a bag directory without metadata.yaml, a `.partial` run's bag, or a bare .mcap
file) is only read; every message of every intact chunk goes into a new bag written through
StagedOutput, with its own metadata.yaml and MCAP summary. Chunks that fail their CRC and a
record cut off at the end are reported, never copied.
"""

from __future__ import annotations

from pathlib import Path

from grade_common import ros_distro
from grade_common.bagfile.compression import Compression
from grade_common.bagfile.recover import RecoveryReport, recover_bag
from grade_replay.errors import BagCorruptError, BagNotFoundError, BagOutputExistsError


def recover(
    source: Path | str, out: Path | str, compression: Compression = Compression.ZSTD
) -> RecoveryReport:
    """Rebuild `source` into the new bag `out`.

    Raises:
        BagNotFoundError: `source` does not exist.
        BagOutputExistsError: `out` exists.
        BagCorruptError: nothing in `source` is an MCAP file grade can read.
    """
    source, out = Path(source), Path(out)
    if not source.exists():
        raise BagNotFoundError(f"{source}: bag does not exist")
    return recover_bag(
        source,
        out,
        compression=compression,
        type_hash_of=ros_distro.type_hash,
        exists_error=BagOutputExistsError,
        error=BagCorruptError,
    )
