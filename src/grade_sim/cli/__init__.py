"""The `grade` command line."""
