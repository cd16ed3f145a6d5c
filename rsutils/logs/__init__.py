"""Certification logs: running CERTIFY or PREDICT over a dataset into resumable TSV
logs (Cohen et al.'s format), reading them, and turning them into the papers' curves
and tables."""
