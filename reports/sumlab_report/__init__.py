"""sumlab's report pipeline: run folders in, figures and an HTML/Markdown report out.

Modules: run_folder (reading a run folder), document (the report's structure and its HTML and
Markdown writers), figures (matplotlib conventions: colours, the zero strip, saving byte-stable SVG),
studies (one renderer per CSV name: the registry `RENDERERS`).
"""
