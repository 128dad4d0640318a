"""What the numbers mean side by side: the same-run relative view (relative.py), the published
comparison (compare.py), run-to-run differences (diff.py), the accelerator, crossover, offload
and battery models (models/), the studies' energy figures (power.py) and the long-message
estimate (long_message.py)."""
