"""grade_replay: exact experiment replay, clock re-indexing and bag tools."""
