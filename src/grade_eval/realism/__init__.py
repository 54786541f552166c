"""`grade bench realism`: does a pose model trained on real photographs see our people?"""
