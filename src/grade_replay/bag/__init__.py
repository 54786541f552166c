"""grade_replay.bag: bag tools that read a rosbag2 and always write a new one."""
