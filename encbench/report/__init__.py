"""From runs to what people read: summary.json, report.md."""
