"""Reference solutions, one module per chapter topic. Lessons import them to demonstrate;
labs are checked against them."""
