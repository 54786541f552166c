"""LiDAR and 2D laser scanners: beam patterns, Embree ray casting, returns, ray drop (core)."""
