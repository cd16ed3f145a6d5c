"""Base classifiers and how they are trained: models and checkpoints, the
training objectives (noise augmentation, SmoothAdv, MACER) and the training loop."""
