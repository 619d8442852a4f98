"""The HTML report: rendered from an audit's typed result and its records (never trains or attacks)."""

from .html import name_records, render_report

__all__ = ["render_report", "name_records"]
