"""Logic of the background functions: `functions/` wraps each in Powertools, the local stack calls them as is."""
