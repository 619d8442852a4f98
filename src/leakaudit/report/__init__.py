"""The HTML report: built from result files only (never trains or attacks)."""

from .html import name_records, render_report, write_report

__all__ = ["render_report", "write_report", "name_records"]
