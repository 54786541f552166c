"""The MuJoCo engine backend: the model builder and the runtime engine."""
