"""softswitch front end: preprocess, parse, check and lower P4_16 v1model source to ``ir``."""
