"""Offline verification of a certificate PDF (`certgen verify`, docs/verify.md)."""
