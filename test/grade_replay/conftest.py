"""grade_replay tests: pytest puts this folder on sys.path (it holds a conftest), so the tests in
bag/ import the shared `bagkit` helpers as the ones here do."""
