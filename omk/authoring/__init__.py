"""Writing samples: from a recorded run (`omk sample --from-run`, omk.authoring.from_run)."""
