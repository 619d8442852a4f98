"""The HTML report: built from result files only (never trains or attacks)."""

from .html import render_report, write_report

__all__ = ["render_report", "write_report"]
