"""`omk view`: a local, read-only page over run folders — the runs, their trends, two runs side by
side, a sample's history (omk.view.site), or the same pages written as static files."""
