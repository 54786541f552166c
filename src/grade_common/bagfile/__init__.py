"""rosbag2 MCAP files written and checked by grade itself (no rclpy, no rosbags).

`writer` writes chunked MCAP with CRCs and zstd/lz4 compression, flushing every chunk so a
killed process loses at most one chunk; `scan` reads such a file record by record (also one
without footer or summary) for integrity checks and recovery; `metadata` writes the rosbag2
metadata.yaml (version 9) the way rosbag2 does.
"""
