"""Optional bridges to other engines (DESIGN.md, "Layers"): each module is imported only when
used and needs its own extra; nothing below this package imports from it."""
