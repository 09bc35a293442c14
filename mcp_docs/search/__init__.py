"""Search: from a query to ranked documents, as small named steps over the stores passed in (see pipeline.py).

Nothing is imported here, so that the index layer may use the pure modules (document_signals, translations)
without running the pipeline's imports.
"""
