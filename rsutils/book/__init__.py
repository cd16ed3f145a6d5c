"""What only the book needs: run profiles, cached experiments, the chapter helper,
figures, and the papers' published numbers and released logs.

Nothing outside this package imports it; library users never need it.
"""
