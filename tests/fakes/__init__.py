"""Fake external services served over real loopback sockets for integration tests."""

from tests.fakes.llm_server import FakeLLM

__all__ = ["FakeLLM"]
