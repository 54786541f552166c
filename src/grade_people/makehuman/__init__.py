"""MakeHuman bodies (people.body: makehuman): shaped base mesh, rig, skin weights, looks."""
