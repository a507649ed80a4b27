"""Adapters for training frameworks; each needs its optional extra."""
