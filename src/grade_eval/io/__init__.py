"""Readers and writers: TUM files, run directories, rosbag2 bags, point clouds."""
