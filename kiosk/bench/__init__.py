"""Benchmarks behind `kiosk bench ...`: they print figures; targets are read off, not asserted."""
