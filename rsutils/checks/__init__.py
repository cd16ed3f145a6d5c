"""Exact oracles shared by the tests and the book: classifiers whose smoothed
probabilities are known in closed form, noise parameters whose deployed classifier is
known in closed form (the soundness audit's case), the Neyman–Pearson worst case of any
certificate, the radii that preceded Theorem 1, probes inside certified regions, and a
linear-programming oracle for whether two super-ellipsoids meet."""
