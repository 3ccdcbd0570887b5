"""What a run cost: time per rule and job from Snakemake's benchmarks, tokens and latency per
answering variant, and the energy and CO2 estimate."""
