"""grade_eval: trajectory (ATE/RPE, tracking time) and map (AME) evaluation."""
