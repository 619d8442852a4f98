"""The audit's result: checks and sections, the verdict, the evidence, and the files and runs they are written to."""
