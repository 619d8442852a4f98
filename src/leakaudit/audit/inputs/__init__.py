"""The audit's inputs: loading, checking and fingerprinting the model and the tables before any analysis runs."""
