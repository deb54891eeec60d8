"""Benchmarks (not collected by pytest); run each as a module, see its docstring."""
