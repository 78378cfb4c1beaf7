"""The platform part of every run: lock, begin or resume, plan, land with checkpoints, check, end, log."""
