"""What every layer leans on and that knows nothing of evaluations: errors, lazy loading,
the records' base, task groups, dotted paths, secrets' masking, optional extras. Imports only omk.io."""
