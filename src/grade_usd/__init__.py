"""USD out of grade: a recorded run as a USD stage (`grade export usd`) and its checks."""
