"""Hostile input for the tests: configs generated from the schema and mutated, and the judges they face
(the config fuzz), and gzip bombs (docs/hostile_input.md)."""
