#!/usr/bin/env python3
"""Writes src/markdown/html-entities.json: HTML5's named character references (Python's
html.entities.html5, names with and without their semicolon), which the BeautifulSoup
re-serialization of a message with thumbnails decodes as Python's html.parser does.

Run: python3 scripts/markdown/generate-html-entities.py
"""

import html.entities
import json
import os

out = os.path.join(os.path.dirname(__file__), "..", "..", "src", "markdown", "html-entities.json")
with open(out, "w", encoding="utf-8") as f:
    json.dump(dict(sorted(html.entities.html5.items())), f, ensure_ascii=False, separators=(",", ":"))
    f.write("\n")
print(f"{len(html.entities.html5)} names")
