"""Hostile input: compression bombs, hostile configs, and the config fuzz."""
