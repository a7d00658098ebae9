"""Helpers the tests share that are not tests themselves: brute-force references."""
