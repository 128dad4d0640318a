"""Energy: power-analyzer traces (import, segmentation at marker edges, integration), host
energy counters (RAPL, NVML), live instruments over SCPI, and power models."""
