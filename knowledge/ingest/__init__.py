"""Writes to the knowledge layer, by what they ingest: the law articles of a corpus file into LLDBI (laws.py, reading
the file through corpus.py and building its points in points.py) and the DocList catalog into the Act table
(catalog.py); jsonl.py opens the files both read."""
