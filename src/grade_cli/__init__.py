"""grade_cli: the `grade` command, the top layer; it imports every package and none imports it."""
