"""The human's web console: static HTML, CSS and JavaScript over the REST API, served by the same app."""
