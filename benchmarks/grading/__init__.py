"""Grading: math grading throughput against Math-Verify, and MBPP+ grading with and without the sandbox."""
