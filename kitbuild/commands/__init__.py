"""One module per command, each exposing a function named after it."""
