"""grade_control: 6-DOF PID joint control from NMPC/active-SLAM setpoints."""
