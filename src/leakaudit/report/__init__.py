"""The HTML report: rendered from an audit's typed result and its records (never trains or attacks)."""

from .html import render_report

__all__ = ["render_report"]
