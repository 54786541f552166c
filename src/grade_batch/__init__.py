"""grade_batch: datasets at scale. `grade batch SPEC --out DIR` expands a sweep into jobs, runs
each job's pipeline (run -> noise -> replays -> exports) on a local process pool or on Ray,
keeps a resumable manifest, then builds the dataset (COCO/YOLO splits, card, eval tables)."""
