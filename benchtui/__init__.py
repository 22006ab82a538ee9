"""benchtui: run storage and network benchmarks on many hosts and watch them side by side."""

__version__ = "0.1.0"
