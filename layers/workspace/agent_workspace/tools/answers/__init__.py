"""What each tool's actions answer, one module per tool: the result models its outputSchema is made of."""
