"""Checks run by deploy/test-image.sh against the built container image (not pytest)."""
