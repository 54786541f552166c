"""grade_noise: sensor noise models, online as a node and offline on bags and files."""
