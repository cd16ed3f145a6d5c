"""Certified regions as geometric objects: norm balls and super-ellipsoids.

One vocabulary of norms (``"l1"``, ``"l2"``, ``"linf"``) for every region; nothing here
imports another part of rsutils.
"""
