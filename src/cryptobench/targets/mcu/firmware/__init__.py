"""The bare-metal benchmark firmware: library recipes, the build matrix, per-image plans and the
reading of what a target reports."""
