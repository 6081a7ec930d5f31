"""certgen: frame-pacing certificates and reports (SOP-GPU-001 v1.1).

The package import is kept light on purpose: `certgen metrics` must start fast, so heavy
libraries (WeasyPrint, scipy, Jinja) are imported only by the stages that need them.
"""

__version__ = "0.2.0"
