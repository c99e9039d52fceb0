"""What the benchmarks share: the step harness (model, clocks, memory probe, workers), checkouts, and the report that writes their tables into the Markdown."""
