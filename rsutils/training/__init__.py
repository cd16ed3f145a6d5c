"""Base classifiers and how they are trained: datasets, models and checkpoints, the
training objectives (noise augmentation, SmoothAdv, MACER) and the training loop."""
