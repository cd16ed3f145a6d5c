"""Exact oracles shared by the tests and the book: classifiers whose smoothed
probabilities are known in closed form, the Neyman–Pearson worst case of any
certificate, the radii that preceded Theorem 1, and probes inside certified regions."""
