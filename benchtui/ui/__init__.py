"""The Textual console: the only package that imports textual."""
